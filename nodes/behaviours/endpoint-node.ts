/** The nodes of the gateway's other endpoints: the settings and the msg make a call (endpoint-kinds.ts). */
import type { Node, NodeAPI, NodeDef } from 'node-red';
import { bodyFields, invalidRequest, isAbsent, isPlainObject, splitNumbers, type EndpointName } from '../../gateway';
import { typedSettings } from '../definitions';
import {
  answerInputs,
  evaluate,
  NO_ACCOUNT,
  nodeCatalog,
  mapInSteps,
  sendInBatches,
  sequence,
  StatusThrottle,
  type Msg,
} from '../plumbing/runtime';
import { accountOf } from './deployed-account';
import { nodeInvalid } from '../plumbing/wording';
import { wording } from '../../gateway/wording';

type EndpointConfig = NodeDef & Record<string, unknown>;

export interface EndpointContext {
  node: Node;
  config: EndpointConfig;
  msg: Msg;
  /** A TypedInput setting of the node, read against the msg (undefined when empty). */
  read(field: string): Promise<unknown>;
  /** An object msg.payload's body keys, but those `panel` gives or `locked` (warned of once). */
  overrides(name: EndpointName, panel?: Record<string, unknown>, locked?: readonly string[]): Record<string, unknown>;
  call(name: EndpointName, fields: Record<string, unknown>): Promise<unknown>;
  parts(payloads: unknown[]): Promise<Msg[]>;
}

export interface EndpointOutcome {
  outputs: (Msg | Msg[] | null)[];
  status: { key: string; fill?: 'green' | 'yellow'; params?: Record<string, number> };
}

export type EndpointHandler = (ctx: EndpointContext) => Promise<EndpointOutcome>;

/**
 * Numbers as a user gives them: a string (separated by `;` or `,`), a number, an array of those or of `{number}` /
 * `{phone_number}`.
 */
export function numbersOf(value: unknown, field = 'number'): string[] {
  if (isAbsent(value)) return [];
  if (typeof value === 'number' && Number.isFinite(value)) return [String(value)];
  if (typeof value === 'string') return splitNumbers(value);
  if (Array.isArray(value)) {
    return value.flatMap((entry, i) => {
      if (typeof entry === 'string' || (typeof entry === 'number' && Number.isFinite(entry))) return [String(entry)];
      if (isPlainObject(entry) && (typeof entry.number === 'string' || typeof entry.number === 'number'))
        return [String(entry.number)];
      if (isPlainObject(entry) && (typeof entry.phone_number === 'string' || typeof entry.phone_number === 'number'))
        return [String(entry.phone_number)];
      throw invalidRequest(wording('not-phone', { field: `${field}[${i}]` }));
    });
  }
  throw nodeInvalid('not-phones', { field });
}

export function oneNumber(value: unknown, field: string): string | undefined {
  const numbers = numbersOf(value, field);
  if (numbers.length > 1) throw nodeInvalid('one-phone', { field, numbers: numbers.length });
  return numbers[0];
}

export function endpointNode(RED: NodeAPI, type: string, handle: EndpointHandler) {
  const texts = nodeCatalog(RED, type);
  const defaults = typedSettings(type);
  return function BulkgateEndpointNode(this: Node, config: EndpointConfig) {
    RED.nodes.createNode(this, config);
    const node = this;
    const account = accountOf(RED, config.account);
    const stop = new AbortController();
    const status = new StatusThrottle(node);
    const warned = new Set<string>();

    answerInputs(node, texts, status, stop, async (msg, send, done) => {
      if (!account) throw NO_ACCOUNT();
      const client = account.gateway();
      status.show(() => ({ fill: 'blue', shape: 'dot', text: texts('status.calling') }));
      const ctx: EndpointContext = {
        node,
        config,
        msg,
        read: async (field) => {
          const setting =
            config[field] === undefined
              ? defaults[field]
              : { value: config[field], type: config[`${field}Type`] as string | undefined };
          return setting ? evaluate(RED, node, msg, field, setting) : undefined;
        },
        overrides: (name, panel = {}, locked = []) => {
          const out: Record<string, unknown> = {};
          if (!isPlainObject(msg.payload)) return out;
          for (const field of bodyFields(name)) {
            if (!Object.prototype.hasOwnProperty.call(msg.payload, field)) continue;
            const set = panel[field] !== undefined && panel[field] !== '';
            if (!set && !locked.includes(field)) out[field] = msg.payload[field];
            else if (!warned.has(field)) {
              warned.add(field);
              node.warn(texts('warnings.payload-ignored', { field }));
            }
          }
          return out;
        },
        call: (name, fields) => client.call(name, fields, { signal: stop.signal }),
        parts: (payloads) => mapInSteps(payloads, sequence(RED, msg, msg._msgid, payloads.length)),
      };
      const outcome = await handle(ctx);
      status.show(() => ({
        fill: outcome.status.fill ?? 'green',
        shape: 'dot',
        text: texts(`status.${outcome.status.key}`, outcome.status.params),
      }));
      await sendInBatches(send, outcome.outputs);
      done();
    });
  };
}

/** Keeps the fields a body takes: a node's setting the chosen action does not use stays out. */
export function takenBy(name: EndpointName, fields: Record<string, unknown>): Record<string, unknown> {
  const taken = new Set(bodyFields(name));
  return Object.fromEntries(
    Object.entries(fields).filter(([key, value]) => taken.has(key) && value !== undefined && value !== ''),
  );
}
