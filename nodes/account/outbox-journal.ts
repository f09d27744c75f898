/**
 * The outbox's file: a journal, one JSON object per line. A kept message is appended as its
 * entry; a message that left is appended as `{"done": id}`. Everything appended in the same turn
 * of the event loop goes to disk with one write and one flush (a group commit), so a backlog of
 * thousands costs a few flushes, not a whole-file rewrite per message. When most lines are
 * spent, the file is rewritten with the live entries only (a temporary file created exclusively,
 * flushed, renamed); when nothing waits, it is removed.
 *
 * One writer per file: a lock file beside it names the process holding it, taken with the first
 * message kept and given back when the outbox is empty. A second Node-RED on the same user
 * directory cannot take it while the first lives, so it never rewrites what the first keeps.
 *
 * True at its tail (file-tail.ts): a last line cut short is cut back before anything is appended;
 * a group commit that fails (a full disk) is cut back to where it began, so a message whose keep
 * was refused is never found in the file later; a `done` line that could not be written goes with
 * the next commit.
 */
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, readSync, unlinkSync, writeFileSync } from 'node:fs';
import { mkdir, open, rename, unlink, type FileHandle } from 'node:fs/promises';
import { hostname } from 'node:os';
import { dirname } from 'node:path';
import { StringDecoder } from 'node:string_decoder';
import { GatewayError } from '../../gateway';
import { APPEND, cutTornTail, READ } from './file-tail';

/** What each line of the file holds, besides the header and `done` lines. */
export interface JournalEntry {
  id: string;
  node: string;
  since: number;
}

/** A line that holds a whole entry as this outbox writes it (a damaged or hand-edited one does not). */
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

const HEADER = JSON.stringify({ bulkgateOutbox: 2 });
/** Bytes read at once when loading: a file of any size is read in steps of this. */
const READ_CHUNK = 1024 * 1024;
/** Spent lines a file may hold before it is rewritten (when they are also most of it). */
const COMPACT_AFTER = 2000;

export class Journal {
  readonly kind = 'file';
  readonly path: string;
  readonly #lockPath: string;
  #file: FileHandle | undefined;
  #locked = false;
  /** Entry lines waiting for the next group commit, and who waits for it. */
  #pending: string[] = [];
  /** `done` lines waiting for the next group commit (written after the entry lines of the same commit). */
  #pendingDone: string[] = [];
  /** `done` lines a failed commit could not write: they go with the next one. */
  #unwritten: string[] = [];
  #waiters: { resolve: () => void; reject: (error: unknown) => void }[] = [];
  #scheduled = false;
  /** The write running now: the next commit starts after it. */
  #chain: Promise<void> = Promise.resolve();
  /** Lines in the file that no longer stand for a waiting message. */
  spent = 0;
  /** Who hears of a torn tail cut back (the outbox's account node). */
  warn: Warn = () => undefined;

  constructor(path: string) {
    this.path = path;
    this.#lockPath = `${path}.lock`;
  }

  get locked(): boolean {
    return this.#locked;
  }

  get where(): string {
    return this.path;
  }

  /** Whether an earlier run left a file here. */
  exists(): boolean {
    return existsSync(this.path);
  }

  /** Appends a kept entry's line; resolves once it is on disk, rejects when it is not (and nothing of it stays there). */
  keep(line: string): Promise<void> {
    this.#pending.push(line);
    return this.#commitSoon();
  }

  /**
   * Appends the line that ends an entry; its own line and this one are spent from now on. Rejects
   * when that commit failed: the line is then written with the next commit.
   */
  done(id: string): Promise<void> {
    this.spent += 2;
    this.#pendingDone.push(JSON.stringify({ done: id }));
    return this.#commitSoon();
  }

