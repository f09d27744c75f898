/** Node-RED plumbing shared by the nodes: property evaluation, status, the one failure path. */
import type { Node, NodeAPI, NodeStatus } from 'node-red';
import type { Done, Msg, Send } from './msg';
import { GatewayError, monotonicNow } from '../../gateway';
import type { Wording } from '../../gateway/wording';
import { causeOf, nodeEnglish, nodeInvalid } from './wording';
import { catalogKey } from '../definitions';

export type { Done, Msg, Send } from './msg';

export interface TypedSetting {
  value: unknown;
  type: string | undefined;
}

/** TypedInput types whose value may only come through a callback (JSONata, async context stores). */
const ASYNC_TYPES = new Set(['flow', 'global', 'jsonata']);

/** Whether a TypedInput is empty ("not set": read as undefined); a date setting is never empty. */
export function isEmptySetting(setting: TypedSetting): boolean {
  const { value, type } = setting;
  return value === undefined || value === null || (value === '' && type !== 'date');
}

/** Whether reading a TypedInput waits for a callback (ASYNC_TYPES), or gives its value at once (readSetting). */
export function settingWaits(setting: TypedSetting): boolean {
  return ASYNC_TYPES.has(setting.type || 'str');
}

/** A TypedInput that gives its value at once (not settingWaits), read against the msg; empty is "not set". */
export function readSetting(RED: NodeAPI, node: Node, msg: Msg, field: string, setting: TypedSetting): unknown {
  if (isEmptySetting(setting)) return undefined;
  try {
    return RED.util.evaluateNodeProperty(setting.value as string, setting.type || 'str', node, msg);
  } catch (error) {
    throw unreadable(field, setting, error);
  }
}

/** A TypedInput read against the msg (only ASYNC_TYPES wait for a callback); empty is "not set". */
export async function evaluate(
  RED: NodeAPI,
  node: Node,
  msg: Msg,
  field: string,
  setting: TypedSetting,
): Promise<unknown> {
  if (!settingWaits(setting) || isEmptySetting(setting)) return readSetting(RED, node, msg, field, setting);
  return await new Promise((resolve, reject) => {
    RED.util.evaluateNodeProperty(
      setting.value as string,
      setting.type as string,
      node,
      msg,
      (err: Error | null, value: unknown) => {
        if (err) reject(unreadable(field, setting, err));
        else resolve(value);
      },
    );
  });
}

function unreadable(field: string, setting: TypedSetting, error: unknown): GatewayError {
  return nodeInvalid('unreadable', {
    field,
    type: setting.type || 'str',
    value: String(setting.value),
    cause: (error as Error)?.message ?? String(error),
  });
}

/** A node's own texts: its section of the node set's catalog (a count picks the plural form). */
export type NodeCatalog = (key: string, params?: Record<string, string | number>) => string;

export function nodeCatalog(RED: NodeAPI, type: string): NodeCatalog {
  return (key, params) => RED._(catalogKey(type, key), params);
}

/**
 * Status shown at most this often (ms), always ending on the latest: twice a second reads as live in the editor, and
 * a burst into a hundred nodes spends two fifths of what it did at five a second on wording the totals (i18next).
 */
const STATUS_INTERVAL = 500;

/** Thousands of msgs a second spend nothing on status: `describe` (i18next) runs only when shown. */
export class StatusThrottle {
  /** On the monotonic clock: a wall clock stepped back would freeze the status for the step. */
  #last = -Infinity;
  #pending: (() => NodeStatus) | undefined;
  #timer: NodeJS.Timeout | undefined;

  constructor(private readonly node: Node) {}

  show(describe: () => NodeStatus): void {
    const now = monotonicNow();
    if (!this.#timer && now - this.#last >= STATUS_INTERVAL) {
      this.#last = now;
      this.node.status(describe());
      return;
    }
    this.#pending = describe;
    this.#timer ??= setTimeout(this.#flush, Math.max(0, STATUS_INTERVAL - (now - this.#last)));
  }

  readonly #flush = () => {
    this.#timer = undefined;
    this.#last = monotonicNow();
    if (this.#pending) this.node.status(this.#pending());
    this.#pending = undefined;
  };

  close(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
  }
}

export const NO_ACCOUNT = () => nodeInvalid('no-account', undefined, { key: 'no-account' });

/**
 * An error's sentence in the user's language: an error of the package's own by its wording, one from below (the disk,
 * the network) by what failed, through the `errors` section of the catalog.
 */
export function sentenceOf(catalog: NodeCatalog, error: unknown): string {
  const said = error instanceof GatewayError ? error.wording : causeOf(error);
  if (!said) return (error as Error).message;
  const word = (said: Wording): string => {
    const params: Record<string, string | number> = {};
    for (const [name, value] of Object.entries(said.params ?? {}))
      params[name] = typeof value === 'object' ? word(value) : value;
    // A catalog without the key (an older translation): the English.
    return wordedOr(catalog, `errors.${said.key}`, params, nodeEnglish(said));
  };
  return word(said);
}

