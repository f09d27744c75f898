/** `bulkgate-balance`: reads the credit; port 2 fires when it is below the threshold. Its code loads when the first one starts. */
import type { NodeAPI } from 'node-red';
import { registerLazily } from './plumbing/lazy';

const register = (RED: NodeAPI): void =>
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  registerLazily(RED, 'bulkgate-balance', () => (require('./behaviours/balance-node') as typeof import('./behaviours/balance-node')).balanceNode(RED) as never);
export default register;
