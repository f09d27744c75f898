/** `bulkgate-otp`: one-time passwords: send a code, send it again, verify what the person typed. Its code loads when the first one starts. */
import type { NodeAPI } from 'node-red';
import { registerLazily } from './lib/lazy';

const register = (RED: NodeAPI): void =>
  registerLazily(RED, 'bulkgate-otp', () => {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { endpointNode } = require('./lib/endpoint-node') as typeof import('./lib/endpoint-node');
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const kinds = require('./lib/endpoint-kinds') as typeof import('./lib/endpoint-kinds');
    return endpointNode(RED, 'bulkgate-otp', kinds.otp) as never;
  });
export = register;
