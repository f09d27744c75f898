// The account's state boundary (outbox, tracked sends, rate window): in this process or in a store
// the copies of Node-RED share (redis-store.ts); nothing above it knows which.
import { join } from 'node:path';
import { OutboxJournal, type JournalEntry, type Warn } from './outbox-journal';
import { keptOnce } from './registry';
import { DeliveryTracker } from './tracking';
import { TrackingFile, trackingPath, type TrackingWarn } from './tracking-file';

export interface AccountStore {
  /** Undefined: the outbox lives in memory only. */
  outboxLog(accountId: string): OutboxLog | undefined;
  tracker(accountId: string): DeliveryTracker;
  /** At most `limit` messages in any `windowMs`. */
  rateWindow(accountId: string, limit: number, windowMs: number): RateWindow;
}

/** Each kept message a line (its entry as JSON), each one that left a `done`. */
export type OutboxLog = OutboxFile | SharedOutboxLog;

interface OutboxLogBase {
  /** For warnings (a file's path). */
  readonly where: string;
  /** Resolves once it is durable. A shared log refuses it (`outbox_full`) when `size` entries wait across the copies. */
  keep(line: string, size: number): Promise<void>;
  done(id: string): Promise<void>;
}

/** A file one process holds at a time; the others leave its entries alone. */
export interface OutboxFile extends OutboxLogBase {
  readonly kind: 'file';
  readonly locked: boolean;
  /** Who hears of a torn tail cut back. */
  warn: Warn;
  /** One that is gone is taken over; returns whether it is held. */
  lock(): boolean;
  /** Whether the process that holds the lock is known to run (of this machine, or seen touching it). */
  holderAlive(): boolean;
  /** A lock not touched for longer is stale, whatever host wrote it. */
  readonly staleMs: number;
  readonly touchEveryMs: number;
  /** Called when another process took the lock over. */
  lost: () => void;
  exists(): boolean;
  load(warn: Warn): Map<string, { entry: JournalEntry; line: string }>;
  wantsCompaction(live: number): boolean;
  compact(lines: () => string[]): Promise<unknown>;
  /** Nothing waits: removes it and gives it up. */
  release(): Promise<void>;
  close(): Promise<void>;
}

/** Each entry claimed by one copy at a time, renewed while it holds it. */
export interface SharedOutboxLog extends OutboxLogBase {
  readonly kind: 'shared';
  readonly adoptEveryMs: number;
  /** The entries whose claim has lapsed (their copy is gone), now claimed by this one; `known`: ids this copy already holds. */
  adoptable(known: (id: string) => boolean): Promise<{ entry: JournalEntry; line: string }[]>;
  /** Renews these claims; answers those the store lost. */
  renew(ids: string[]): Promise<string[]>;
}

/** How many sends of a run passed (from the first), and the ms until the oldest leaves (0: all passed). */
export interface Reservation {
  passed: number;
  wait: number;
}

export interface RateWindow {
  /** Counts as many sends (messages each) as fit, up to the first that does not (none overtakes); `now` on the monotonic clock (a shared window takes its server's). */
  reserveInOrder(sends: readonly number[], now: number): Promise<Reservation>;
  /** Gives back messages reserved that never reached the gateway (they will be sent again). */
  refund(messages: number): Promise<void>;
}

export class MemoryWindow implements RateWindow {
  /** The send times of the messages in the window, oldest first. */
  readonly #sent: number[] = [];

  constructor(
    readonly limit: number,
    readonly windowMs: number,
  ) {}

  async reserveInOrder(sends: readonly number[], now: number): Promise<Reservation> {
    const sent = this.#sent;
    while (sent.length && (sent[0] as number) <= now - this.windowMs) sent.shift();
    for (let passed = 0; passed < sends.length; passed++) {
      const messages = sends[passed] as number;
      if (sent.length + messages > this.limit) return { passed, wait: Math.max(0, (sent[0] ?? now) + this.windowMs - now) + 1 };
      for (let i = 0; i < messages; i++) sent.push(now);
    }
    return { passed: sends.length, wait: 0 };
  }

  async refund(messages: number): Promise<void> {
    this.#sent.splice(Math.max(0, this.#sent.length - messages), messages);
  }
}

/** Each in memory only when Node-RED has no user directory. */
export function localStore(userDir: string | undefined, warn: TrackingWarn = () => undefined): AccountStore {
  return {
    outboxLog(accountId) {
      if (!userDir) return undefined;
      const path = join(userDir, 'bulkgate-outbox', `${accountId.replace(/[^\w.-]/g, '_')}.jsonl`);
      return keptOnce('journal', path, () => new OutboxJournal(path));
    },
    tracker(accountId) {
      // By user directory too: two Node-RED runtimes in one process (the tests) keep their own.
      return keptOnce(
        'tracker',
        `${userDir ?? ''}\0${accountId}`,
        () => new DeliveryTracker(userDir ? { kind: 'file', log: new TrackingFile(trackingPath(userDir, accountId), warn) } : { kind: 'memory' }),
      );
    },
    rateWindow: (_accountId, limit, windowMs) => new MemoryWindow(limit, windowMs),
  };
}
