/**
 * `bulkgate-otp`, `bulkgate-number-check`, `bulkgate-blacklist`, `bulkgate-contacts`: the gateway's
 * other endpoints, registered from one node set (nodes/definitions.ts, NODE_SETS). Their code
 * loads when the first of them starts.
 */
import type { NodeAPI } from 'node-red';
import { registerLazily } from './lib/lazy';

/** Each type's handler, by the name endpoint-kinds.ts exports it under. */
const KINDS = { 'bulkgate-otp': 'otp', 'bulkgate-number-check': 'numberCheck', 'bulkgate-blacklist': 'blacklist', 'bulkgate-contacts': 'contacts' } as const;

const register = (RED: NodeAPI): void => {
  for (const [type, kind] of Object.entries(KINDS)) {
    registerLazily(RED, type, () => {
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      const { endpointNode } = require('./lib/endpoint-node') as typeof import('./lib/endpoint-node');
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      const kinds = require('./lib/endpoint-kinds') as typeof import('./lib/endpoint-kinds');
      return endpointNode(RED, type, kinds[kind]) as never;
    });
  }
};
export = register;
