/** `bulkgate-events`: delivery reports (output 1) and incoming messages (output 2) from the gateway's webhook. Its code loads when the first one starts. */
import type { NodeAPI } from 'node-red';
import { registerLazily } from './plumbing/lazy';

const register = (RED: NodeAPI): void =>
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  registerLazily(RED, 'bulkgate-events', () => (require('./behaviours/events-node') as typeof import('./behaviours/events-node')).eventsNode(RED) as never);
export default register;
