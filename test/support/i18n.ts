/**
 * The i18n of the Node-RED under test (the project's, or NODE_RED_HOME's for the version matrix),
 * with the package's built catalogs registered as Node-RED registers a node set's: its own
 * i18next (21 with the v3 JSON format on Node-RED 3.1 and 4.0, 25 with v4 from 4.1), its own
 * loader and fallbacks. Each call gets a fresh instance started in the language asked for, as
 * Node-RED starts it with `lang` in its settings.
 */
import { dirname, join } from 'node:path';
import { NODE_SET } from '../../nodes/definitions';

const home = process.env.NODE_RED_HOME ? [process.env.NODE_RED_HOME] : undefined;
/** The built catalogs: dist/nodes/locales/<lang>/<node set>.json. */
const LOCALES = join(__dirname, '..', '..', 'nodes', 'locales');
/** The namespace Node-RED gives the node set's catalog: the node set's id. */
export const NAMESPACE = `node-red-contrib-bulkgate/${NODE_SET}`;

export type Translate = (key: string, params?: Record<string, unknown>) => string;

export async function nodeRedI18n(lang: string): Promise<Translate> {
  const file = require.resolve('@node-red/util/lib/i18n', home ? { paths: home } : undefined);
  // i18next is one instance per module load: both modules loaded afresh give a runtime of their own.
  const i18next = dirname(require.resolve('i18next/package.json', { paths: [dirname(file)] }));
  for (const loaded of Object.keys(require.cache))
    if (loaded === file || loaded.startsWith(`${i18next}/`)) delete require.cache[loaded];
  const i18n = require(file) as {
    init(settings: { lang: string }): void;
    registerMessageCatalog(namespace: string, dir: string, file: string): Promise<void>;
    _: Translate;
  };
  i18n.init({ lang });
  await i18n.registerMessageCatalog(NAMESPACE, LOCALES, `${NODE_SET}.json`);
  // A node's RED._ as Node-RED's createNodeApi builds it: a key without a namespace gets its node set's.
  return (key, params) => i18n._(key.includes(':') ? key : `${NAMESPACE}:${key}`, params);
}
