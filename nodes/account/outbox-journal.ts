// The outbox's file, durable and locked: an entry per kept message, `{"done": id}` per one gone;
// rewritten with the live entries when most lines are spent, removed with its lock when none waits.
import type { GatewayError } from '../../gateway';
import { nodeError } from '../plumbing/wording';
import { Journal } from './journal';

export interface JournalEntry {
  id: string;
  node: string;
  since: number;
}

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
    typeof value.reason === 'string' &&
    (value.deadline === undefined || typeof value.deadline === 'number')
  );
}

export type Warn = (key: string, params: Record<string, string | number>) => void;

/** Spent lines a file may hold before it is rewritten (when they are also most of it). */
const COMPACT_AFTER = 2000;

export class OutboxJournal extends Journal {
  readonly kind = 'file';
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

  /** Its line and this one are spent; when it fails, the line goes with the next commit. */
  done(id: string): Promise<void> {
    this.spent += 2;
    return this.append(JSON.stringify({ done: id }), true);
  }

  load(warn: Warn): Map<string, { entry: JournalEntry; line: string }> {
    const live = new Map<string, { entry: JournalEntry; line: string }>();
    let bad = 0;
    let lines = 0;
    const take = (line: string) => {
      lines++;
      try {
        const value = JSON.parse(line) as Record<string, unknown>;
        if (value.bulkgateOutbox !== undefined) return lines--;
        if (typeof value.done === 'string') return void live.delete(value.done);
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
      warn('outbox-unreadable', { path: this.path, reason: (error as Error).message });
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

export function lockedError(path: string): GatewayError {
  return nodeError({
    type: 'outbox_locked',
    key: 'outbox-locked',
    params: { file: path },
    brief: { key: 'outbox-locked' },
  });
}