  /**
   * Takes the file's lock, if no other living process holds it; returns whether it is held.
   * A lock left by a process that is gone (a crash, a power cut) is taken over.
   */
  lock(): boolean {
    if (this.#locked) return true;
    const me = JSON.stringify({ pid: process.pid, host: hostname() });
    for (let tries = 0; tries < 2; tries++) {
      try {
        writeFileSync(this.#lockPath, me, { flag: 'wx', mode: 0o600 });
        this.#locked = true;
        return true;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') return this.#lockWithoutDirectory(me);
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      }
      if (!this.#stale()) return false;
      try {
        unlinkSync(this.#lockPath);
      } catch {
        // Another process took it over first: the next try tells.
      }
    }
    return false;
  }

  #lockWithoutDirectory(me: string): boolean {
    // The directory is made with the first message kept; a Node-RED whose sends all succeed never writes here.
    mkdirSync(dirname(this.#lockPath), { recursive: true, mode: 0o700 });
    writeFileSync(this.#lockPath, me, { flag: 'wx', mode: 0o600 });
    this.#locked = true;
    return true;
  }

  /** Whether the lock file names a process of this machine that is gone (or cannot be read). */
  #stale(): boolean {
    let owner: { pid?: unknown; host?: unknown };
    try {
      owner = JSON.parse(readFileSync(this.#lockPath, 'utf8')) as typeof owner;
    } catch {
      return true;
    }
    if (owner.host !== hostname() || typeof owner.pid !== 'number') return false;
    if (owner.pid === process.pid) return true;
    try {
      process.kill(owner.pid, 0);
      return false;
    } catch (error) {
      return (error as NodeJS.ErrnoException).code === 'ESRCH';
    }
  }

  /**
   * Reads the entries the file holds, oldest first as written, without the ones a `done` line
   * ended; damaged lines are counted and skipped. Reads in steps, never the whole file as one
   * string, and never passes entries as call arguments.
   */
  load(warn: Warn): Map<string, { entry: JournalEntry; line: string }> {
    const live = new Map<string, { entry: JournalEntry; line: string }>();
    let fd: number;
    try {
      this.#cutTornTail(warn);
      fd = openSync(this.path, READ);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') warn('outbox-unreadable', { path: this.path, reason: (error as Error).message });
      return live;
    }
    let bad = 0;
    let lines = 0;
    const take = (line: string) => {
      if (!line.trim()) return;
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
      const buffer = Buffer.alloc(READ_CHUNK);
      let rest = '';
      const decoder = new StringDecoder('utf8');
      for (;;) {
        const read = readSync(fd, buffer, 0, READ_CHUNK, null);
        if (read === 0) break;
        const text = rest + decoder.write(buffer.subarray(0, read));
        let start = 0;
        for (let end = text.indexOf('\n', start); end >= 0; end = text.indexOf('\n', start)) {
          take(text.slice(start, end));
          start = end + 1;
        }
        rest = text.slice(start);
      }
      take(rest + decoder.end());
    } catch (error) {
      warn('outbox-unreadable', { path: this.path, reason: (error as Error).message });
    } finally {
      closeSync(fd);
    }
    if (bad) warn('outbox-bad-lines', { path: this.path, bad, kept: live.size });
    this.spent = lines - live.size;
    return live;
  }

  /** Resolves once what was appended in this turn of the event loop is on disk. */
  #commitSoon(): Promise<void> {
    return new Promise((resolve, reject) => {
      this.#waiters.push({ resolve, reject });
      if (this.#scheduled) return;
      this.#scheduled = true;
      setImmediate(() => {
        this.#scheduled = false;
        this.#chain = this.#chain.then(() => this.#commit());
      });
    });
  }

  async #commit(): Promise<void> {
    const done = this.#unwritten.concat(this.#pendingDone);
    const lines = this.#pending.concat(done);
    const waiters = this.#waiters;
    this.#pending = [];
    this.#pendingDone = [];
    this.#unwritten = [];
    this.#waiters = [];
    if (!waiters.length) return;
    let file: FileHandle | undefined;
    let start = 0;
    try {
      file = await this.#open();
      start = (await file.stat()).size;
      if (lines.length) {
        await file.appendFile(lines.join('\n') + '\n', 'utf8');
        await file.datasync();
      }
      for (const waiter of waiters) waiter.resolve();
    } catch (error) {
      // Whatever part of this commit reached the file is cut back: a message whose keep is
      // refused here goes to Catch, and must not be found and sent after a restart.
      if (file) await file.truncate(start).catch(() => undefined);
      this.#unwritten = done.concat(this.#unwritten);
      // The next commit opens the file again.
      await this.#close();
      for (const waiter of waiters) waiter.reject(error);
    }
  }

  /** Cuts a last line written in part off the file, and says so. */
  #cutTornTail(warn: Warn): void {
    const bytes = cutTornTail(this.path);
    if (bytes > 0) warn('outbox-torn-tail', { path: this.path, bytes });
  }

  async #open(): Promise<FileHandle> {
    if (this.#file) return this.#file;
    if (!this.lock()) throw lockedError(this.path);
    await mkdir(dirname(this.path), { recursive: true, mode: 0o700 });
    this.#cutTornTail(this.warn);
    const file = await open(this.path, APPEND, 0o600);
    try {
      if ((await file.stat()).size === 0) await file.appendFile(HEADER + '\n', 'utf8');
    } catch (error) {
      await file.close();
      throw error;
    }
    this.#file = file;
    return file;
  }

  async #close(): Promise<void> {
    const file = this.#file;
    this.#file = undefined;
    await file?.close().catch(() => undefined);
  }

  /** Whether the file is mostly spent lines: time to rewrite it with the live ones. */
  wantsCompaction(live: number): boolean {
    return this.spent > COMPACT_AFTER && this.spent > live;
  }

  /**
   * Rewrites the file with these lines only (after what is appended now is on disk): a temporary
   * file created exclusively (a planted file or symlink of that name makes it fail, never followed),
   * flushed, renamed over the journal, the directory flushed.
   */
  compact(lines: () => string[]): Promise<void> {
    const run = this.#chain.then(async () => {
      if (!this.#locked) return;
      const temporary = `${this.path}.${process.pid}.${Date.now().toString(36)}.tmp`;
      const file = await open(temporary, 'wx', 0o600);
      try {
        await file.write(HEADER);
        for (const part of chunked(lines())) await file.write(part);
        await file.sync();
      } catch (error) {
        await file.close();
        await unlink(temporary).catch(() => undefined);
        throw error;
      }
      await file.close();
      await this.#close();
      await rename(temporary, this.path);
      await syncDirectory(this.path);
      this.spent = 0;
    });
    this.#chain = run.catch(() => undefined);
    return run;
  }

  /** Closes the file (after what is appended now is on disk); the next append opens it again. */
  close(): Promise<void> {
    const run = this.#chain.then(() => this.#close());
    this.#chain = run;
    return run;
  }

  /** Nothing waits: the file and its lock are removed (after what is appended now is on disk). */
  release(): Promise<void> {
    const run = this.#chain.then(async () => {
      if (!this.#locked || this.#pending.length) return;
      // `done` lines not yet written end entries of a file that goes: nothing to write.
      this.#unwritten = [];
      await this.#close();
      await unlink(this.path).catch(() => undefined);
      this.spent = 0;
      try {
        unlinkSync(this.#lockPath);
      } catch {
        // Already gone.
      }
      this.#locked = false;
    });
    this.#chain = run.catch(() => undefined);
    return run;
  }
}

/** The lines with their newlines, as one string per thousand lines (no string of the whole file held twice). */
function chunked(lines: string[]): string[] {
  const parts: string[] = ['\n'];
  for (let i = 0; i < lines.length; i += 1000) parts.push(lines.slice(i, i + 1000).join('\n') + '\n');
  return parts;
}

async function syncDirectory(path: string): Promise<void> {
  try {
    const directory = await open(dirname(path), 'r');
    await directory.sync().finally(() => directory.close());
  } catch {
    // Not every file system can flush a directory; the rename is atomic either way.
  }
}

/** The error a msg ends with when another Node-RED process holds this outbox file. */
export function lockedError(path: string): GatewayError {
  return new GatewayError({
    type: 'outbox_locked',
    message: `Not kept: another Node-RED process holds the outbox file ${path} (two Node-REDs on one user directory); this message could not wait for the gateway`,
    brief: { key: 'outbox-locked' },
  });
}
