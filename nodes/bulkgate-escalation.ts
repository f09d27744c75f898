/**
 * `bulkgate-escalation`: an incident's chain of SMS until someone acknowledges (ports: each SMS taken, acknowledged or
 * resolved, nobody acknowledged). Its code loads when the first one starts.
 */
import type { NodeAPI } from 'node-red';
import { registerLazily } from './plumbing/lazy';

const register = (RED: NodeAPI): void =>
  registerLazily(RED, 'bulkgate-escalation', () => {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { escalationNode } = require('./behaviours/escalation-node') as typeof import('./behaviours/escalation-node');
    return escalationNode(RED) as never;
  });
export default register;
