/** `bulkgate-promotional`: a text to many recipients; ports: accepted, rejected, summary. Its code loads when the first one starts. */
import type { NodeAPI } from 'node-red';
import { registerLazily } from './lib/lazy';

const register = (RED: NodeAPI): void =>
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  registerLazily(RED, 'bulkgate-promotional', () => (require('./lib/send-node') as typeof import('./lib/send-node')).sendNode(RED, 'promotional') as never);
export default register;
