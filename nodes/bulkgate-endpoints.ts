/**
 * `bulkgate-otp`, `-number-check`, `-blacklist`, `-contacts`: the gateway's other endpoints. Their code loads when the
 * first of them starts.
 */
import type { NodeAPI } from 'node-red';
import { DEFINITIONS } from './definitions';
import { registerLazily } from './plumbing/lazy';

const register = (RED: NodeAPI): void => {
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
