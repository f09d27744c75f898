/** Node-RED runtime for node tests: node-red-node-test-helper with this package's nodes loaded. */
import helper from 'node-red-node-test-helper';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Node } from 'node-red';
import { NODE_SET } from '../../nodes/definitions';
import type { Translate } from './i18n';

/**
 * The Node-RED under test: the project's own devDependency, or another install named by
 * NODE_RED_HOME (a folder whose node_modules holds node-red), for the version matrix.
 */
const home = process.env.NODE_RED_HOME ? [process.env.NODE_RED_HOME] : undefined;
const fromHome = (id: string) => require.resolve(id, home ? { paths: home } : undefined);
helper.init(fromHome('node-red'));

export { helper };
export const NODE_RED_VERSION: string = require(fromHome('node-red/package.json')).version;
/** Node-RED 3.1 and 4.0 build a Catch node's msg.error without the Error's code (4.1.0 added it); msg.bulkgate.type has it on every version. */
const [MAJOR = 0, MINOR = 0] = NODE_RED_VERSION.split('.').map(Number);
export const ERROR_CODE_IN_CATCH = MAJOR > 4 || (MAJOR === 4 && MINOR >= 1);

/**
 * The test helper's `RED._` answers the key itself; Node-RED's answers the text of the
 * package's en-US catalog with `__name__` filled in. The nodes get the latter here, so that tests
 * assert what a user reads (a status `invalid number`, not a key).
 */
/** The built catalog: each node's texts under its type, with the shared sections its definition names, and the shared sections at its top (TOP_SECTIONS). */
const LOCALES = join(__dirname, '..', '..', 'nodes', 'locales', 'en-US');
let catalog: Record<string, unknown> | undefined;
export function translate(key: string, params?: Record<string, unknown>): string {
  // A node module's `RED._` is namespaced to its node set's catalog: `bulkgate-promotional.status.totals`,
  // or a section at the catalog's top: `errors.no-number`.
  const match = /^(?:node-red-contrib-bulkgate\/[\w-]+:)?([\w-]+)\.(.+)$/.exec(key);
  if (!match) return key;
  const type = match[1] as string;
  catalog ??= JSON.parse(readFileSync(join(LOCALES, `${NODE_SET}.json`), 'utf8')) as Record<string, unknown>;
  if (!(type in catalog)) return key;
  const lookUp = (path: string) => {
    let value: unknown = catalog;
    for (const part of path.split('.')) value = (value as Record<string, unknown> | undefined)?.[part];
    return value;
  };
  const path = `${type}.${match[2] as string}`;
  // A text with a count: its plural form, as i18next picks it (`_one`, `_other`), before the bare
  // key the build adds for Node-RED 3.1 and 4.0 (their i18next's singular). Node-RED's own i18n with
  // the catalogs of every language: counts.test.ts.
  const plural =
    typeof params?.count === 'number'
      ? lookUp(`${path}_${new Intl.PluralRules('en-US').select(params.count)}`)
      : undefined;
  const value = plural ?? lookUp(path);
  if (typeof value !== 'string') return key;
  return value.replace(/__(\w+)__/g, (whole, name: string) =>
    params && name in params ? String(params[name]) : whole,
  );
}
type NodeModule = (RED: Record<string, unknown>) => unknown;
const withCatalog =
  (module: NodeModule, _: Translate = translate): NodeModule =>
  (RED) =>
    module(
      new Proxy(RED, { get: (target, prop, receiver) => (prop === '_' ? _ : Reflect.get(target, prop, receiver)) }),
    );

