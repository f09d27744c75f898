/** `bulkgate-promotional` (ports: accepted, rejected, summary), `-transactional` (accepted, rejected). */
import type { NodeAPI } from 'node-red';
import { registerLazily } from './plumbing/lazy';

const register = (RED: NodeAPI): void => {
  for (const kind of ['promotional', 'transactional'] as const)
    registerLazily(RED, `bulkgate-${kind}`, () => {
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      const { sendNode } = require('./behaviours/send-node') as typeof import('./behaviours/send-node');
      return sendNode(RED, kind) as never;
    });
};
export default register;
