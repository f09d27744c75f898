/**
 * `bulkgate-events`: delivery reports (output 1) and incoming messages (output 2) from the gateway's webhook. Its code
 * loads when the first one starts.
 */
import type { NodeAPI } from 'node-red';
import { registerLazily } from './plumbing/lazy';

const register = (RED: NodeAPI): void =>
  registerLazily(RED, 'bulkgate-events', () => {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { eventsNode } = require('./behaviours/events-node') as typeof import('./behaviours/events-node');
    return eventsNode(RED) as never;
  });
export default register;