/** A log line's parameters with each cause (an Error) worded in the user's language. */
export function wordCauses(
  catalog: NodeCatalog,
  params: Record<string, string | number | Error>,
): Record<string, string | number> {
  const out: Record<string, string | number> = {};
  for (const [name, value] of Object.entries(params))
    out[name] = value instanceof Error ? sentenceOf(catalog, value) : value;
  return out;
}

/** A text through the catalog, else (a catalog without the key) its English. */
export function wordedOr(
  catalog: NodeCatalog,
  key: string,
  params: Record<string, string | number>,
  fallback: string,
): string {
  const text = catalog(key, params);
  return text.endsWith(key) ? fallback : text;
}

/**
 * Never throws. Catch gets the GatewayError itself, its sentence in the user's language: Node-RED copies that sentence
 * (toString), its stack, its cause (3.1.10 and later) and its code (4.1 and later) into msg.error; msg.bulkgate.type
 * carries the code on every version.
 */
export function fail(catalog: NodeCatalog, status: StatusThrottle, msg: Msg, error: unknown, done: Done): void {
  try {
    const message = error instanceof Error ? error.message : String(error);
    const e = error instanceof GatewayError ? error : nodeInvalid('not-built', { cause: message });
    msg.bulkgate = e.toJSON();
    status.show(() => {
      const text = catalog(`brief.${e.brief.key}`, e.brief.params);
      return { fill: 'red', shape: 'ring', text: text.includes('brief.') ? e.code.replace(/_/g, ' ') : text };
    });
    const worded = sentenceOf(catalog, e);
    // The error itself (its stack, code, cause, wording), its message worded for this Node-RED's language;
    // a copy, so the English the standalone client would read stays on the original.
    done(
      worded === e.message
        ? e
        : Object.assign(Object.create(Object.getPrototypeOf(e) as object) as GatewayError, e, {
            message: worded,
            stack: e.stack,
          }),
    );
  } catch {
    // The failure path must never throw out of a handler.
  }
}

/**
 * The input and close handlers of a node that answers each msg with one request; closing stops the requests in flight.
 */
export function answerInputs(
  node: Node,
  catalog: NodeCatalog,
  status: StatusThrottle,
  stop: AbortController,
  handle: (msg: Msg, send: Send, done: Done) => Promise<void>,
): void {
  node.on('input', (msg: object, send: Send, done: Done) => {
    handle(msg as Msg, send, done).catch((error: unknown) => fail(catalog, status, msg as Msg, error, done));
  });
  node.on('close', () => {
    stop.abort();
    status.close();
  });
}

/** One msg per result, with msg.parts for a join node: shallow copies of one clone without the payload. */
export function sequence(
  RED: NodeAPI,
  msg: Msg,
  id: string | undefined,
  count: number,
): (payload: unknown, index: number) => Msg {
  const { payload: _payload, ...rest } = msg;
  const template = RED.util.cloneMessage(rest as Msg);
  return (payload, index) => {
    const parts: Record<string, unknown> = { id, index, count, type: 'array', len: 1 };
    if (msg.parts) parts.parts = msg.parts;
    return { ...template, payload, parts } as Msg;
  };
}

const LIST_STEP = 5000;

/** `items.map(fn)`, in steps of LIST_STEP a turn of the event loop apart (100,000 numbers hold up no other flow). */
export async function mapInSteps<T, R>(items: readonly T[], fn: (item: T, index: number) => R): Promise<R[]> {
  if (items.length <= LIST_STEP) return items.map(fn);
  const out = new Array<R>(items.length);
  for (let from = 0; from < items.length; from += LIST_STEP) {
    await new Promise((resolve) => setImmediate(resolve));
    const end = Math.min(items.length, from + LIST_STEP);
    for (let i = from; i < end; i++) out[i] = fn(items[i] as T, i);
  }
  return out;
}

/** Msgs sent in one turn of the event loop when a node emits one msg per number or recipient. */
export const EMIT_BATCH = 500;

/** Sends a node's outputs at once, or when many in batches of EMIT_BATCH a turn of the event loop apart. */
export async function sendInBatches(send: Send, outputs: (Msg | Msg[] | null)[]): Promise<void> {
  const total = outputs.reduce((sum, out) => sum + (Array.isArray(out) ? out.length : out ? 1 : 0), 0);
  if (total <= EMIT_BATCH) return send(outputs);
  for (let sent = 0; ; sent += EMIT_BATCH) {
    let start = 0;
    const batch: (Msg | Msg[] | null)[] = outputs.map((out) => {
      if (!Array.isArray(out)) return null;
      const slice = out.slice(Math.max(0, sent - start), Math.max(0, sent + EMIT_BATCH - start));
      start += out.length;
      return slice.length ? slice : null;
    });
    const last = sent + EMIT_BATCH >= start;
    // Single msgs (a summary) go with the last batch: after the msgs they sum up.
    if (last) outputs.forEach((out, port) => (batch[port] = Array.isArray(out) ? (batch[port] ?? null) : out));
    if (batch.some((b) => b)) send(batch);
    if (last) return;
    await new Promise((resolve) => setImmediate(resolve));
  }
}
