/** `bulkgate-events`: delivery reports (output 1) and incoming messages (output 2) from the gateway's webhook. Its code loads when the first one starts. */
import type { NodeAPI } from 'node-red';
import { registerLazily } from './lib/lazy';

const register = (RED: NodeAPI): void =>
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  registerLazily(RED, 'bulkgate-events', () => (require('./lib/events-node') as typeof import('./lib/events-node')).eventsNode(RED) as never);
export default register;
