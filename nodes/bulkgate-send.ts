/** `bulkgate-promotional` (ports: accepted, rejected, summary), `-transactional` (accepted, rejected). */
import type { NodeAPI } from 'node-red';
import { registerLazily } from './plumbing/lazy';

function load(RED: NodeAPI, kind: 'promotional' | 'transactional'): never {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { sendNode } = require('./behaviours/send-node') as typeof import('./behaviours/send-node');
  return sendNode(RED, kind) as never;
}

const register = (RED: NodeAPI): void => {
  for (const kind of ['promotional', 'transactional'] as const)
    registerLazily(RED, `bulkgate-${kind}`, () => load(RED, kind));
};
export default register;
