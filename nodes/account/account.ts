/** What send and balance nodes need of a `bulkgate-account` config node. */
import type { Node, NodeAPI } from 'node-red';
import type { Circuit, GatewayClient, ProxySettings } from '../../gateway';
import type { Outbox, OutboxEntry, Outcome } from './outbox';
import type { RecentSends } from './recent-sends';
import type { Msg } from '../plumbing/runtime';
import type { RateLimiter } from './rate-limit';
import type { DeliveryTracker } from './tracking';

export interface AccountNode extends Node {
  /** The account's client; throws `invalid_request` naming what is missing in the account. */
  gateway(): GatewayClient;
  limiter: RateLimiter;
  /** The deployed address and timeout: the only ones the stored token is ever sent to. */
  deployed: { baseUrl: string; timeout: number };
  /** Nodes that use this account, to show "queued N" and "N waiting" on each. */
  watch(listener: () => void): () => void;
  /** Messages kept until the gateway takes them. */
  outbox: Outbox;
  /** Open while the gateway is found unreachable: sends given it go to the outbox, not the wire. */
  circuit: Circuit;
  /** A send node takes back its messages that leave the outbox; returns the function that stops it. */
  onDeferred(node: string, handler: DeferredHandler): () => void;
  /** Minutes a message is kept in the outbox; 0: none is (a failed send goes to Catch at once). */
  outboxMinutes: number;
  /** Empties the outbox (the editor's button): each message goes to Catch. Resolves with how many. */
  emptyOutbox(): Promise<number>;
  /** The sms_ids the account's nodes got back lately: an answer with one of them again is a copy the gateway dropped. */
  recent: RecentSends;
  /** What the account's nodes sent, for the events node's delivery tracking. */
  tracker: DeliveryTracker;
}

/** What a send node does with its message that left the outbox: out of its ports, or to Catch. */
export type DeferredHandler = (msg: Msg, entry: OutboxEntry, outcome: Outcome) => void;

export interface AccountConfig {
  name?: string;
  baseUrl?: string;
  application_product?: string;
  country?: string;
  timeout?: number | string;
  retries?: number | string;
  retryDelay?: number | string;
  rateLimit?: number | string;
  rateWindow?: number | string;
  queueSize?: number | string;
  /** The id of a core `http proxy` config node; none: the environment's proxy variables. */
  proxy?: string;
  outboxMinutes?: number | string;
  /** The most messages the outbox keeps (default 10000). */
  outboxSize?: number | string;
  /** Not in the panel: the first wait between rounds of the outbox, ms (tests use a short one). */
  outboxDelay?: number | string;
}

/** What the core `http proxy` config node holds. */
export interface HttpProxyNode {
  url?: string;
  noproxy?: string[];
  credentials?: { username?: string; password?: string };
}

/**
 * The proxy settings of a core `http proxy` node, by its id: undefined for no id (the client
 * then follows the environment's proxy variables), null when no such node is deployed.
 */
export function proxySettings(RED: NodeAPI, id: string | undefined): ProxySettings | undefined | null {
  if (!id) return undefined;
  const proxy = RED.nodes.getNode(id) as unknown as HttpProxyNode | null;
  if (!proxy) return null;
  if (!proxy.url) return undefined;
  return { url: proxy.url, noProxy: proxy.noproxy, username: proxy.credentials?.username, password: proxy.credentials?.password };
}

export interface AccountCredentials {
  application_id?: string;
  application_token?: string;
}

/** A number setting from a flow file: missing or empty takes the default (older or hand-written flows). */
export function numberSetting(value: unknown, fallback: number, min = 0): number {
  if (value === undefined || value === null || value === '') return fallback;
  const n = Number(value);
  return Number.isFinite(n) && n >= min ? n : fallback;
}
