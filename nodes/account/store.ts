/**
 * The account's state boundary: what an account remembers across messages, and where it keeps it.
 *
 * - the outbox's entries (an {@link OutboxLog}: the lines of the messages kept, and which ended),
 * - the sends it tracks for delivery reports (a {@link DeliveryTracker}),
 * - its rate-limit window (a {@link RateWindow}: the messages sent in the last window).
 *
 * One implementation today, {@link localStore}: this Node-RED process, with the outbox in a file in
 * the user directory (in memory where there is none). A store shared by several copies of
 * Node-RED is a second implementation of this interface; the account, the outbox's rounds, the
 * rate limiter's queue and the events node stay as they are.
 */
import { join } from 'node:path';
import { OutboxJournal, type JournalEntry, type Warn } from './outbox-journal';
import { keptOnce } from './registry';
import { DeliveryTracker } from './tracking';
import { TrackingFile, trackingPath } from './tracking-file';

/** Where an account keeps what it remembers. */
export interface AccountStore {
  /** How the editor and the logs name it. */
  readonly kind: 'file' | 'redis';
  /** The log of the account's outbox; undefined: the outbox lives in memory only. */
  outboxLog(accountId: string): OutboxLog | undefined;
  /** The sends the account's nodes tracked for the events node. */
  tracker(accountId: string): DeliveryTracker;
  /** The account's rate-limit window: at most `limit` messages in any `windowMs`. */
  rateWindow(accountId: string, limit: number, windowMs: number): RateWindow;
}

/**
 * The outbox's entries as a log: each kept message a line (its entry as JSON), each one that
 * left a `done`. A file this process holds, or a store the copies of Node-RED share.
 */
export type OutboxLog = OutboxFile | SharedOutboxLog;

interface OutboxLogBase {
  /** Where it is, for warnings (a file's path). */
  readonly where: string;
  /** Keeps an entry's line; resolves once it is durable. A shared log refuses it (`outbox_full`) when `size` entries wait across the copies. */
  keep(line: string, size: number): Promise<void>;
  /** Ends an entry; resolves once that is durable. */
  done(id: string): Promise<void>;
}

/** A file one process holds at a time; the others leave its entries alone. */
export interface OutboxFile extends OutboxLogBase {
  readonly kind: 'file';
  /** Whether this process holds it. */
  readonly locked: boolean;
  /** Who hears of a torn tail cut back (the outbox's account node). */
  warn: Warn;
  /** Takes it, unless a living writer holds it (one that is gone is taken over); returns whether it is held. */
  lock(): boolean;
  /** Whether an earlier run left entries in it. */
  exists(): boolean;
  /** The entries that did not end, oldest first, each with its line; damaged lines skipped with a warning. */
  load(warn: Warn): Map<string, { entry: JournalEntry; line: string }>;
  /** Whether it holds mostly ended entries, beside `live` waiting ones. */
  wantsCompaction(live: number): boolean;
  /** Rewrites it with these lines only. */
  compact(lines: () => string[]): Promise<unknown>;
  /** Nothing waits: removes it and gives it up. */
  release(): Promise<void>;
  /** Closes what it has open (the next `keep` opens it again). */
  close(): Promise<void>;
}

/** A log several copies share: each entry claimed by one copy at a time, renewed while it holds it. */
export interface SharedOutboxLog extends OutboxLogBase {
  readonly kind: 'shared';
  /** How often to renew this copy's claims and look for entries to adopt, ms. */
  readonly adoptEveryMs: number;
  /** The entries another copy kept whose claim has lapsed (that copy is gone), now claimed by this one; `known` tells which ids this copy already holds. */
  adoptable(known: (id: string) => boolean): Promise<{ entry: JournalEntry; line: string }[]>;
  /** This copy still holds these entries (their claims are renewed); answers those the store lost. */
  renew(ids: string[]): Promise<string[]>;
}

/** What a window answered for a run of sends: how many of them passed (from the first), and the ms until the next may. */
export interface Reservation {
  passed: number;
  /** 0 when every send of the run passed; else how many ms until the oldest message leaves the window. */
  wait: number;
}

/**
 * The account's sliding window. `reserveInOrder` takes the sends waiting, in order (each a number
 * of messages), and counts as sent now as many as fit, from the first, stopping at the first that
 * does not (strict order: a smaller send behind it never overtakes it): one question for a whole
 * run (a shared store's: one round trip, however many wait).
 */
export interface RateWindow {
  reserveInOrder(sends: readonly number[], now: number): Promise<Reservation>;
  /** Gives back messages reserved that never reached the gateway (they will be sent again). */
  refund(messages: number): Promise<void>;
}

/** The window in this process: the send times of the messages in it, oldest first. */
export class MemoryWindow implements RateWindow {
  readonly #sent: number[] = [];

  constructor(
    readonly limit: number,
    readonly windowMs: number,
  ) {}

  /** One send: 0 when its `messages` fit (they are counted), else the ms until the oldest leaves. */
  reserve(messages: number, now: number): number {
    const sent = this.#sent;
    while (sent.length && (sent[0] as number) <= now - this.windowMs) sent.shift();
    if (sent.length + messages > this.limit) return Math.max(0, (sent[0] ?? now) + this.windowMs - now) + 1;
    for (let i = 0; i < messages; i++) sent.push(now);
    return 0;
  }

  /** Counts what fits when asked; the answer comes as a promise, as a shared window's does. */
  async reserveInOrder(sends: readonly number[], now: number): Promise<Reservation> {
    for (let passed = 0; passed < sends.length; passed++) {
      const wait = this.reserve(sends[passed] as number, now);
      if (wait > 0) return { passed, wait };
    }
    return { passed: sends.length, wait: 0 };
  }

  async refund(messages: number): Promise<void> {
    this.#sent.splice(Math.max(0, this.#sent.length - messages), messages);
  }
}

/**
 * This Node-RED process's store: the outbox in `<userDir>/bulkgate-outbox/<account id>.jsonl`,
 * tracked sends in `<userDir>/bulkgate-tracking/<account id>.jsonl` (each in memory only when
 * Node-RED has no user directory), the window in memory.
 */
export function localStore(userDir: string | undefined, warn: (text: string) => void = () => undefined): AccountStore {
  return {
    kind: 'file',
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
