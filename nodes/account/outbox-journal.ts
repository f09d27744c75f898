// The outbox's file, durable and locked: an entry per kept message, `{"done": id, "end": ...}` per one that ended
// (how), `{"emitted": id}` once its msg left its node; rewritten with the live entries (and those ended whose msg has
// not left yet) when most lines are spent, removed with its lock when none is left.
import type { GatewayError } from '../../gateway';
import { holdsLongList, stringifyInSteps } from '../../gateway/json-steps';
import { inTurns } from '../../gateway/steps';
import { causeOf, nodeError } from '../plumbing/wording';
import { Journal } from './journal';
import type {
  AttemptAnswer,
  JournalEntry,
  LoggedEntry,
  OutboxHolder,
  OutboxLog,
  RecordedEnd,
  Warn,
} from './outbox-log';

export type { JournalEntry, Warn } from './outbox-log';

/** Not a damaged or hand-edited line. */
export function isEntry(value: Record<string, unknown>): value is Record<string, unknown> & JournalEntry {
  return (
    typeof value.id === 'string' &&
    typeof value.node === 'string' &&
    typeof value.body === 'object' &&
    value.body !== null &&
    typeof value.since === 'number' &&
    typeof value.order === 'number' &&
    typeof value.attempts === 'number' &&
    (typeof value.reason === 'string' ||
      (typeof value.reason === 'object' &&
        value.reason !== null &&
        typeof (value.reason as { key?: unknown }).key === 'string')) &&
    (value.deadline === undefined || typeof value.deadline === 'number')
  );
}

/** Spent lines a file may hold before it is rewritten (when they are also most of it). */
const COMPACT_AFTER = 2000;

/** The file's own moves, under its lock (OutboxJournal; a stand-in in the unit tests). */
export interface OutboxFile {
  readonly where: string;
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
  load(warn: Warn): Map<string, LoggedEntry>;
  keep(line: string): Promise<void>;
  /** Without `end`: nothing to hand on after a restart. */
  done(id: string, end?: RecordedEnd): Promise<void>;
  /** Rides the next commit. */
  emitted(id: string): void;
  attempt(id: string): Promise<void>;
  back(id: string): Promise<void>;
  wantsCompaction(live: number): boolean;
  compact(lines: () => string[]): Promise<unknown>;
  /** Nothing waits: removes it and gives it up. */
  release(): Promise<void>;
  close(): Promise<void>;
}

/**
 * The outbox's log as a file one process holds at a time: the others leave its entries alone, and
 * the file of a process that is gone is taken over, its entries adopted.
 */
export class FileOutboxLog implements OutboxLog {
  readonly where: string;
  readonly attach = () => undefined;
  readonly detach = () => undefined;
  #holder: OutboxHolder | undefined;
  /** While the lock is another's: looks again at each touch it should get. */
  #lockTimer: NodeJS.Timeout | undefined;
  /** Msgs kept waiting (in memory, their `done` not yet called) until the lock is this process's. */
  #held: { resolve: () => void; reject: (error: unknown) => void }[] = [];
  /** Ids whose last attempt had no answer yet: a rewrite keeps their attempt lines. */
  readonly #attempted = new Set<string>();
  /** Ended entries whose msg has not left its node yet: a rewrite keeps their lines and done lines; the file stays. */
  readonly #ended = new Map<string, { line: string; end: RecordedEnd }>();

  constructor(readonly file: OutboxFile) {
    this.where = file.where;
  }

  get writable(): boolean {
    return this.file.locked;
  }

