/** `bulkgate-transactional`: a notification to one recipient; ports: accepted, rejected. */
import type { NodeAPI } from 'node-red';
import { registerSendNode } from './lib/send-node';

const register = (RED: NodeAPI): void => registerSendNode(RED, 'transactional');
export = register;
