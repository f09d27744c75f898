/** `bulkgate-transactional`: a notification to one recipient; ports: accepted, rejected. Its code loads when the first one starts. */
import type { NodeAPI } from 'node-red';
import { registerLazily } from './plumbing/lazy';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const behaviour = () => require('./behaviours/send-node') as typeof import('./behaviours/send-node');

const register = (RED: NodeAPI): void => registerLazily(RED, 'bulkgate-transactional', () => behaviour().sendNode(RED, 'transactional') as never);
export default register;