  // A file another living Node-RED holds is that one's to send; one whose holder is gone, this one's.
  open(holder: OutboxHolder): void {
    const file = this.file;
    this.#holder = holder;
    file.warn = (key, params) => holder.warn(key, params);
    file.lost = () => this.#lockLost(holder);
    if (!file.exists()) return;
    try {
      if (this.#take()) return;
      if (file.holderAlive()) holder.warn('outbox-locked', { path: file.where });
      else holder.warn('outbox-lock-waiting', { path: file.where, seconds: Math.round(file.staleMs / 1000) });
      this.#watchLock();
    } catch (error) {
      holder.warn('outbox-unreadable', { path: file.where, reason: error as Error });
    }
  }

  /** Whether the lock is this process's; when it has just been taken, the file's entries are adopted. */
  #take(): boolean {
    const file = this.file;
    if (file.locked) return true;
    if (!file.lock()) return false;
    clearInterval(this.#lockTimer);
    this.#lockTimer = undefined;
    const holder = this.#holder;
    if (holder) {
      const found = [...file.load(holder.warn).values()];
      for (const { entry, line, attempted, ended } of found) {
        if (ended) this.#ended.set(entry.id, { line, end: ended });
        else if (attempted) this.#attempted.add(entry.id);
      }
      if (holder.adopt(found) === 0 && !this.#ended.size) void file.release();
    }
    for (const waiter of this.#held.splice(0)) waiter.resolve();
    return true;
  }

  /** Until the lock is taken: a holder that is gone leaves it untouched, and it is stale after the bound. */
  #watchLock(): void {
    if (this.#lockTimer) return;
    const file = this.file;
    this.#lockTimer = setInterval(() => {
      try {
        if (this.#take()) return;
      } catch (error) {
        for (const waiter of this.#held.splice(0)) waiter.reject(unwritableError(file.where, error));
        return;
      }
      // A living holder touches it: the held msgs are refused, as any that come while it lives.
      if (this.#held.length && file.holderAlive())
        for (const waiter of this.#held.splice(0)) waiter.reject(lockedError(file.where));
      if (!this.#held.length && !file.exists()) {
        clearInterval(this.#lockTimer);
        this.#lockTimer = undefined;
      }
    }, file.touchEveryMs);
    this.#lockTimer.unref?.();
  }

  /**
   * Another Node-RED took the file over (this one left its lock untouched for the bound: an event loop stopped, a
   * machine asleep): its entries are that one's to send now.
   */
  #lockLost(holder: OutboxHolder): void {
    holder.warn('outbox-lock-lost', { path: this.file.where });
    holder.lost();
    this.#watchLock();
  }

  /** Resolves once the lock is this process's; refused when its holder lives, or the outbox is full with the held. */
  async whenWritable(full: (held: number) => GatewayError | undefined): Promise<void> {
    const file = this.file;
    try {
      if (this.#take()) return;
    } catch (error) {
      throw unwritableError(file.where, error);
    }
    if (file.holderAlive()) throw lockedError(file.where);
    const refused = full(this.#held.length);
    if (refused) throw refused;
    await new Promise<void>((resolve, reject) => {
      this.#held.push({ resolve, reject });
      this.#watchLock();
    });
  }

  keep(line: string): Promise<void> {
    return this.file.keep(line);
  }

  // One process holds the file: every msg it ends is its own to hand on.
  async done(id: string, line: string, end: RecordedEnd): Promise<boolean> {
    this.#attempted.delete(id);
    this.#ended.set(id, { line, end });
    await this.file.done(id, end);
    return true;
  }

  emitted(id: string, live: number): void {
    if (!this.#ended.delete(id)) return;
    this.file.emitted(id);
    if (live === 0 && !this.#ended.size) void this.file.release();
  }

  // Only where the gateway cannot drop a copy (simple 1.0): one with duplicates_check is sent again
  // after a crash either way, so it costs no write. A disk that refuses the line does not hold the send.
  async attempt(id: string, dropsCopies: boolean): Promise<AttemptAnswer> {
    if (dropsCopies) return 'go';
    this.#attempted.add(id);
    await this.file.attempt(id).catch(() => undefined);
    return 'go';
  }

  back(id: string): void {
    if (!this.#attempted.delete(id)) return;
    // One that could not be written: a crash would end a simple 1.0 entry as unconfirmed, never send it twice.
    void this.file.back(id).catch(() => undefined);
  }

  spent(live: number, lines: () => string[]): void {
    const file = this.file;
    // Not while an ended one's msg has not left: its lines are what a crash must hand on.
    if (live === 0 && !this.#ended.size) void file.release();
    else if (file.wantsCompaction(live + this.#ended.size)) {
      // The attempt and done lines after their entries: a rewrite keeps what a crash must know.
      const attempted = () => [...this.#attempted].map((id) => JSON.stringify({ attempt: id }));
      const ended = () => [...this.#ended.values()].map(({ line }) => line);
      const done = () => [...this.#ended].map(([id, { end }]) => doneLine(id, end));
      file
        .compact(() => [...lines(), ...ended(), ...attempted(), ...done()])
        .catch((error: unknown) =>
          this.#holder?.warn('outbox-unreadable', { path: file.where, reason: error as Error }),
        );
    }
  }
}

export class OutboxJournal extends Journal implements OutboxFile {
  readonly where = this.path;
  spent = 0;
  warn: Warn = () => undefined;

  constructor(path: string) {
    super(path, { durable: true, header: JSON.stringify({ bulkgateOutbox: 2 }), lockedError });
    this.torn = (bytes) => this.warn('outbox-torn-tail', { path, bytes });
  }

  keep(line: string): Promise<void> {
    return this.append(line);
  }

  /** Its line and this one are spent (once `emitted` follows); when it fails, the line goes with the next commit. */
  done(id: string, end?: RecordedEnd): Promise<void> {
    this.spent += 2;
    // A list's answer (about 1 MB of JSON for 10,000 numbers) is written in steps; any other at once.
    if (holdsLongList(end))
      return inTurns(stringifyInSteps({ done: id, end })).then((line) => this.append(line as string, true));
    return this.append(doneLine(id, end), true);
  }

  emitted(id: string): void {
    this.spent++;
    this.ride(JSON.stringify({ emitted: id }));
  }

  /** Durable before the request goes: after a crash, the gateway may have this entry. */
  attempt(id: string): Promise<void> {
    this.spent++;
    return this.append(JSON.stringify({ attempt: id }));
  }

  /** The attempt had an answer: the entry waits again. */
  back(id: string): Promise<void> {
    this.spent++;
    return this.append(JSON.stringify({ back: id }), true);
  }

  load(warn: Warn): Map<string, LoggedEntry> {
    const live = new Map<string, LoggedEntry>();
    let bad = 0;
    let lines = 0;
    const take = (line: string) => {
      lines++;
      try {
        const value = JSON.parse(line) as Record<string, unknown>;
        if (value.bulkgateOutbox !== undefined) return lines--;
        if (typeof value.emitted === 'string') return void live.delete(value.emitted);
        if (typeof value.done === 'string') {
          const logged = live.get(value.done);
          // Its end recorded: its msg is handed on after this start unless an emitted line follows.
          if (logged && isEnd(value.end)) logged.ended = value.end;
          else live.delete(value.done);
          return;
        }
        if (typeof value.attempt === 'string' || typeof value.back === 'string') {
          const logged = live.get((value.attempt ?? value.back) as string);
          if (logged) logged.attempted = typeof value.attempt === 'string';
          return;
        }
        if (!isEntry(value)) throw new Error('not an entry');
        live.delete(value.id);
        live.set(value.id, { entry: value as unknown as JournalEntry, line });
      } catch {
        bad++;
      }
    };
    try {
      this.read(take, (bytes) => warn('outbox-torn-tail', { path: this.path, bytes }));
    } catch (error) {
      warn('outbox-unreadable', { path: this.path, reason: error as Error });
    }
    if (bad) warn('outbox-bad-lines', { path: this.path, bad, kept: live.size });
    this.spent = lines - live.size;
    return live;
  }

  wantsCompaction(live: number): boolean {
    return this.spent > COMPACT_AFTER && this.spent > live;
  }

  override async compact(lines: () => string[]): Promise<number> {
    const written = await super.compact(lines);
    this.spent = 0;
    return written;
  }

  override async release(): Promise<void> {
    await super.release();
    if (!this.locked) this.spent = 0;
  }
}

function doneLine(id: string, end: RecordedEnd | undefined): string {
  return JSON.stringify(end ? { done: id, end } : { done: id });
}

function isEnd(value: unknown): value is RecordedEnd {
  if (typeof value !== 'object' || value === null) return false;
  const end = value as Record<string, unknown>;
  return (
    typeof end.attempts === 'number' &&
    ((typeof end.result === 'object' && end.result !== null) || (typeof end.error === 'object' && end.error !== null))
  );
}

export function lockedError(path: string): GatewayError {
  return nodeError({
    type: 'outbox_locked',
    key: 'outbox-locked',
    params: { file: path },
    brief: { key: 'outbox-locked' },
  });
}

/** A full disk, a permission: the msg cannot wait. */
export function unwritableError(where: string, cause: unknown): GatewayError {
  return nodeError({
    type: 'outbox_unavailable',
    key: 'outbox-unwritable',
    params: { file: where, cause: causeOf(cause) },
    brief: { key: 'outbox-unavailable' },
    cause,
  });
}