/** The package's node modules (each registration), as Node-RED loads them. */
const NODE_MODULES: NodeModule[] = [
  require('../../nodes/bulkgate-account').default,
  require('../../nodes/bulkgate-send').default,
  require('../../nodes/bulkgate-escalation').default,
  require('../../nodes/bulkgate-balance').default,
  require('../../nodes/bulkgate-events').default,
  require('../../nodes/bulkgate-endpoints').default,
];
export const joinNode = require(fromHome('@node-red/nodes/core/sequence/17-split.js'));
/** Node-RED's own nodes of the version under test (`common/20-inject.js`, `function/10-switch.js`, ...). */
export const coreNode = (file: string): unknown => require(fromHome(`@node-red/nodes/core/${file}`));
/** Node-RED's HTTP node app as the nodes see it (the helper does not serve it): tests serve it. */
export let httpNode: ((req: unknown, res: unknown) => void) | undefined;
const captureHttpNode = (RED: { httpNode: (req: unknown, res: unknown) => void }) => {
  httpNode = RED.httpNode;
};
export const ALL_NODES = [...NODE_MODULES.map((module) => withCatalog(module)), joinNode, captureHttpNode];

export type FlowNode = Record<string, unknown> & { id: string; type: string };
export type TestNode = Node & { on(event: string, listener: (...args: any[]) => void): void };

/** Everything the package showed a user during the run: msgs, statuses, warnings, errors, logs. */
export const seen: unknown[] = [];

/**
 * Loads a flow on one tab (flow context needs a tab); config nodes stay global. `translate`: the
 * nodes' `RED._` (a Node-RED's own i18n, test/support/i18n.ts) instead of the en-US catalog's.
 */
export async function load(
  nodes: FlowNode[],
  credentials: Record<string, unknown> = {},
  options: { record?: boolean; translate?: Translate } = {},
): Promise<void> {
  const flow: FlowNode[] = [
    { id: 'tab', type: 'tab', label: 'test' },
    ...nodes.map((n) => (n.type === 'bulkgate-account' ? n : { z: 'tab', ...n })),
  ];
  const modules = options.translate
    ? [...NODE_MODULES.map((module) => withCatalog(module, options.translate)), joinNode, captureHttpNode]
    : ALL_NODES;
  await helper.load(modules, flow, credentials);
  if (options.record === false) return;
  for (const n of flow) {
    const node = helper.getNode(n.id) as TestNode | null;
    if (!node) continue;
    for (const event of ['call:status', 'call:warn', 'call:error', 'call:log']) {
      node.on(event, (call: { args: unknown[] }) => seen.push(call.args.map(describe)));
    }
    if (n.type === 'helper') node.on('input', (msg: unknown) => seen.push(describe(msg)));
  }
}

export async function unload(): Promise<void> {
  await helper.unload();
}

/** Text of a value as a user could see it, errors included (their own and enumerable fields). */
export function describe(value: unknown): string {
  if (value instanceof Error)
    return JSON.stringify({ message: value.message, stack: value.stack, own: { ...value }, text: String(value) });
  try {
    return JSON.stringify(value);
  } catch {
    return String(value);
  }
}

/** Collects msgs arriving at a helper node until `count` arrived (or rejects after `ms`). */
export function collect<T = Record<string, any>>(id: string, count: number, ms = 5000): Promise<T[]> {
  const node = helper.getNode(id) as TestNode;
  const got: T[] = [];
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${id} got ${got.length} of ${count} msgs`)), ms);
    node.on('input', (msg: T) => {
      got.push(msg);
      if (got.length === count) {
        clearTimeout(timer);
        resolve(got);
      }
    });
  });
}

/** Waits for a status call on a node that matches. */
export function statusOf(
  id: string,
  match: (status: Record<string, string>) => boolean,
  ms = 5000,
): Promise<Record<string, string>> {
  const node = helper.getNode(id) as TestNode;
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no matching status on ${id}`)), ms);
    node.on('call:status', (call: { args: [Record<string, string>] }) => {
      if (match(call.args[0])) {
        clearTimeout(timer);
        resolve(call.args[0]);
      }
    });
  });
}

export function logs(): string[] {
  const spy = (helper as unknown as { log(): { args: unknown[][] } }).log();
  return spy.args.map((args) => args.map(describe).join(' '));
}
