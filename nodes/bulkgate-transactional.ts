/** `bulkgate-transactional`: a notification to one recipient; ports: accepted, rejected. Its code loads when the first one starts. */
import type { NodeAPI } from 'node-red';
import { registerLazily } from './lib/lazy';

const register = (RED: NodeAPI): void =>
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  registerLazily(RED, 'bulkgate-transactional', () => (require('./lib/send-node') as typeof import('./lib/send-node')).sendNode(RED, 'transactional') as never);
export default register;
