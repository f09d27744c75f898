/** Node-RED plumbing shared by the nodes: property evaluation, status, the one failure path. */
import type { Node, NodeAPI, NodeMessage } from 'node-red';
import { GatewayError } from '../../gateway';
import { CATALOG } from './catalog';

export type Msg = NodeMessage & Record<string, unknown>;
export type Send = (msg: Msg | (Msg | Msg[] | null)[]) => void;
export type Done = (err?: Error) => void;

/** A TypedInput setting: its value and type as the flow file stores them. */
export interface TypedSetting {
  value: unknown;
  type: string | undefined;
}

/**
 * Evaluates a TypedInput against the msg. Wrapped in a Promise once, here: JSONata and async
 * context stores answer through the callback. An empty setting is "not set".
 */
export function evaluate(RED: NodeAPI, node: Node, msg: Msg, setting: TypedSetting): Promise<unknown> {
  const type = setting.type || 'str';
  if (setting.value === undefined || setting.value === null || (setting.value === '' && type !== 'date')) return Promise.resolve(undefined);
  return new Promise((resolve, reject) => {
    RED.util.evaluateNodeProperty(setting.value as string, type, node, msg, (err: Error | null, value: unknown) => {
      if (err) reject(err);
      else resolve(value);
    });
  });
}


export function catalogText(RED: NodeAPI, key: string, params?: Record<string, string | number>): string {
  return RED._(`${CATALOG}.${key}`, params);
}

export function statusText(RED: NodeAPI, key: string, params?: Record<string, string | number>): string {
  return catalogText(RED, `status.${key}`, params);
}

export function toGatewayError(error: unknown): GatewayError {
  if (error instanceof GatewayError) return error;
  const message = error instanceof Error ? error.message : String(error);
  return new GatewayError({ type: 'invalid_request', message: `The request could not be built: ${message}` });
}

/**
 * The one error path of every node: the msg gets `msg.bulkgate`, the status turns red with a
 * short reason, and `done(err)` hands the error to Catch nodes (its `code` is the type).
 */
export function fail(RED: NodeAPI, node: Node, msg: Msg, error: unknown, done: Done): void {
  const e = toGatewayError(error);
  msg.bulkgate = e.toJSON();
  const reason = catalogText(RED, `errors.${e.code}`);
  node.status({ fill: 'red', shape: 'ring', text: reason.includes('errors.') ? e.code.replace(/_/g, ' ') : reason });
  done(e);
}
