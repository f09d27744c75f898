// The outbox's log, as the outbox sees it: one interface, a file (outbox-journal.ts) or a log the
// copies share (redis-store.ts) behind it.
import { DUPLICATE_WINDOW_MS, type GatewayError } from '../../gateway';

export interface JournalEntry {
  id: string;
  node: string;
  since: number;
}

// A cause (an Error) is worded where the line is written, in the user's language.
export type Warn = (key: string, params: Record<string, string | number | Error>) => void;

/**
 * How an entry ended, as its done line records it: the gateway's answer, or the error Catch gets (its fields, English
 * sentence and wording). Enough to hand the msg on as its port would.
 */
export type RecordedEnd = ({ result: unknown } | { error: Record<string, unknown> }) & { attempts: number };

/** An entry as its log holds it: the entry, and its line (JSON, as first kept). */
export interface LoggedEntry {
  entry: JournalEntry;
  line: string;
  /** An attempt was recorded and no answer to it: the gateway may have it. */
  attempted?: boolean;
  /** How long ago that attempt was, by the log's clock (a shared store's: its server's), when the log knows. */
  attemptAgeMs?: number;
  /** It ended (its done line) and its msg may not have left its node (no line says so): handed on after a restart. */
  ended?: RecordedEnd;
}

/**
 * An entry another process attempted without an answer (the gateway may have it) goes again only where the gateway
 * drops a copy (duplicates_check), and only while that attempt is younger than the duplicate window less two minutes
 * for the resend's own way there (the rate limit, the timeout); else it ends once, `unconfirmed`, never sent blind.
 */
export function endsUnconfirmed(dropsCopies: boolean, attemptAgeMs: number | undefined): boolean {
  return !dropsCopies || (attemptAgeMs !== undefined && attemptAgeMs >= DUPLICATE_WINDOW_MS - 2 * 60_000);
}

/**
 * `id` as the newest of `ids`, which keeps the newest `bound`: the ids a process ended, known for as long as its outbox
 * could hold them (a log or a store that gives one back later is told apart from one to adopt).
 */
export function rememberNewest(ids: Set<string>, id: string, bound: number): void {
  ids.delete(id);
  ids.add(id);
  for (const old of ids) {
    if (ids.size <= bound) break;
    ids.delete(old);
  }
}

/**
 * A log's answer before a request: send it; wait (the log cannot tell now: a store that does not answer, a claim not
 * renewed in time); gone from here (another process holds or ended it: dropped, not ended); or end it `unconfirmed`
 * (another process's attempt had no answer).
 */
export type AttemptAnswer = 'go' | 'wait' | 'gone' | 'unconfirmed';

/** What an outbox tells its log, which calls it back when entries become this process's or stop being so. */
export interface OutboxHolder {
  /** A log line for the account node running now. */
  warn: Warn;
  /** Entries that are this process's now (a dead process's file, a dead copy's claims); answers how many it holds. */
  adopt(found: LoggedEntry[]): number;
  /** Another process took them over (all, or those of `ids`): the waiting ones are that one's to send now. */
  lost(ids?: readonly string[]): void;
  /** Those it holds and has not ended (waiting or on the wire): renewed, written back when the log lost them. */
  held(): { id: string; line: string }[];
  /** Its bound (`outbox_full`). */
  size(): number;
}

/**
 * Each kept message a line (its entry as JSON), each one that left a `done`: a file one process holds at a time, or a
 * log the copies share (redis-store.ts). Each owns how entries become this process's and adopts a dead holder's.
 */
export interface OutboxLog {
  /** For warnings (a file's path). */
  readonly where: string;
  /** Once, by its outbox: what the log finds and loses from now on goes there. */
  open(holder: OutboxHolder): void;
  /** Whether a keep may be written now (a file: its lock is this process's). */
  readonly writable: boolean;
  /**
   * Resolves once writable; refused with `outbox_locked`, a file's error, or `full`'s when the outbox is full with the
   * `held` ones waiting for it.
   */
  whenWritable(full: (held: number) => GatewayError | undefined): Promise<void>;
  /** Resolves once durable. A shared log refuses it (`outbox_full`) when `size` entries wait across the copies. */
  keep(line: string, size: number): Promise<void>;
  /**
   * Resolves once its end is durable, with whether the msg is this process's to hand on (false: another process holds
   * or ended the entry); until `emitted`, a restart hands its msg on from `end`.
   */
  done(id: string, line: string, end: RecordedEnd): Promise<boolean>;
  /**
   * Its msg left its node (a port, or Catch); `live` entries still wait. Not flushed alone: a crash before the next
   * commit hands it on again, marked.
   */
  emitted(id: string, live: number): void;
  /**
   * Before each request, never refused: resolves once it may go and is recorded (on disk, in the store), so a crash
   * cannot hide that the gateway may have it. `dropsCopies`: it carries duplicates_check (a file records only others).
   */
  attempt(id: string, dropsCopies: boolean): Promise<AttemptAnswer>;
  /** The attempt had an answer that it did not reach the gateway, and the entry waits again. */
  back(id: string): void;
  /** After a done line: `live` entries still wait (their lines, for a rewrite). */
  spent(live: number, lines: () => string[]): void;
  /** While an account runs here: its entries are renewed and what others left adopted. */
  attach(): void;
  detach(): void;
}
