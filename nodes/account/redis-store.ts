// The account's state in Redis or Valkey, shared by copies of Node-RED: each decision two copies
// could race on is one Lua script (atomic), timed by the server's `TIME` (skewed clocks agree).
// `@redis/client` is required only here, when an account's store is `redis`: an install that does
// not use it loads none of it.
import { createHash, randomBytes } from 'node:crypto';
import type { RedisClientOptions, RedisFunctions, RedisModules, RedisScripts } from '@redis/client';
import { settledWithin } from '../../gateway';
import { monotonicNow } from '../../gateway/clock';
import { fullError } from './outbox';
import { causeOf, nodeError } from '../plumbing/wording';
import { isEntry } from './outbox-journal';
import { endsUnconfirmed, rememberNewest, type AttemptAnswer, type RecordedEnd } from './outbox-log';
import type { RedisIncidents } from './escalation-redis';
import { keepLatest, keptOnce, latest } from './registry';
import { STORE_CAUSES, StoreHealth, storeFailure, type StoreState } from './store-health';
import type { AccountStore, LoggedEntry, OutboxHolder, OutboxLog, RateWindow, Reservation } from './store';
import {
  ANSWER_TIMEOUT_MS,
  scriptDefinitions,
  TimedCalls,
  timedOut,
  type ScriptName,
  type StoreCalls,
} from './store-scripts';
import type { SharedStormAnswer } from './storm';
import { DeliveryTracker, SharedTrackingState, TRACK_AGE_MS, TRACK_LIMIT, type TrackedRecord } from './tracking';

/**
 * Keys of one BulkGate application: a hash of its id, so two accounts (both with the node id `acc`)
 * never share one; in braces, Redis Cluster's hash tag, so every key of an account is in one slot.
 */
export function keyPrefix(applicationId: string): string {
  return `bulkgate:{${createHash('sha256').update(applicationId).digest('hex').slice(0, 16)}}:`;
}

const COPY_ID = randomBytes(9).toString('base64url');

/** How long connecting and the handshake may take (Test connection's wait too). */
export const CONNECT_TIMEOUT_MS = 5000;

/** The longest wait between two tries to connect again (they start at 200 ms, 200 ms more each). */
const RECONNECT_MAX_MS = 5000;
const reconnectDelay = (retries: number) => Math.min(200 * (retries + 1), RECONNECT_MAX_MS);

type Client = ReturnType<typeof import('@redis/client').createClient> &
  Record<ScriptName, (keys: string[], args: string[]) => Promise<unknown>>;

/**
 * A client of the store at `url`, not connected yet: no offline queue (a call while it is away
 * fails at once, never waits for it), RESP2 (any Redis or Valkey), the store's scripts defined.
 * Its 'error' listener is the caller's to attach before connecting: without one, a store that goes
 * away would take Node-RED down.
 */
function storeClient(
  url: string,
  password: string | undefined,
  reconnect: false | ((retries: number) => number),
): Client {
  // Required here, not imported: an install whose accounts keep their state in files loads none of it.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { createClient, defineScript } = require('@redis/client') as typeof import('@redis/client');
  // The user name (an ACL user) out of the URL, decoded, beside the password from the credentials:
  // left in the URL, the client would log in with it and no password.
  const where = new URL(url);
  const username = decodeURIComponent(where.username);
  where.username = '';
  const options: RedisClientOptions<RedisModules, RedisFunctions, RedisScripts, 2> = {
    url: where.href,
    RESP: 2,
    disableOfflineQueue: true,
    scripts: scriptDefinitions(defineScript),
    socket: { connectTimeout: CONNECT_TIMEOUT_MS, keepAlive: true, noDelay: true, reconnectStrategy: reconnect },
  };
  if (username) options.username = username;
  if (password !== undefined) options.password = password;
  return createClient(options) as unknown as Client;
}

const connectTimedOut = (ms: number) =>
  timedOut(`timeout: the store did not answer within ${ms / 1000} s of connecting`);

/**
 * A server may echo the password (an odd one, in its answer to AUTH): the reason told in states and logs never holds
 * it.
 */
