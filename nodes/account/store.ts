// The account's state boundary (outbox, tracked sends, rate window): in this process or in a store
// the copies of Node-RED share (redis-store.ts); nothing above it knows which.
export type { LoggedEntry, OutboxHolder, OutboxLog } from './outbox-log';
import { join } from 'node:path';
import { FileOutboxLog, OutboxJournal } from './outbox-journal';
import type { OutboxLog } from './outbox-log';
import { keptOnce } from './registry';
import { StoreHealth } from './store-health';
import { DeliveryTracker, memoryTracking } from './tracking';
import { TrackingFile, trackingPath, type TrackingWarn } from './tracking-file';

export interface AccountStore {
  /** Undefined: the outbox lives in memory only. */
  outboxLog(accountId: string): OutboxLog | undefined;
  tracker(accountId: string): DeliveryTracker;
  /** At most `limit` messages in any `windowMs`. */
  rateWindow(accountId: string, limit: number, windowMs: number): RateWindow;
  /** Whether the state can be reached now (the account's nodes show it when it cannot). */
  readonly health: StoreHealth;
}

/** How many sends of a run passed (from the first), and the ms until the oldest leaves (0: all passed). */
export interface Reservation {
  passed: number;
  wait: number;
}

export interface RateWindow {
  /**
   * Counts as many sends (messages each) as fit, up to the first that does not (none overtakes); `now` on the monotonic
   * clock (a shared window takes its server's).
   */
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
      if (sent.length + messages > this.limit)
        return { passed, wait: Math.max(0, (sent[0] ?? now) + this.windowMs - now) + 1 };
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
      return keptOnce('journal', path, () => new FileOutboxLog(new OutboxJournal(path)));
    },
    tracker(accountId) {
      // By user directory too: two Node-RED runtimes in one process (the tests) keep their own.
      return keptOnce(
        'tracker',
        `${userDir ?? ''}\0${accountId}`,
        () =>
          new DeliveryTracker(userDir ? new TrackingFile(trackingPath(userDir, accountId), warn) : memoryTracking()),
      );
    },
    rateWindow: (_accountId, limit, windowMs) => new MemoryWindow(limit, windowMs),
    // A file or this process's memory: its trouble is an error of each write, not a state.
    health: new StoreHealth(true),
  };
}
