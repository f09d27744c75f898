/** Not in account-node.ts: the admin endpoints (loaded at start) use it without the account's code. */
import type { NodeAPI } from 'node-red';
import type { Account } from '../account/account';
import type { AccountNode } from './account-node';

export function accountOf(RED: NodeAPI, id: unknown): Account | null {
  if (typeof id !== 'string' || !id) return null;
  return (RED.nodes.getNode(id) as Partial<AccountNode> | null)?.account ?? null;
}
