/** The `bulkgate-account` node: the credentials and the account built from its settings, closed on redeploy. */
import type { Node, NodeAPI, NodeDef } from 'node-red';
import { Account, type AccountConfig, type AccountCredentials } from '../account/account';
import { redisStore } from '../account/redis-store';
import { localStore } from '../account/store';
import { storeUrlProblem } from '../plumbing/store-url';
import { nodeCatalog, sentenceOf, wordCauses, wordedOr } from '../plumbing/runtime';
import { numberSetting, proxySettings } from '../plumbing/settings';

export interface AccountNode extends Node {
  account: Account;
}

export function accountNode(RED: NodeAPI) {
  const texts = nodeCatalog(RED, 'bulkgate-account');
  return function BulkgateAccount(
    this: AccountNode & { credentials: AccountCredentials },
    config: NodeDef & AccountConfig,
  ) {
    RED.nodes.createNode(this, config);
    const node = this;
    const credentials = node.credentials ?? {};
    const local = localStore((RED.settings as { userDir?: string }).userDir, (text, line) =>
      RED.log.warn(`bulkgate: ${wordedOr(texts, `tracking.${line.key}`, line.params, text)}`),
    );
    const shared = sharedStore();
    node.account = new Account(node.id, config, credentials, {
      store: shared ?? local,
      claims: shared?.claims,
      incidents: shared?.incidents,
      proxy: () => proxySettings(RED, config.proxy),
      warn: (key, params) => node.warn(texts(`warnings.${key}`, wordCauses(texts, params))),
    });
    /** A Redis store when the account sets one it can use (else the account says what is wrong, on the first msg). */
    function sharedStore() {
      if (config.store !== 'redis' || storeUrlProblem(config.storeUrl) || !credentials.application_id) return undefined;
      try {
        // Not in the panel: how long an outbox claim lasts unless renewed (a copy gone this long leaves its messages to
        // the others).
        const claimMs = numberSetting(config.storeClaimSeconds, 30, 0.1) * 1000;
        return redisStore(
          {
            url: (config.storeUrl as string).trim(),
            password: credentials.storePassword || undefined,
            applicationId: credentials.application_id,
            claimMs,
          },
          local,
          {
            onState: (state, detail) => {
              // Why it cannot be reached, in the user's language (the client's words where no kind fits); else a URL or
              // a policy.
              const down = state === 'lost' || state === 'unreachable';
              const text = texts(`warnings.store-${state}`, { detail: down ? sentenceOf(texts, detail) : detail });
              if (down || state === 'eviction') node.warn(text);
              else node.log(text);
            },
          },
        );
      } catch (error) {
        node.error(sentenceOf(texts, error));
        return undefined;
      }
    }
    node.on('close', (_removed: boolean, done: () => void) => {
      // The account first (its outbox's last round may still use the store), then the store's connection.
      node.account
        .close()
        .then(() => shared?.close())
        .then(done, done);
    });
  };
}
