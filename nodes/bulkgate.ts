/** The node set: each type from its own module (`export default`: no CommonJS wrappers). */
import type { NodeAPI } from 'node-red';
import account from './bulkgate-account';
import promotional from './bulkgate-promotional';
import transactional from './bulkgate-transactional';
import balance from './bulkgate-balance';
import events from './bulkgate-events';
import endpoints from './bulkgate-endpoints';

const register = (RED: NodeAPI): void => {
  for (const registerTypes of [account, promotional, transactional, balance, events, endpoints]) registerTypes(RED);
};
export = register;
