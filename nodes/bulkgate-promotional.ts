/** `bulkgate-promotional`: a text to many recipients; ports: accepted, rejected, summary. */
import type { NodeAPI } from 'node-red';
import { registerSendNode } from './lib/send-node';

const register = (RED: NodeAPI): void => registerSendNode(RED, 'promotional');
export = register;
