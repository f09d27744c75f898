/** A msg as the nodes handle it, and Node-RED's send and done callbacks. */
import type { NodeMessage } from 'node-red';

export type Msg = NodeMessage & Record<string, unknown>;
export type Send = (msg: Msg | (Msg | Msg[] | null)[]) => void;
export type Done = (err?: Error) => void;
