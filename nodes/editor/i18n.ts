// Texts for what the panels build in code. A key lives in the catalog of the node whose panel shows
// it, so the first catalog that has it answers: a panel opened over another one still finds its texts.
import type { Wording } from '../../gateway/wording';
import { DEFINITIONS, NODE_SET, TOP_SECTIONS } from '../definitions';

/** The send nodes' catalogs first: they hold the send form's texts. */
const CATALOGS = Object.values(DEFINITIONS)
  .sort((a, b) => Number(b.label === 'send') - Number(a.label === 'send'))
  .map((def) => def.type);

export function t(key: string, params?: Record<string, string | number>): string {
  // The shared sections every node reads from the catalog's top (the send form's texts among them).
  if (TOP_SECTIONS.has(key.slice(0, key.indexOf('.')))) {
    const full = `node-red-contrib-bulkgate/${NODE_SET}:${key}`;
    const text = RED._(full, params);
    return text === full ? key : text;
  }
  for (const type of CATALOGS) {
    const full = `node-red-contrib-bulkgate/${NODE_SET}:${type}.${key}`;
    const text = RED._(full, params);
    // A missing key comes back as itself, with or without its namespace.
    if (text !== full && text !== `${type}.${key}`) return text;
  }
  return key;
}

/**
 * A sentence an admin endpoint answers as a wording (a key of the catalogs' `errors`, its parameters,
 * a parameter a wording too) in the editor's language; its English when a catalog lacks a key.
 */
export function worded(said: Wording | undefined, english: string): string {
  if (!said) return english;
  let missing = false;
  const word = (part: Wording): string => {
    const params: Record<string, string | number> = {};
    for (const [name, value] of Object.entries(part.params ?? {}))
      params[name] = typeof value === 'object' ? word(value) : value;
    const key = `errors.${part.key}`;
    const text = t(key, params);
    if (text === key) missing = true;
    return text;
  };
  const text = word(said);
  return missing ? english : text;
}
