/**
 * The account's state in Redis or Valkey, shared by several copies of Node-RED (work in progress:
 * the connection, the keys, the shared rate window and the cross-copy claim of an alert; the
 * shared outbox and tracking follow).
 *
 * The client is `@redis/client` (Redis's own, no dependencies of its own), an optional peer
 * dependency loaded only when an account sets a Redis store: a user who never does pays nothing.
 * Every decision that two copies could race on is one Lua script, so it is atomic on the server,
 * and times come from the server's clock (`TIME`), so copies with skewed clocks agree.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { RateWindow } from './store';

export { storeUrlProblem } from './store-url';

/** What the account node's settings say about the store. */
export interface StoreSettings {
  store: 'file' | 'redis';
  url?: string;
  password?: string;
}

/** The smallest client surface the store uses (so tests can tell what is sent). */
export interface RedisLike {
  eval(script: string, options: { keys: string[]; arguments: string[] }): Promise<unknown>;
  quit?(): Promise<unknown>;
  close?(): Promise<unknown>;
}

/** Keys of one BulkGate application: a hash of its id, so two accounts (both with the node id `acc`) never share one. */
export function keyPrefix(applicationId: string): string {
  return `bulkgate:${createHash('sha256').update(applicationId).digest('hex').slice(0, 16)}:`;
}

/** Loads the client only now; a missing install is an error that says which command adds it. */
export function loadRedisClient(): typeof import('@redis/client') {
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    return require('@redis/client') as typeof import('@redis/client');
  } catch {
    throw new Error('A Redis store needs the Redis client: in your Node-RED user directory run `npm install @redis/client`, then restart Node-RED');
  }
}

/**
 * The account's window, shared: a sorted set of the messages sent, scored by the server's time.
 * `reserve` answers 0 and counts the messages when they fit, else the ms until the oldest leaves.
 */
const RESERVE = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local windowMs = tonumber(ARGV[1])
local limit = tonumber(ARGV[2])
local n = tonumber(ARGV[3])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - windowMs)
local count = redis.call('ZCARD', KEYS[1])
if count + n > limit then
  local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
  local first = oldest[2] and tonumber(oldest[2]) or now
  return math.max(0, first + windowMs - now) + 1
end
for i = 1, n do redis.call('ZADD', KEYS[1], now, ARGV[4] .. ':' .. i) end
redis.call('PEXPIRE', KEYS[1], windowMs)
return 0`;

/** Gives back the newest `n` messages reserved (they never reached the gateway). */
const REFUND = `redis.call('ZPOPMAX', KEYS[1], tonumber(ARGV[1])) return 0`;

export class RedisWindow implements RateWindow {
  constructor(
    private readonly redis: RedisLike,
    private readonly key: string,
    readonly limit: number,
    readonly windowMs: number,
  ) {}

  async reserve(messages: number): Promise<number> {
    const id = randomBytes(8).toString('hex');
    return Number(await this.redis.eval(RESERVE, { keys: [this.key], arguments: [String(this.windowMs), String(this.limit), String(messages), id] }));
  }

  async refund(messages: number): Promise<void> {
    await this.redis.eval(REFUND, { keys: [this.key], arguments: [String(messages)] });
  }
}

/**
 * One alert raised by several copies at once (the same node, the same request body, within the
 * window) goes out once: the first copy to claim it sends it; another copy's claim answers
 * "copy". A repeat from the copy that holds the claim is not affected (its own storm guard, if
 * on, decides).
 */
const CLAIM = `
local holder = redis.call('GET', KEYS[1])
if not holder then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', tonumber(ARGV[2]))
  return 1
end
if holder == ARGV[1] then return 1 end
return 0`;

export const COPY_WINDOW_MS = 10_000;

export class AlertClaims {
  constructor(
    private readonly redis: RedisLike,
    private readonly prefix: string,
    /** This copy of Node-RED (a random id per process). */
    readonly copyId: string,
    readonly windowMs = COPY_WINDOW_MS,
  ) {}

  /** The key of an alert: the node and a hash of its request body without the credentials. */
  key(nodeId: string, body: string): string {
    return `${this.prefix}claim:${createHash('sha256').update(nodeId).update('\0').update(body).digest('hex').slice(0, 32)}`;
  }

  /** Whether this copy sends it (true), or another copy already does (false: a copy). */
  async claim(nodeId: string, body: string): Promise<boolean> {
    return Number(await this.redis.eval(CLAIM, { keys: [this.key(nodeId, body)], arguments: [this.copyId, String(this.windowMs)] })) === 1;
  }
}

/** A random id for this process: which copy holds a claim. */
export const COPY_ID = randomBytes(9).toString('base64url');