function redacted(reason: string, password: string | undefined): string {
  return password ? reason.replaceAll(password, '***') : reason;
}

// A reservation's name: this copy's id and a count (random bytes: 1 % of a busy bench in syscalls).
let reservations = 0;

export class RedisWindow implements RateWindow {
  constructor(
    private readonly redis: StoreCalls,
    private readonly key: string,
    readonly limit: number,
    readonly windowMs: number,
  ) {}

  async reserveInOrder(sends: readonly number[]): Promise<Reservation> {
    const args = [String(this.windowMs), String(this.limit), `${COPY_ID}.${++reservations}`, ...sends.map(String)];
    const [passed, wait] = (await this.redis.run('reserve', [this.key], args)) as [number, number];
    return { passed: Number(passed), wait: Number(wait) };
  }

  async refund(messages: number): Promise<void> {
    await this.redis.run('refund', [this.key], [String(messages)]);
  }
}

export class AlertClaims {
  constructor(
    private readonly redis: StoreCalls,
    private readonly prefix: string,
    private readonly copyId: string,
    readonly windowMs = 10_000,
  ) {}

  /** Whether this copy sends it (false: another copy does), and the shared storm window's answer. */
  async claim(
    nodeId: string,
    body: string,
    storm?: { limit: number; windowMs: number },
  ): Promise<{ ours: boolean; storm?: SharedStormAnswer }> {
    // The key of an alert: the node and a hash of its request body without the credentials.
    const claim = `${this.prefix}claim:${createHash('sha256').update(nodeId).update('\0').update(body).digest('hex').slice(0, 32)}`;
    const args = [
      this.copyId,
      String(this.windowMs),
      ...(storm && storm.limit > 0 ? [String(storm.limit), String(storm.windowMs)] : []),
    ];
    const [ours, admitted, window, endsInMs] = (await this.redis.run(
      'claim',
      [claim, `${this.prefix}storm:${nodeId}`],
      args,
    )) as [number, number?, string?, number?];
    if (Number(ours) !== 1) return { ours: false };
    if (admitted === undefined) return { ours: true };
    return {
      ours: true,
      storm: { admitted: Number(admitted) === 1, window: String(window), endsInMs: Number(endsInMs) },
    };
  }

  /** The count every copy held in a storm window, for the notice (one copy gets it, the others 0). */
  async collectHeld(nodeId: string, window: string): Promise<number> {
    return Number(await this.redis.run('collectHeld', [`${this.prefix}storm:${nodeId}:held:${window}`], []));
  }
}

/** What the account's nodes ask of a shared store beyond the state boundary. */
export type AlertClaimer = Pick<AlertClaims, 'claim' | 'collectHeld'>;

/** The store at `url` answers (Test connection): undefined, or why not, as {@link storeFailure} tells it. */
export async function checkStore(
  url: string,
  password: string | undefined,
  timeoutMs = CONNECT_TIMEOUT_MS,
): Promise<string | undefined> {
  password ||= undefined;
  let client: Client;
  try {
    client = storeClient(url, password, false);
  } catch (error) {
    return redacted(storeFailure(error as Error), password);
  }
  let failure: Error | undefined;
  client.on('error', (error: Error) => (failure ??= error));
  // A timer of its own: a server that accepts and never finishes the handshake holds the client's connect.
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(connectTimedOut(timeoutMs)), timeoutMs);
  });
  try {
    await Promise.race([client.connect(), late]);
    return undefined;
  } catch (error) {
    return redacted(storeFailure(failure ?? (error as Error)), password);
  } finally {
    clearTimeout(timer);
    client.destroy();
  }
}

/**
 * A copy's calls to the store at `url` once it is connected, timed as the account's are (the tests and the benchmark
 * hold copies so).
 */
export async function openStoreCalls(
  url: string,
  password?: string,
  timeoutMs = ANSWER_TIMEOUT_MS,
  onHung?: (hung: boolean) => void,
): Promise<StoreCalls & { close(): void }> {
  const client = storeClient(url, password, reconnectDelay);
  client.on('error', () => undefined);
  await client.connect();
  const calls = new TimedCalls((name, keys, args) => client[name](keys, args), timeoutMs, onHung);
  return { run: (name, keys, args) => calls.run(name, keys, args), close: () => client.destroy() };
}

