/**
 * `bulkgate-otp`, `bulkgate-number-check`, `bulkgate-blacklist`, `bulkgate-contacts`: the gateway's
 * other endpoints: one source for the four (HTML, catalog and help), joined by the build into the
 * package's node set (nodes/bulkgate.ts). Their code loads when the first of them starts.
 */
import type { NodeAPI } from 'node-red';
import { DEFINITIONS } from './definitions';
import { registerLazily } from './plumbing/lazy';

const register = (RED: NodeAPI): void => {
  // Each type's handler, as its definition names it.
  for (const { type, endpoint: kind } of Object.values(DEFINITIONS)) {
    if (!kind) continue;
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
