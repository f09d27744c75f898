/**
 * The `bulkgate-account` node: holds the credentials (in Node-RED's credential store) and the
 * account built from its settings (nodes/account/account.ts), which it closes on redeploy.
 */
import type { Node, NodeAPI, NodeDef } from 'node-red';
import { Account, type AccountConfig, type AccountCredentials } from '../account/account';
import { localStore } from '../account/store';
import { catalogText, nodeCatalog } from '../plumbing/runtime';
import { proxySettings } from '../plumbing/settings';

/** A deployed account node: the account it runs. */
export interface AccountNode extends Node {
  account: Account;
}

/** The account node's constructor (loaded when the first account starts). */
export function accountNode(RED: NodeAPI) {
  const texts = nodeCatalog(RED, 'bulkgate-account');
  function BulkgateAccount(this: AccountNode & { credentials: AccountCredentials }, config: NodeDef & AccountConfig) {
    RED.nodes.createNode(this, config);
    const node = this;
    node.account = new Account(node.id, config, node.credentials ?? {}, {
      store: localStore((RED.settings as { userDir?: string }).userDir, (text) => RED.log.warn(`bulkgate: ${text}`)),
      proxy: () => proxySettings(RED, config.proxy),
      warn: (key, params) => node.warn(catalogText(texts, `warnings.${key}`, params)),
    });
    node.on('close', (_removed: boolean, done: () => void) => {
      node.account.close().then(done, done);
    });
  }
  return BulkgateAccount;
}
