/** `bulkgate-contacts`: the address book: contacts and their opt-in consent. Its code loads when the first one starts. */
import type { NodeAPI } from 'node-red';
import { registerLazily } from './lib/lazy';

const register = (RED: NodeAPI): void =>
  registerLazily(RED, 'bulkgate-contacts', () => {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { endpointNode } = require('./lib/endpoint-node') as typeof import('./lib/endpoint-node');
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const kinds = require('./lib/endpoint-kinds') as typeof import('./lib/endpoint-kinds');
    return endpointNode(RED, 'bulkgate-contacts', kinds.contacts) as never;
  });
export = register;