/** The account's state on a Redis or Valkey server; what is not shared yet stays in `local`. */
export function redisStore(
  settings: { url: string; password?: string; applicationId: string; claimMs?: number },
  local: AccountStore,
  // `unreachable` (never connected yet) is told again only when its reason changes; `lost` falls
  // back to this copy's memory; `eviction`'s detail is the `maxmemory-policy`.
  events: { onState(state: StoreState, detail: string): void },
): AccountStore & { claims: AlertClaimer; incidents(): RedisIncidents; close(): Promise<void> } {
  const password = settings.password || undefined;
  // Whether it answers, the one place that knows: the rate window, the alert claims and the account's nodes read it.
  const health = new StoreHealth(false);
  let everUp = false;
  // Closed (a redeploy): what the client says after it is not told.
  let closed = false;
  // A listener that throws must not escape into the client's reconnect loop: it would stop trying.
  const say = (state: StoreState, detail: string) => {
    try {
      events.onState(state, detail);
    } catch {
      // The listener's own failure; the store goes on.
    }
  };
  const tell = (state: StoreState, detail: string) => {
    health.tell(state, detail);
    say(state, detail);
  };
  const failed = (error: Error) => {
    const reason = redacted(storeFailure(error), password);
    if (!closed && (health.up || reason !== health.trouble?.reason))
      tell(health.up || everUp ? 'lost' : 'unreachable', reason);
  };
  const ready = (client: Client) => {
    if (closed) return;
    tell(everUp ? 'back' : 'connected', settings.url);
    // An evicting server could drop a waiting msg or a claim: told once (CONFIG refused: not).
    if (!everUp)
      client
        .sendCommand(['CONFIG', 'GET', 'maxmemory-policy'])
        .then((answer) => {
          const policy = (answer as unknown as string[])[1];
          if (policy && policy !== 'noeviction') say('eviction', policy);
        })
        .catch(() => undefined);
    everUp = true;
  };
  let client: Client | undefined;
  let handshake: NodeJS.Timeout | undefined;
  const open = () => {
    let made: Client;
    try {
      // Linear 200 ms steps to 5 s: a store on the local network is back within seconds of a restart
      // and a reconnect costs the gateway nothing; the kept alerts wait for it.
      made = storeClient(settings.url, password, reconnectDelay);
    } catch (error) {
      // A URL past storeUrl's check that the client cannot take: told, never thrown at the account.
      failed(error as Error);
      return;
    }
    client = made;
    // Always listened to: an 'error' nobody hears would take Node-RED down.
    made.on('error', (error: Error) => {
      if (made === client) failed(error);
    });
    // Connected, then silent in the handshake: the client would wait for it forever; a new one tries again.
    made.on('connect', () => {
      clearTimeout(handshake);
      handshake = setTimeout(() => {
        if (made !== client || made.isReady || closed) return;
        failed(connectTimedOut(CONNECT_TIMEOUT_MS));
        made.destroy();
        open();
      }, CONNECT_TIMEOUT_MS).unref();
    });
    made.on('ready', () => {
      clearTimeout(handshake);
      if (made === client) ready(made);
    });
    made.connect().catch(() => undefined);
  };
  open();
  // Connected but silent: lost after one answer's time (memory serves); an answer brings it back.
  const redis = new TimedCalls(
    (name, keys, args) => (client ? client[name](keys, args) : Promise.reject(new Error('The store is not connected'))),
    ANSWER_TIMEOUT_MS,
    (hung) => {
      if (hung && health.up)
        tell(
          'lost',
          `${STORE_CAUSES['no-answer']}: the store did not answer within ${ANSWER_TIMEOUT_MS / 1000} s (ETIMEDOUT)`,
        );
      else if (!hung && !health.up && client?.isReady) tell('back', settings.url);
    },
  );
  const prefix = keyPrefix(settings.applicationId);
  const claims = new AlertClaims(redis, prefix, COPY_ID);
  // The outbox log and the tracker outlive redeploys: calls go through the running account's client.
  keepLatest('store-client', prefix, redis);
  const running = () => latest<StoreCalls>('store-client', prefix) as StoreCalls;
  return {
    outboxLog: () =>
      keptOnce('shared-outbox-log', prefix, () => new RedisOutboxLog(running, prefix, COPY_ID, settings.claimMs)),
    tracker: () =>
      keptOnce(
        'shared-tracker',
        prefix,
        () => new DeliveryTracker(new SharedTrackingState(new SharedTracking(running, prefix))),
      ),
    // While Redis does not answer, this copy decides alone (its own window and storm guard), never stopping a send.
    rateWindow: (accountId, limit, windowMs) => {
      const shared = new RedisWindow(redis, `${prefix}window`, limit, windowMs);
      const own = local.rateWindow(accountId, limit, windowMs);
      return {
        reserveInOrder: (sends, now) =>
          health.up
            ? shared.reserveInOrder(sends).catch(() => own.reserveInOrder(sends, now))
            : own.reserveInOrder(sends, now),
        refund: (messages) =>
          health.up ? shared.refund(messages).catch(() => own.refund(messages)) : own.refund(messages),
      };
    },
    // Made when an escalation node first asks: an account without one never looks.
    incidents: () =>
      keptOnce('shared-incidents', prefix, () => {
        // Loaded then, not with the store: a send runs none of the escalation's code.
        // eslint-disable-next-line @typescript-eslint/no-require-imports
        const { RedisIncidents } = require('./escalation-redis') as typeof import('./escalation-redis');
        return new RedisIncidents(running, prefix, COPY_ID, settings.claimMs);
      }),
    claims: {
      claim: (nodeId, body, storm) =>
        health.up ? claims.claim(nodeId, body, storm).catch(() => ({ ours: true })) : Promise.resolve({ ours: true }),
      collectHeld: (nodeId, window) => claims.collectHeld(nodeId, window),
    },
    health,
    close: async () => {
      health.close();
      closed = true;
      clearTimeout(handshake);
      const last = client;
      if (!last) return;
      // A store that never answers would hold a graceful close, and the redeploy, forever.
      if (last.isReady) await settledWithin([last.close()], ANSWER_TIMEOUT_MS);
      if (last.isOpen) last.destroy();
    },
  };
}

