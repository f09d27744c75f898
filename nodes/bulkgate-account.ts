/**
 * `bulkgate-account`: one BulkGate application (its credentials, client and rate limit). The
 * editor's test-connection endpoint is registered at once; the node's code loads when the first
 * account starts.
 */
import type { NodeAPI } from 'node-red';
import { registerLazily } from './lib/lazy';
import { registerAdminEndpoints } from './lib/admin';

const register = (RED: NodeAPI): void => {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  registerLazily(RED, 'bulkgate-account', () => (require('./lib/account-node') as typeof import('./lib/account-node')).accountNode(RED) as never);
  registerAdminEndpoints(RED);
};
export default register;
