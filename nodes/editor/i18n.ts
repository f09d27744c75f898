// Texts for what the panels build in code. A key lives in the catalog of the node whose panel shows
// it, so the first catalog that has it answers: a panel opened over another one still finds its texts.
import { DEFINITIONS, NODE_SET, TOP_SECTIONS } from '../definitions';

/** The send nodes' catalogs first: they hold the send form's texts. */
const CATALOGS = Object.values(DEFINITIONS)
  .sort((a, b) => Number(b.label === 'send') - Number(a.label === 'send'))
  .map((def) => def.type);

export function t(key: string, params?: Record<string, string | number>): string {
  // The shared sections every node reads from the catalog's top (the send form's texts among them).
  if (TOP_SECTIONS.has(key.slice(0, key.indexOf('.'))))
    return RED._(`node-red-contrib-bulkgate/${NODE_SET}:${key}`, params);
  for (const type of CATALOGS) {
    const full = `node-red-contrib-bulkgate/${NODE_SET}:${type}.${key}`;
    const text = RED._(full, params);
    // A missing key comes back as itself, with or without its namespace.
    if (text !== full && text !== `${type}.${key}`) return text;
  }
  return key;
}