export class SharedTracking {
  constructor(
    private readonly client: () => StoreCalls,
    private readonly prefix: string,
    readonly limit = TRACK_LIMIT,
    readonly ageMs = TRACK_AGE_MS,
  ) {}

  record(record: TrackedRecord): Promise<unknown> {
    // The keys are built on the server from the fields given beside the JSON (not decoded there), under the prefix.
    // Its times in the store are the server's (every copy's look for overdue sends reads them): this copy gives a
    // duration, how far from now its time counts.
    const { smsId, number, countsFrom } = record;
    const args = [
      JSON.stringify(record),
      String(this.ageMs),
      String(this.limit),
      smsId,
      number,
      String(Math.round(countsFrom - Date.now())),
    ];
    return this.client().run('record', [`${this.prefix}sent`, `${this.prefix}waiting`, this.prefix], args);
  }

  async lookup(smsId: string): Promise<TrackedRecord | undefined> {
    const text = (await this.client().run('get', [`${this.prefix}sent:${smsId}`], [])) as string | null;
    return text ? (JSON.parse(text) as TrackedRecord) : undefined;
  }

  async lastTo(number: string): Promise<TrackedRecord | undefined> {
    const smsId = (await this.client().run('get', [`${this.prefix}to:${number}`], [])) as string | null;
    return smsId ? this.lookup(smsId) : undefined;
  }

  /** A final report came (at any copy): no copy fires output 3 for it. */
  markFinal(smsId: string): Promise<unknown> {
    return this.client().run(
      'markFinal',
      [`${this.prefix}final:${smsId}`, `${this.prefix}waiting`],
      [String(this.ageMs), smsId],
    );
  }

