/**
 * `bulkgate-balance`: reads the credit; port 2 fires when it is below the threshold. Its code loads when the first one
 * starts.
 */
import type { NodeAPI } from 'node-red';
import { registerLazily } from './plumbing/lazy';

const register = (RED: NodeAPI): void =>
  registerLazily(RED, 'bulkgate-balance', () => {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { balanceNode } = require('./behaviours/balance-node') as typeof import('./behaviours/balance-node');
    return balanceNode(RED) as never;
  });
export default register;
