/**
 * `bulkgate-otp`, `bulkgate-number-check`, `bulkgate-blacklist`, `bulkgate-contacts`: the gateway's
 * other endpoints: one source for the four (HTML, catalog and help), joined by the build into the
 * package's node set (nodes/bulkgate.ts). Their code loads when the first of them starts.
 */
import type { NodeAPI } from 'node-red';
import { registerLazily } from './plumbing/lazy';

/** Each type's handler, by the name endpoint-kinds.ts exports it under. */
const KINDS = { 'bulkgate-otp': 'otp', 'bulkgate-number-check': 'numberCheck', 'bulkgate-blacklist': 'blacklist', 'bulkgate-contacts': 'contacts' } as const;

const register = (RED: NodeAPI): void => {
  for (const [type, kind] of Object.entries(KINDS)) {
    registerLazily(RED, type, () => {
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      const { endpointNode } = require('./behaviours/endpoint-node') as typeof import('./behaviours/endpoint-node');
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      const kinds = require('./behaviours/endpoint-kinds') as typeof import('./behaviours/endpoint-kinds');
      return endpointNode(RED, type, kinds[kind]) as never;
    });
  }
};
export default register;
