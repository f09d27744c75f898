/** The node set: each registration its own module (`export default`: no CommonJS wrappers). */
import type { NodeAPI } from 'node-red';
import account from './bulkgate-account';
import send from './bulkgate-send';
import balance from './bulkgate-balance';
import events from './bulkgate-events';
import endpoints from './bulkgate-endpoints';
import escalation from './bulkgate-escalation';

const register = (RED: NodeAPI): void => {
  for (const registerTypes of [account, send, balance, events, endpoints, escalation]) registerTypes(RED);
};
export = register;
