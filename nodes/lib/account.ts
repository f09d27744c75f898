/** What send and balance nodes need of a `bulkgate-account` config node. */
import type { Node } from 'node-red';
import type { GatewayClient } from '../../gateway';
import type { RateLimiter } from './rate-limit';

export interface AccountNode extends Node {
  /** The account's client; throws `invalid_request` naming what is missing in the account. */
  gateway(): GatewayClient;
  limiter: RateLimiter;
  /** The deployed address and timeout: the only ones the stored token is ever sent to. */
  deployed: { baseUrl: string; timeout: number };
  /** Nodes that use this account, to show "queued N" on each. */
  watch(listener: () => void): () => void;
}

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
