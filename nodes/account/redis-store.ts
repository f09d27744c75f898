// The account's state in Redis or Valkey, shared by copies of Node-RED: each decision two copies
// could race on is one Lua script (atomic), timed by the server's `TIME` (skewed clocks agree).
import { createHash, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { settledWithin } from '../../gateway';
import { fullError } from './outbox';
import { nodeError } from '../plumbing/wording';
import { isEntry } from './outbox-journal';
import { keepLatest, keptOnce, latest } from './registry';
import { STORE_CAUSES, StoreHealth, storeFailure, type StoreState } from './store-health';
import type { AccountStore, LoggedEntry, OutboxHolder, OutboxLog, RateWindow, Reservation } from './store';
import { CONNECT_TIMEOUT_MS, openConnection, RedisConnection } from './redis-connection';
import { BATCH_TIMEOUT_MS, ScriptBatch, type RedisLike } from './script-batch';
import type { SharedStormAnswer } from './storm';
import { DeliveryTracker, SharedTrackingState, TRACK_AGE_MS, TRACK_LIMIT, type TrackedRecord } from './tracking';

export { storeUrlProblem } from './store-url';

/** Keys of one BulkGate application: a hash of its id, so two accounts (both with the node id `acc`) never share one. */
export function keyPrefix(applicationId: string): string {
  return `bulkgate:${createHash('sha256').update(applicationId).digest('hex').slice(0, 16)}:`;
}

const COPY_ID = randomBytes(9).toString('base64url');

const NAMES = ['reserve', 'refund', 'claim', 'collectHeld', 'record', 'overdue', 'get', 'markFinal', 'claimLate', 'keep', 'done', 'adopt', 'renew'] as const;

/** The store's scripts by name (lua/collect-held.lua is `collectHeld`): what a batch runs. */
export const STORE_SCRIPTS = Object.fromEntries(
  NAMES.map((name) => [name, readFileSync(join(__dirname, 'lua', `${name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}.lua`), 'utf8')]),
) as Record<(typeof NAMES)[number], string>;

/** A call of one of the store's scripts (a batch runs each by its text). */
function run(client: RedisLike, script: (typeof NAMES)[number], keys: string[], args: string[]): Promise<unknown> {
  return client.eval(STORE_SCRIPTS[script], { keys, arguments: args });
}

// A reservation's name: this copy's id and a count (random bytes: 1 % of a busy bench in syscalls).
let reservations = 0;

export class RedisWindow implements RateWindow {
  constructor(
    private readonly redis: RedisLike,
    private readonly key: string,
    readonly limit: number,
    readonly windowMs: number,
  ) {}

  async reserveInOrder(sends: readonly number[]): Promise<Reservation> {
    const args = [String(this.windowMs), String(this.limit), `${COPY_ID}.${++reservations}`, ...sends.map(String)];
    const [passed, wait] = (await run(this.redis, 'reserve', [this.key], args)) as [number, number];
    return { passed: Number(passed), wait: Number(wait) };
  }

  async refund(messages: number): Promise<void> {
    await run(this.redis, 'refund', [this.key], [String(messages)]);
  }
}

export class AlertClaims {
  constructor(
    private readonly redis: RedisLike,
    private readonly prefix: string,
    private readonly copyId: string,
    readonly windowMs = 10_000,
  ) {}

  /** Whether this copy sends it (false: another copy does), and the shared storm window's answer. */
  async claim(nodeId: string, body: string, storm?: { limit: number; windowMs: number }): Promise<{ ours: boolean; storm?: SharedStormAnswer }> {
    // The key of an alert: the node and a hash of its request body without the credentials.
    const claim = `${this.prefix}claim:${createHash('sha256').update(nodeId).update('\0').update(body).digest('hex').slice(0, 32)}`;
    const args = [this.copyId, String(this.windowMs), ...(storm && storm.limit > 0 ? [String(storm.limit), String(storm.windowMs)] : [])];
    const [ours, admitted, window, endsInMs] = (await run(this.redis, 'claim', [claim, `${this.prefix}storm:${nodeId}`], args)) as [
      number,
      number?,
      string?,
      number?,
    ];
    if (Number(ours) !== 1) return { ours: false };
    if (admitted === undefined) return { ours: true };
    return { ours: true, storm: { admitted: Number(admitted) === 1, window: String(window), endsInMs: Number(endsInMs) } };
  }

  /** The count every copy held in a storm window, for the notice (one copy gets it, the others 0). */
  async collectHeld(nodeId: string, window: string): Promise<number> {
    return Number(await run(this.redis, 'collectHeld', [`${this.prefix}storm:${nodeId}:held:${window}`], []));
  }
}

/** What the account's nodes ask of a shared store beyond the state boundary. */
export type AlertClaimer = Pick<AlertClaims, 'claim' | 'collectHeld'>;

/** The store at `url` answers (Test connection): undefined, or why not, as {@link storeFailure} tells it. */
export function checkStore(url: string, password: string | undefined, timeoutMs = CONNECT_TIMEOUT_MS): Promise<string | undefined> {
  return openConnection(url, password || undefined, timeoutMs).then(
    (connection) => void connection.destroy(),
    (error: Error) => storeFailure(error),
  );
}

/** The account's state on a Redis or Valkey server; what is not shared yet stays in `local`. */
export function redisStore(
  settings: { url: string; password?: string; applicationId: string; claimMs?: number },
  local: AccountStore,
  // `unreachable` (never connected yet) is told again only when its reason changes; `lost` falls
  // back to this copy's memory; `eviction`'s detail is the `maxmemory-policy`.
  events: { onState(state: StoreState, detail: string): void },
): AccountStore & { claims: AlertClaimer; close(): Promise<void> } {
  // Whether it answers, the one place that knows: the rate window, the alert claims and the account's nodes read it.
  const health = new StoreHealth(false);
  let everUp = false;
  // Closed (a redeploy): what the connection says after it is not told.
  let closed = false;
  const tell = (state: StoreState, detail: string) => {
    health.tell(state, detail);
    events.onState(state, detail);
  };
  const connection = new RedisConnection(
    {
      url: settings.url,
      password: settings.password || undefined,
      // Linear 200 ms steps to 5 s: a store on the local network is back within seconds of a restart
      // and a reconnect costs the gateway nothing; the kept alerts wait for it.
      reconnect: (retries) => Math.min(200 * (retries + 1), 5000),
      connectTimeoutMs: CONNECT_TIMEOUT_MS,
    },
    {
      failed: (error) => {
        const reason = storeFailure(error);
        if (!closed && (health.up || reason !== health.trouble?.reason)) tell(health.up || everUp ? 'lost' : 'unreachable', reason);
      },
      ready: () => {
        if (closed) return;
        tell(everUp ? 'back' : 'connected', settings.url);
        // An evicting server could drop a waiting msg or a claim: told once (CONFIG refused: not).
        if (!everUp)
          connection
            .command(['CONFIG', 'GET', 'maxmemory-policy'])
            .then((answer) => {
              const policy = (answer as string[])[1];
              if (policy && policy !== 'noeviction') events.onState('eviction', policy);
            })
            .catch(() => undefined);
        everUp = true;
      },
    },
  );
  connection.connect();
  // Connected but silent: lost after one batch's time (memory serves); an answer brings it back.
  const redis = new ScriptBatch(connection, STORE_SCRIPTS, BATCH_TIMEOUT_MS, (hung) => {
    if (hung && health.up) tell('lost', `${STORE_CAUSES['no-answer'][0]}: the store did not answer within ${BATCH_TIMEOUT_MS / 1000} s`);
    else if (!hung && !health.up && connection.isReady) tell('back', settings.url);
  });
  const prefix = keyPrefix(settings.applicationId);
  const claims = new AlertClaims(redis, prefix, COPY_ID);
  // The outbox log and the tracker outlive redeploys: calls go through the running account's client.
  keepLatest('store-client', prefix, redis);
  const running = () => latest<RedisLike>('store-client', prefix) as RedisLike;
  return {
    outboxLog: () => keptOnce('shared-outbox-log', prefix, () => new RedisOutboxLog(running, prefix, COPY_ID, settings.claimMs)),
    tracker: () => keptOnce('shared-tracker', prefix, () => new DeliveryTracker(new SharedTrackingState(new SharedTracking(running, prefix)))),
    // While Redis does not answer, this copy decides alone (its own window and storm guard), never stopping a send.
    rateWindow: (accountId, limit, windowMs) => {
      const shared = new RedisWindow(redis, `${prefix}window`, limit, windowMs);
      const own = local.rateWindow(accountId, limit, windowMs);
      return {
        reserveInOrder: (sends, now) => (health.up ? shared.reserveInOrder(sends).catch(() => own.reserveInOrder(sends, now)) : own.reserveInOrder(sends, now)),
        refund: (messages) => (health.up ? shared.refund(messages).catch(() => own.refund(messages)) : own.refund(messages)),
      };
    },
    claims: {
      claim: (nodeId, body, storm) => (health.up ? claims.claim(nodeId, body, storm).catch(() => ({ ours: true })) : Promise.resolve({ ours: true })),
      collectHeld: (nodeId, window) => claims.collectHeld(nodeId, window),
    },
    health,
    close: async () => {
      health.close();
      closed = true;
      // A store that never answers would hold a graceful close, and the redeploy, forever.
      if (connection.isReady) await settledWithin([connection.close()], BATCH_TIMEOUT_MS);
      connection.destroy();
    },
  };
}

export class SharedTracking {
  constructor(
    private readonly client: () => RedisLike,
    private readonly prefix: string,
    readonly limit = TRACK_LIMIT,
    readonly ageMs = TRACK_AGE_MS,
  ) {}

  record(record: TrackedRecord): Promise<unknown> {
    // The keys are built on the server from the fields given beside the JSON (not decoded there).
    const { smsId, number, acceptedAt, countsFrom } = record;
    const args = [this.prefix, JSON.stringify(record), String(this.ageMs), String(this.limit), smsId, number, String(acceptedAt), String(countsFrom)];
    return run(this.client(), 'record', [], args);
  }

  async lookup(smsId: string): Promise<TrackedRecord | undefined> {
    const text = (await run(this.client(), 'get', [`${this.prefix}sent:${smsId}`], [])) as string | null;
    return text ? (JSON.parse(text) as TrackedRecord) : undefined;
  }

  async lastTo(number: string): Promise<TrackedRecord | undefined> {
    const smsId = (await run(this.client(), 'get', [`${this.prefix}to:${number}`], [])) as string | null;
    return smsId ? this.lookup(smsId) : undefined;
  }

  /** A final report came (at any copy): no copy fires output 3 for it. */
  markFinal(smsId: string): Promise<unknown> {
    return run(this.client(), 'markFinal', [`${this.prefix}final:${smsId}`, `${this.prefix}waiting`], [String(this.ageMs), smsId]);
  }

  /** Whether output 3 fires here: no final report came at any copy, and no other copy fired it. */
  async claimLate(smsId: string): Promise<boolean> {
    const keys = [`${this.prefix}final:${smsId}`, `${this.prefix}late:${smsId}`, `${this.prefix}waiting`];
    return Number(await run(this.client(), 'claimLate', keys, [String(this.ageMs), smsId])) === 1;
  }

  /** What a copy that stopped left unwatched, at most 100 at a time, with output 3 claimed for this copy. */
  async overdue(timeoutMs: number, graceMs: number): Promise<TrackedRecord[]> {
    const args = [String(timeoutMs + graceMs), String(this.ageMs), '100', `${this.prefix}final:`, `${this.prefix}late:`, `${this.prefix}sent:`];
    const answer = (await run(this.client(), 'overdue', [`${this.prefix}waiting`], args)) as string[];
    return answer.map((text) => JSON.parse(text) as TrackedRecord);
  }
}

/** Each entry claimed by one copy at a time, renewed while it holds it; one whose claim lapsed (its copy is gone) is adopted. */
export class RedisOutboxLog implements OutboxLog {
  readonly where = 'the shared store';
  readonly adoptEveryMs: number;
  /** A keep waits for nothing: the store refuses it when full, or fails. */
  readonly writable = true;
  #holder: OutboxHolder | undefined;
  #adoptTimer: NodeJS.Timeout | undefined;
  // Ids the store may hold though this copy is done with them (a failed keep may run there late, or
  // a done failed): ended at the next look, before the claim lapses and another copy sends it.
  readonly #unsettled = new Set<string>();

  constructor(
    private readonly client: () => RedisLike,
    private readonly prefix: string,
    private readonly copyId: string,
    /** How long a claim lasts unless renewed: a copy gone for this long leaves its entries to the others. */
    private readonly claimMs = 30_000,
  ) {
    this.adoptEveryMs = Math.max(100, Math.floor(claimMs / 3));
  }

  open(holder: OutboxHolder): void {
    this.#holder = holder;
  }

  async whenWritable(): Promise<void> {}

  spent(): void {}

  // Not recorded in the store: an entry a copy that died had on the wire is adopted as waiting (sent
  // again; with duplicates_check the gateway drops the copy).
  async attempt(): Promise<void> {}

  back(): void {}

  attach(): void {
    clearInterval(this.#adoptTimer);
    this.#adoptTimer = setInterval(() => void this.#look(), this.adoptEveryMs);
    this.#adoptTimer.unref?.();
  }

  detach(): void {
    clearInterval(this.#adoptTimer);
    this.#adoptTimer = undefined;
  }

  /** Renews its claims, writes back what the store lost (a flush, an eviction), adopts orphans. */
  async #look(): Promise<void> {
    const holder = this.#holder;
    if (!holder || !this.#adoptTimer) return;
    try {
      const live = new Map(holder.held().map((kept) => [kept.id, kept.line]));
      const lost = await this.renew([...live.keys()]);
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

  /** Without an id, the last is the claims' prefix. */
  #keys(id = ''): string[] {
    return [`${this.prefix}outbox`, `${this.prefix}outbox:entries`, `${this.prefix}outbox:claim:${id}`];
  }

  async keep(line: string, size: number): Promise<void> {
    const entry = JSON.parse(line) as { id: string; since: number };
    let full: unknown;
    try {
      full = await run(this.client(), 'keep', this.#keys(entry.id), [String(entry.since), entry.id, line, this.copyId, String(this.claimMs), String(size)]);
    } catch (error) {
      this.#unsettled.add(entry.id);
      throw nodeError({
        type: 'store_unavailable',
        key: 'store-unavailable',
        params: { cause: (error as Error).message },
        brief: { key: 'store-unavailable' },
      });
    }
    // The bound counts every copy's waiting messages.
    if (Number(full) === 1) throw fullError(size);
  }

  async done(id: string): Promise<void> {
    try {
      await run(this.client(), 'done', this.#keys(id), [id]);
      this.#unsettled.delete(id);
    } catch (error) {
      this.#unsettled.add(id);
      throw error;
    }
  }

  async adoptable(known: (id: string) => boolean): Promise<LoggedEntry[]> {
    const [outbox, entries, claims] = this.#keys();
    // At most 1,000 entries and 4 MB of lines (a first of any size): far below the reply cap.
    const args = [this.copyId, String(this.claimMs), '1000', claims, String(4 * 1024 * 1024)];
    const flat = (await run(this.client(), 'adopt', [outbox, entries], args)) as string[];
    const found: LoggedEntry[] = [];
    for (let i = 0; i + 1 < flat.length; i += 2) {
      if (known(flat[i] as string) || this.#unsettled.has(flat[i] as string)) continue;
      try {
        const entry = JSON.parse(flat[i + 1] as string) as Record<string, unknown>;
        if (isEntry(entry)) found.push({ entry, line: flat[i + 1] as string });
      } catch {
        // A damaged entry is skipped.
      }
    }
    return found;
  }

  async renew(ids: string[]): Promise<string[]> {
    // One this copy holds again (written back after a failed keep) is not to be ended.
    for (const id of ids) this.#unsettled.delete(id);
    await Promise.all([...this.#unsettled].map((id) => this.done(id)));
    if (!ids.length) return [];
    const [, entries, claims] = this.#keys();
    const lost = await run(this.client(), 'renew', [entries], [String(this.claimMs), claims, this.copyId, ...ids]);
    return Array.isArray(lost) ? lost.map(String) : [];
  }
}