  /** Whether output 3 fires here: no final report came at any copy, and no other copy fired it. */
  async claimLate(smsId: string): Promise<boolean> {
    const keys = [`${this.prefix}final:${smsId}`, `${this.prefix}late:${smsId}`, `${this.prefix}waiting`];
    return Number(await this.client().run('claimLate', keys, [String(this.ageMs), smsId])) === 1;
  }

  /** What a copy that stopped left unwatched, at most 100 at a time, with output 3 claimed for this copy. */
  async overdue(timeoutMs: number, graceMs: number): Promise<TrackedRecord[]> {
    const args = [String(timeoutMs + graceMs), String(this.ageMs), '100'];
    const answer = (await this.client().run('overdue', [`${this.prefix}waiting`, this.prefix], args)) as string[];
    return answer.map((text) => JSON.parse(text) as TrackedRecord);
  }
}

/**
 * Each entry claimed by one copy at a time, renewed while it holds it; one whose claim lapsed (its
 * copy is gone) is adopted. A copy sends an entry only under a lease: a claim it set or renewed less
 * than the claim time (less a margin) ago by its own monotonic clock, checked again and the attempt
 * recorded by one script; so a copy that cannot renew stops sending, and the one that adopts an
 * entry knows whether another copy's attempt had no answer.
 */
