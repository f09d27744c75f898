/**
 * `bulkgate-account`: the editor's admin endpoints register at once; the node's code loads when the first account
 * starts.
 */
import type { NodeAPI } from 'node-red';
import { registerLazily } from './plumbing/lazy';
import { registerAdminEndpoints } from './behaviours/admin';

const register = (RED: NodeAPI): void => {
  registerLazily(RED, 'bulkgate-account', () => {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { accountNode } = require('./behaviours/account-node') as typeof import('./behaviours/account-node');
    return accountNode(RED) as never;
  });
  registerAdminEndpoints(RED);
};
export default register;
