/**
 * The `bulkgate-account` node: one BulkGate application. Holds the credentials (in Node-RED's credential
 * store), one gateway client (one connection pool), the rate limiter shared by every node that
 * uses it, and sends its outbox (nodes/account/outbox.ts) again.
 */
import type { NodeAPI, NodeDef } from 'node-red';
import {
  AbortGroup,
  baseUrlProblem,
  Circuit,
  GatewayError,
  DEFAULT_BASE_URL,
  DEFAULT_CONNECTIONS,
  DEFAULT_RETRIES,
  DEFAULT_TIMEOUT,
  GatewayClient,
  invalidRequest,
} from '../../gateway';
import { DEFAULT_OUTBOX_SIZE, deferrable, expiredError, outboxFor, type OutboxWorker } from '../account/outbox';
import { catalogText, nodeCatalog } from '../plumbing/runtime';
import { numberSetting, proxySettings, type AccountConfig, type AccountCredentials, type AccountNode, type DeferredHandler } from '../account/account';
import { RateLimiter } from '../account/rate-limit';
import { RecentSends } from '../account/recent-sends';
import { trackerFor } from '../account/tracking';

/** The account node's constructor (loaded when the first account starts). */
export function accountNode(RED: NodeAPI) {
  const texts = nodeCatalog(RED, 'bulkgate-account');
  function BulkgateAccount(this: AccountNode & { credentials: AccountCredentials }, config: NodeDef & AccountConfig) {
    RED.nodes.createNode(this, config);
    const node = this;
    const credentials = node.credentials ?? {};
    const baseUrl = (config.baseUrl || DEFAULT_BASE_URL).trim();
    const listeners = new Set<() => void>();
    const timeout = numberSetting(config.timeout, DEFAULT_TIMEOUT, 1);
    node.deployed = { baseUrl, timeout };
    node.limiter = new RateLimiter(numberSetting(config.rateLimit, 0), numberSetting(config.rateWindow, 60) * 1000, numberSetting(config.queueSize, 100), () =>
      listeners.forEach((l) => l()),
    );
    node.watch = (listener) => {
      listeners.add(listener);
      return () => listeners.delete(listener);
    };

    // Problems are reported by the nodes that use the account, on the msg that needed it.
    let problem: string | undefined = baseUrlProblem(baseUrl);
    if (!credentials.application_id) problem ??= 'the account has no application_id';
    if (!credentials.application_token) problem ??= 'the account has no application_token';
    let client: GatewayClient | undefined;
    // Built on first use: by then every config node, the http proxy one too, has started.
    const build = (): GatewayClient => {
      const proxy = proxySettings(RED, config.proxy);
      if (proxy === null)
        throw invalidRequest(
          `proxy: the http proxy node this account uses is missing; open the BulkGate account "${config.name || node.id}" and choose one (or none)`,
          { key: 'account-incomplete' },
        );
      try {
        return new GatewayClient({
          baseUrl,
          applicationId: credentials.application_id as string,
          applicationToken: credentials.application_token as string,
          applicationProduct: config.application_product || undefined,
          defaultCountry: config.country || undefined,
          timeout,
          retries: numberSetting(config.retries, DEFAULT_RETRIES),
          // Not in the panel: the first backoff delay, for flows (and tests) that need another one.
          retryDelay: numberSetting(config.retryDelay, 500),
          proxy,
        });
      } catch (error) {
        // A proxy URL undici cannot use; the message names no credential.
        throw invalidRequest(`proxy: ${proxy ? "the http proxy node's URL is not one undici can use" : (error as Error).message}`, {
          key: 'account-incomplete',
        });
      }
    };
    node.gateway = () => {
      if (problem) throw invalidRequest(`${problem}; open the BulkGate account "${config.name || node.id}" and set it`, { key: 'account-incomplete' });
      client ??= build();
      return client;
    };

    // Delivery tracking: kept by its module across redeploys, per account id.
    node.tracker = trackerFor(node.id);
    node.recent = new RecentSends();

    // The outbox: kept by this module across redeploys; this node sends it while it runs.
    node.outboxMinutes = numberSetting(config.outboxMinutes, 60, 0);
    node.circuit = new Circuit();
    node.circuit.onChange = () => listeners.forEach((l) => l());
    /** The send nodes a message leaving the outbox is handed back to, by node id. */
    const deferredTargets = new Map<string, DeferredHandler>();
    node.onDeferred = (id, handler) => {
      deferredTargets.set(id, handler);
      return () => {
        if (deferredTargets.get(id) === handler) deferredTargets.delete(id);
      };
    };
    node.outbox = outboxFor((RED.settings as { userDir?: string }).userDir, node.id, (key, params) => node.warn(catalogText(texts, `warnings.${key}`, params)));
    const unwatchOutbox = node.outbox.watch(() => listeners.forEach((l) => l()));
    const resendStop = new AbortGroup();
    const worker: OutboxWorker = {
      minutes: node.outboxMinutes,
      firstDelay: numberSetting(config.outboxDelay, 1000, 1),
      size: numberSetting(config.outboxSize, DEFAULT_OUTBOX_SIZE, 1),
      account: config.name || node.id,
      // As many as a live send has on the wire: the client's connections.
      concurrency: DEFAULT_CONNECTIONS,
      circuit: node.circuit,
      transient: (error, entry) => deferrable(error, entry.operation),
      expired: (entry) => expiredError(entry, node.outboxMinutes),
      send: async (entry, probe) => {
        const client = node.gateway();
        const prepared = client.prepareResend(entry.operation, entry);
        // A probe goes out while the circuit is open; the others wait for it, and stop when it opens.
        const circuit = probe ? undefined : node.circuit;
        if (node.limiter.enabled) await node.limiter.acquire(prepared.messages, resendStop, circuit);
        // No retries inside a round: the outbox is the retry.
        const policy = { retries: 0, circuit };
        const sending =
          entry.operation.kind === 'promotional'
            ? client.sendPromotional(prepared, resendStop, undefined, policy)
            : client.sendTransactional(prepared, resendStop, undefined, policy);
        return sending.catch((error: unknown) => {
          // It will be sent again: a failed attempt does not use up the account's rate limit.
          if (deferrable(error, entry.operation)) node.limiter.refund(prepared.messages);
          throw error;
        });
      },
      settle: (entry, msg, outcome) => {
        const handler = deferredTargets.get(entry.node);
        if (handler) return handler(msg, entry, outcome);
        // Its node was deleted: the message still went (or failed); the account says so.
        if ('result' in outcome) node.warn(catalogText(texts, 'warnings.outbox-orphan-sent', { node: entry.node }));
        else node.warn(catalogText(texts, 'warnings.outbox-orphan-failed', { node: entry.node, reason: outcome.error.message }));
      },
    };
    node.outbox.attach(worker);
    node.emptyOutbox = () =>
      node.outbox.empty(
        () =>
          new GatewayError({
            type: 'discarded',
            message: 'Not sent: removed from the outbox in the editor (the account\'s "empty" button)',
            brief: { key: 'discarded' },
          }),
      );

    node.on('close', (_removed: boolean, done: () => void) => {
      node.limiter.close('the account was closed (redeploy or shutdown)');
      resendStop.abort();
      unwatchOutbox();
      listeners.clear();
      void node.outbox
        .detach(worker)
        .then(() => client?.close())
        .then(done, done);
    });
  }

  return BulkgateAccount;
}