export class RedisOutboxLog implements OutboxLog {
  readonly where = 'the shared store';
  readonly adoptEveryMs: number;
  /** How long an entry whose claim lapsed waits before a copy adopts it (below). */
  readonly graceMs: number;
  /** A keep waits for nothing: the store refuses it when full, or fails. */
  readonly writable = true;
  #holder: OutboxHolder | undefined;
  #adoptTimer: NodeJS.Timeout | undefined;
  // Ids the store may hold though this copy is done with them (a failed keep may run there late):
  // ended at the next look, before the claim lapses and another copy sends it.
  readonly #unsettled = new Set<string>();
  /**
   * Dones the store has not recorded yet, tried again until it does: the msg waits for its done (else a copy gone
   * before it would leave the entry to another, whose end would be a second).
   */
  readonly #pending = new Map<string, { handOn: (ours: boolean) => void; how?: string }>();
  #retryTimer: NodeJS.Timeout | undefined;
  #retrying: Promise<void> | undefined;
  /** When each claim this copy holds was last set or renewed: the request's start, on the monotonic clock. */
  readonly #leasedAt = new Map<string, number>();
  /**
   * This copy's attempts with no answer yet, when each went (monotonic): a store that lost their record (restored from
   * an older snapshot, flushed) has it again at the next look, so a copy that adopts one knows the gateway may have it.
   */
  readonly #unanswered = new Map<string, number>();
  /**
   * The ids this copy ended, the newest (as many as the outbox holds): a store rolled back to an older snapshot brings
   * them back, and they are ended again, never adopted.
   */
  readonly #ended = new Set<string>();
  /**
   * Ended here (or adopted so) and their msg has not left yet: their lines stay in the store under this copy's claim,
   * renewed as a waiting entry's.
   */
  readonly #handing = new Set<string>();
  /** Their msg left: the store hears so with the next flush (a crash before it hands the msg on again, marked). */
  readonly #emitted = new Set<string>();
  #emitTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly client: () => StoreCalls,
    private readonly prefix: string,
    private readonly copyId: string,
    /** How long a claim lasts unless renewed: a copy gone for this long leaves its entries to the others. */
    private readonly claimMs = 30_000,
    graceMs?: number,
  ) {
    this.adoptEveryMs = Math.max(100, Math.floor(claimMs / 3));
    // Long enough for every living copy to look once after its connection came back (the slowest
    // reconnects after RECONNECT_MAX_MS): it takes back what it holds, ends again what it ended.
    this.graceMs = graceMs ?? RECONNECT_MAX_MS + 2 * this.adoptEveryMs;
  }

  open(holder: OutboxHolder): void {
    this.#holder = holder;
  }

  async whenWritable(): Promise<void> {}

  spent(): void {}

  // Not a call of its own per msg: the marks go together, a fifth of a second later (or at the next look).
  emitted(id: string): void {
    if (!this.#handing.has(id)) return;
    this.#emitted.add(id);
    if (this.#emitTimer) return;
    this.#emitTimer = setTimeout(() => {
      this.#emitTimer = undefined;
      void this.flushEmitted();
    }, 200);
    this.#emitTimer.unref?.();
  }

  /** The store hears which msgs left: their lines go (one that fails goes again at the next look). */
  async flushEmitted(): Promise<void> {
    const ids = [...this.#emitted];
    if (!ids.length) return;
    try {
      await this.client().run('emitted', this.#keys(), [this.copyId, ...ids]);
    } catch {
      return;
    }
    for (const id of ids) {
      this.#emitted.delete(id);
      this.#handing.delete(id);
    }
  }

  attach(): void {
    clearInterval(this.#adoptTimer);
    this.#adoptTimer = setInterval(() => void this.#look(), this.adoptEveryMs);
    this.#adoptTimer.unref?.();
  }

  detach(): void {
    clearInterval(this.#adoptTimer);
    this.#adoptTimer = undefined;
    // A redeploy does not wait for a store that is away: the msgs go on to the next attached account,
    // and their dones are still tried.
    for (const [id, pending] of this.#pending) {
      pending.handOn(true);
      this.#pending.set(id, { ...pending, handOn: () => undefined });
    }
  }

  /**
   * Ends again what failed, renews its claims, writes back what the store lost (a flush, an eviction), lets go what
   * another copy took, adopts orphans.
   */
  async #look(): Promise<void> {
    const holder = this.#holder;
    if (!holder || !this.#adoptTimer) return;
    try {
      await this.#retry();
      await this.flushEmitted();
      const live = new Map(holder.held().map((kept) => [kept.id, kept.line]));
      const handing = [...this.#handing].filter((id) => !live.has(id));
      const renewed = await this.renew([...live.keys(), ...handing]);
      // One whose msg has not left that another copy took (this one looked dead) is that copy's to hand on.
      for (const id of renewed.taken) this.#handing.delete(id);
      const lost = renewed.lost.filter((id) => live.has(id));
      const taken = renewed.taken.filter((id) => live.has(id));
      if (taken.length) holder.lost(taken);
      // Not one that ended meanwhile: its done went after this renew.
      const ended = new Set(live.keys());
      for (const { id } of holder.held()) ended.delete(id);
      const back = lost.filter((id) => live.has(id) && !ended.has(id)).map((id) => live.get(id) as string);
      if (back.length) {
        holder.warn('store-entries-lost', { count: back.length });
        const size = holder.size();
        // One that cannot be written back now is found lost again at the next look.
        await Promise.all(back.map((line) => this.keep(line, size).catch(() => undefined)));
      }
      const found = await this.adoptable((id) => live.has(id));
      if (found.length) holder.adopt(found);
    } catch {
      // The store does not answer: the next look may.
    }
  }

  /** The ids, the outbox's prefix (each script builds its other keys from it). */
  #keys(): string[] {
    return [`${this.prefix}outbox`, `${this.prefix}outbox:`];
  }

  async keep(line: string, size: number): Promise<void> {
    const entry = JSON.parse(line) as { id: string; since: number };
    // Placed by the server's time less its age (a duration of this copy's: a msg that waited, a line written back).
    const ageMs = Math.max(0, Math.round(Date.now() - entry.since));
    // From the request's start, before its answer: a round may reach the entry meanwhile, and its
    // attempt, sent after the keep on the one connection, runs after it at the server (or fails with it).
    this.#leasedAt.set(entry.id, monotonicNow());
    let full: unknown;
    try {
      full = await this.client().run('keep', this.#keys(), [
        entry.id,
        line,
        this.copyId,
        String(this.claimMs),
        String(size),
        String(ageMs),
      ]);
    } catch (error) {
      this.#leasedAt.delete(entry.id);
      this.#unsettled.add(entry.id);
      throw nodeError({
        type: 'store_unavailable',
        key: 'store-unavailable',
        params: { cause: causeOf(error) },
        brief: { key: 'store-unavailable' },
      });
    }
    // The bound counts every copy's waiting messages.
    if (Number(full) === 1) {
      this.#leasedAt.delete(entry.id);
      throw fullError(size);
    }
  }

  /** Before a request: under this copy's lease, checked and recorded in the store at once. */
  async attempt(id: string, dropsCopies: boolean): Promise<AttemptAnswer> {
    const start = monotonicNow();
    const since = this.#leasedAt.get(id);
    // Its claim may have lapsed at the server already (a fifth of it is left for the clocks' rates and the way there).
    if (since === undefined || start - since >= this.claimMs * 0.8) return 'wait';
    let answer: unknown[];
    try {
      answer = (await this.client().run('attempt', this.#keys(), [id, this.copyId, String(this.claimMs)])) as unknown[];
    } catch {
      return 'wait';
    }
    const [status, age] = answer.map(Number);
    if (status === 0) {
      this.#leasedAt.delete(id);
      this.#unanswered.delete(id);
      return 'gone';
    }
    // The store lost it: the next look writes it back.
    if (status !== 2) return 'wait';
    this.#leasedAt.set(id, start);
    if (age !== undefined && endsUnconfirmed(dropsCopies, age)) return 'unconfirmed';
    // The first that may have reached the gateway counts (the store keeps it too): an earlier one without an answer that
    // it did not (a timeout, no `back`) is not replaced by the next.
    if (!this.#unanswered.has(id)) this.#unanswered.set(id, start);
    return 'go';
  }

  // Not waited for: one that fails leaves the record, and the entry counts as possibly at the gateway.
  back(id: string): void {
    this.#unanswered.delete(id);
    void this.client()
      .run('back', this.#keys(), [id, this.copyId])
      .catch(() => undefined);
  }

  async done(id: string, _line?: string, end?: RecordedEnd): Promise<boolean> {
    this.#leasedAt.delete(id);
    this.#unanswered.delete(id);
    const how = end && JSON.stringify(end);
    try {
      return await this.#done(id, false, how);
    } catch {
      return new Promise<boolean>((resolve) => {
        this.#pending.set(id, { handOn: resolve, how });
        this.#retrySoon();
      });
    }
  }

  /**
   * `certain`: this copy ended it (a keep that failed, or ended before a rollback), whoever holds it
   * now. `how` it ended (JSON): kept in the store until its msg left, for a copy that adopts it if this one dies first.
   */
  async #done(id: string, certain: boolean, how?: string): Promise<boolean> {
    const args = [id, this.copyId, certain ? '1' : '0', String(this.claimMs), ...(how ? [how] : [])];
    const ours = Number(await this.client().run('done', this.#keys(), args)) === 1;
    this.#unsettled.delete(id);
    if (ours) this.#remember(id);
    if (ours && how) this.#handing.add(id);
    return ours;
  }

  #remember(id: string): void {
    rememberNewest(this.#ended, id, this.#holder?.size() ?? 10_000);
  }

  #retrySoon(): void {
    if (this.#retryTimer) return;
    this.#retryTimer = setTimeout(() => {
      this.#retryTimer = undefined;
      void this.#retry().finally(() => {
        if (this.#pending.size || this.#unsettled.size) this.#retrySoon();
      });
    }, 250);
    this.#retryTimer.unref?.();
  }

  /** The dones that failed, again; not twice at once. */
  #retry(): Promise<void> {
    this.#retrying ??= this.#retryAll().finally(() => (this.#retrying = undefined));
    return this.#retrying;
  }

  async #retryAll(): Promise<void> {
    try {
      for (const [id, { handOn, how }] of [...this.#pending]) {
        const ours = await this.#done(id, false, how);
        this.#pending.delete(id);
        handOn(ours);
      }
      for (const id of [...this.#unsettled]) await this.#done(id, true);
    } catch {
      // The store does not answer yet: the next try.
    }
  }

  /**
   * Entries whose claim lapsed and stayed so for the grace, now this copy's; those it had ended are ended again
   * instead.
   */
  async adoptable(known: (id: string) => boolean): Promise<LoggedEntry[]> {
    const start = monotonicNow();
    // At most 1,000 entries and 4 MB of lines (a first of any size): one look stays short for the server.
    const args = [this.copyId, String(this.claimMs), '1000', String(4 * 1024 * 1024), String(this.graceMs)];
    const [flat, orphans, handing = []] = (await this.client().run('adopt', this.#keys(), args)) as [
      unknown[],
      unknown[],
      unknown[]?,
    ];
    // Back after a rollback (a store restored from an older snapshot): ended here before, so ended
    // again (not one whose msg has not left here yet: its line waits for that).
    const again = orphans.map(String).filter((id) => this.#ended.has(id) && !this.#handing.has(id));
    const found: LoggedEntry[] = [];
    for (let i = 0; i + 3 < flat.length; i += 4) {
      const id = String(flat[i]);
      const line = String(flat[i + 1]);
      if (this.#ended.has(id)) again.push(id);
      if (known(id) || this.#unsettled.has(id) || this.#ended.has(id)) continue;
      try {
        const entry = JSON.parse(line) as Record<string, unknown>;
        if (!isEntry(entry)) continue;
        // Its age by the server's clock: the copy that kept it may run another time. The deadline moves with it (a
        // duration from `since`).
        const shift = Date.now() - Number(flat[i + 2]) - entry.since;
        entry.since += shift;
        if (typeof entry.deadline === 'number') entry.deadline += shift;
        const attemptAge = Number(flat[i + 3]);
        this.#leasedAt.set(id, start);
        found.push({ entry, line, ...(attemptAge >= 0 ? { attempted: true, attemptAgeMs: attemptAge } : {}) });
      } catch {
        // A damaged entry is skipped.
      }
    }
    // Ended by a copy that died before its msg left: handed on here, once.
    for (let i = 0; i + 1 < handing.length; i += 2) {
      const id = String(handing[i]);
      const text = String(handing[i + 1]);
      if (this.#handing.has(id)) continue;
      this.#handing.add(id);
      // Its msg left here before a rollback brought it back: only its line goes.
      if (this.#ended.has(id)) {
        this.#emitted.add(id);
        continue;
      }
      try {
        const cut = text.indexOf('\n');
        const ended = JSON.parse(text.slice(0, cut)) as RecordedEnd;
        const line = text.slice(cut + 1);
        const entry = JSON.parse(line) as Record<string, unknown>;
        if (!isEntry(entry)) throw new Error('not an entry');
        this.#remember(id);
        found.push({ entry, line, ended });
      } catch {
        // A damaged line is skipped, and goes.
        this.#emitted.add(id);
      }
    }
    await Promise.all(again.map((id) => this.#done(id, true).catch(() => undefined)));
    return found;
  }

  /**
   * Renews its claims on `ids` (taking back those that lapsed while no other copy took them): the ids the store lost,
   * and those another copy took or ended.
   */
  async renew(ids: string[]): Promise<{ lost: string[]; taken: string[] }> {
    // One this copy holds again (written back after a failed keep) is not to be ended.
    for (const id of ids) this.#unsettled.delete(id);
    if (!ids.length) return { lost: [], taken: [] };
    const start = monotonicNow();
    // One on the wire goes with its attempt's age: where the store lost that record, the renew writes it again.
    const args = ids.map((id) => {
      const at = this.#unanswered.get(id);
      return at === undefined ? id : `${id} ${Math.max(0, Math.round(start - at))}`;
    });
    const [lost, taken] = (
      (await this.client().run('renew', this.#keys(), [String(this.claimMs), this.copyId, ...args])) as [
        unknown[],
        unknown[],
      ]
    ).map((list) => list.map(String)) as [string[], string[]];
    const gone = new Set([...lost, ...taken]);
    for (const id of ids) if (!gone.has(id)) this.#leasedAt.set(id, start);
    for (const id of taken) {
      this.#leasedAt.delete(id);
      this.#unanswered.delete(id);
    }
    return { lost, taken };
  }
}
