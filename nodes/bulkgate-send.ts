/** `bulkgate-promotional` (ports: accepted, rejected, summary), `-transactional` (accepted, rejected). */
import type { NodeAPI } from 'node-red';
import { registerLazily } from './plumbing/lazy';

const register = (RED: NodeAPI): void => {
  for (const kind of ['promotional', 'transactional'] as const) {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    registerLazily(RED, `bulkgate-${kind}`, () => (require('./behaviours/send-node') as typeof import('./behaviours/send-node')).sendNode(RED, kind) as never);
  }
};
export default register;
