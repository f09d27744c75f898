// The outbox's log, as the outbox sees it: one interface, a file (outbox-journal.ts) or a log the
// copies share (redis-store.ts) behind it.
import type { GatewayError } from '../../gateway';

export interface JournalEntry {
  id: string;
  node: string;
  since: number;
}

export type Warn = (key: string, params: Record<string, string | number>) => void;

/**
 * How an entry ended, as its done line records it: the gateway's answer, or the error Catch gets
 * (its fields, its English sentence and its wording). Enough to hand the msg on as its port would.
 */
export type RecordedEnd = ({ result: unknown } | { error: Record<string, unknown> }) & { attempts: number };

/** An entry as its log holds it: the entry, and its line (JSON, as first kept). */
export interface LoggedEntry {
  entry: JournalEntry;
  line: string;
  /** An attempt was recorded and no answer to it: the gateway may have it. */
  attempted?: boolean;
  /** It ended (its done line) and its msg may not have left its node (no line says it did): handed on once more, after a restart. */
  ended?: RecordedEnd;
}

/** What an outbox tells its log, which calls it back when entries become this process's or stop being so. */
export interface OutboxHolder {
  /** A log line for the account node running now. */
  warn: Warn;
  /** Entries that are this process's now (a dead process's file, a dead copy's claims); answers how many it holds. */
  adopt(found: LoggedEntry[]): number;
  /** Another process took them over: the waiting ones are that one's to send now. */
  lost(): void;
  /** Those it holds and has not ended (waiting or on the wire): renewed, written back when the log lost them. */
  held(): { id: string; line: string }[];
  /** Its bound (`outbox_full`). */
  size(): number;
}

/**
 * Each kept message a line (its entry as JSON), each one that left a `done`: a file one process holds
 * at a time (outbox-journal.ts), or a log the copies of Node-RED share (redis-store.ts). Each owns
 * how entries become this process's (a lock, claims), and adopts those a dead holder left.
 */
export interface OutboxLog {
  /** For warnings (a file's path). */
  readonly where: string;
  /** Once, by its outbox: what the log finds and loses from now on goes there. */
  open(holder: OutboxHolder): void;
  /** Whether a keep may be written now (a file: its lock is this process's). */
  readonly writable: boolean;
  /** Resolves once writable; refused with `outbox_locked`, a file's error, or `full`'s when the outbox is full with the `held` ones waiting for it. */
  whenWritable(full: (held: number) => GatewayError | undefined): Promise<void>;
  /** Resolves once it is durable. A shared log refuses it (`outbox_full`) when `size` entries wait across the copies. */
  keep(line: string, size: number): Promise<void>;
  /** Resolves once its end is durable; until `emitted`, a restart hands its msg on from `end`. */
  done(id: string, line: string, end: RecordedEnd): Promise<void>;
  /** Its msg left its node (a port, or Catch); `live` entries still wait. Not flushed alone: a crash before the next commit hands it on again, marked. */
  emitted(id: string, live: number): void;
  /** Before each request: resolves once it is recorded (on disk), so a crash cannot hide that the gateway may have it. */
  attempt(id: string): Promise<void>;
  /** The attempt had an answer, and the entry waits again (it did not reach the gateway, or can be dropped there). */
  back(id: string): void;
  /** After a done line: `live` entries still wait (their lines, for a rewrite). */
  spent(live: number, lines: () => string[]): void;
  /** While an account runs here: its entries are renewed and what others left adopted. */
  attach(): void;
  detach(): void;
}
