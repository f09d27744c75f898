// An append-only file of JSON lines, one write per event-loop turn. A torn last line (power lost, a kill, a full disk)
// is cut back before an append, or the next line would be lost with it. Owner only, never through a symlink (a planted
// one would receive what is written); a lock: one writer. The lock names its holder ({pid, host}) and is touched every
// few seconds while held: one not touched for the bound is stale whatever host wrote it (a container recreated, a pod
// replaced come back under another host name, with the same user directory).
import {
  closeSync,
  constants,
  existsSync,
  fstatSync,
  fsyncSync,
  ftruncateSync,
  futimesSync,
  mkdirSync,
  openSync,
  readFileSync,
  readSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { mkdir, open, rename, unlink, type FileHandle } from 'node:fs/promises';
import { hostname } from 'node:os';
import { dirname } from 'node:path';
import { StringDecoder } from 'node:string_decoder';

/** Not on Windows, where a plain user cannot make a symbolic link. */
const NO_FOLLOW = constants.O_NOFOLLOW ?? 0;
/** A file of any size is loaded, and a torn line of any length found, in steps of this. */
const CHUNK = 1024 * 1024;

/** The longest a line that rides the next commit waits for one (`ride`). */
const RIDE_MS = 1000;

/** A lock not touched for longer is stale, whatever host wrote it: its holder is gone. */
export const LOCK_STALE_MS = 30_000;

/** The bound: BULKGATE_OUTBOX_LOCK_STALE_MS where set (tests wait seconds, not 30), within setTimeout's range. */
export function lockStaleMs(env: NodeJS.ProcessEnv = process.env): number {
  const ms = Number(env.BULKGATE_OUTBOX_LOCK_STALE_MS);
  return Number.isFinite(ms) && ms >= 600 ? Math.min(ms, 2 ** 31 - 1) : LOCK_STALE_MS;
}

/** The locks this process holds: a graceful stop (Node-RED exits after SIGTERM) gives them up. */
const held = new Set<Journal>();
let releaseOnExit = false;

/** The lock as last seen by this process: its text and time, and when (monotonic) it last changed. */
interface Seen {
  signature: string;
  since: number;
  /** Changed while this process looked: its holder touches it. */
  touched: boolean;
  /** Its age by the wall clock when first seen (0 for a time ahead); from then on it ages on the monotonic clock. */
  age: number;
}

export class Journal {
  readonly #lockPath: string;
  #file: FileHandle | undefined;
  #locked = false;
  /** Lines for the next commit; when it fails, their appends are refused. */
  #pending: string[] = [];
  /** Lines for the next commit that, when it fails, go with the one after (written after `#pending`). */
  #again: string[] = [];
  /** Lines no caller waits for, written with the next commit (after `#again`), or within RIDE_MS. */
  #riders: string[] = [];
  #rideTimer: NodeJS.Timeout | undefined;
  #waiters: { resolve: () => void; reject: (error: unknown) => void }[] = [];
  #scheduled = false;
  #chain: Promise<unknown> = Promise.resolve();
  #compaction: Promise<number> | undefined;
  /** What this process writes into the lock it holds. */
  #me = '';
  #heartbeat: NodeJS.Timeout | undefined;
  /** Taken over by another process (this one did not touch it for the bound): not taken again by an append. */
  #lost = false;
  #seen: Seen | undefined;
  torn: (bytes: number) => void = () => undefined;
  /** Another process took the lock over: its file is that one's now. */
  lost: () => void = () => undefined;
  readonly staleMs = lockStaleMs();
  /** Six touches per bound: a few missed (a busy event loop, a slow disk) still leave it fresh. */
  readonly touchEveryMs = Math.max(100, Math.floor(this.staleMs / 6));

  /** `header`: a new or rewritten file's first line; `lockedError`: one writer, with the lock. */
  constructor(
    readonly path: string,
    private readonly options: { durable: boolean; header?: string; lockedError?: (path: string) => Error },
  ) {
    this.#lockPath = `${path}.lock`;
  }

  get locked(): boolean {
    return this.#locked;
  }

  exists(): boolean {
    return existsSync(this.path);
  }

  /** Rejects when it is not written (and nothing of it stays); `again`: then it goes with the next commit. */
  append(line: string, again = false): Promise<void> {
    (again ? this.#again : this.#pending).push(line);
    return new Promise((resolve, reject) => {
      this.#waiters.push({ resolve, reject });
      if (this.#scheduled) return;
      this.#scheduled = true;
      setImmediate(() => this.#flush());
    });
  }

  /**
   * Written with the next commit, without a flush of its own: what is lost with it in a crash costs a repeat the caller
   * allows for, not a write and a flush per line. An idle file still gets it within RIDE_MS.
   */
  ride(line: string): void {
    this.#riders.push(line);
    this.#rideTimer ??= setTimeout(() => {
      this.#rideTimer = undefined;
      if (this.#riders.length) this.#flush();
    }, RIDE_MS);
    this.#rideTimer.unref?.();
  }

  /** A commit scheduled earlier then finds nothing to do. */
  #flush(): void {
    this.#scheduled = false;
    this.#chain = this.#chain.then(() => this.#commit());
  }

  async #commit(): Promise<void> {
    const again = this.#again;
    const riders = this.#riders;
    const lines = this.#pending.concat(again, riders);
    const waiters = this.#waiters;
    this.#pending = [];
    this.#again = [];
    this.#riders = [];
    this.#waiters = [];
    if (!lines.length) return;
    let file: FileHandle | undefined;
    let start = 0;
    try {
      file = await this.#open();
      start = (await file.stat()).size;
      await file.appendFile(lines.join('\n') + '\n', 'utf8');
      // Riders alone need no flush: they are written so that a graceful stop or the next commit keeps them.
      if (this.options.durable && waiters.length) await file.datasync();
      for (const waiter of waiters) waiter.resolve();
    } catch (error) {
      // Cut back: a keep refused here goes to Catch, and must not be sent after a restart.
      if (file) await file.truncate(start).catch(() => undefined);
      this.#again = again.concat(this.#again);
      this.#riders = riders.concat(this.#riders);
      await this.#close();
      for (const waiter of waiters) waiter.reject(error);
    }
  }

  async #open(): Promise<FileHandle> {
    if (this.#file) return this.#file;
    const { header, lockedError } = this.options;
    if (lockedError && (this.#lost || !this.lock())) throw lockedError(this.path);
    await mkdir(dirname(this.path), { recursive: true, mode: 0o700 });
    this.#cutTornTail(this.torn);
    const file = await open(this.path, constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | NO_FOLLOW, 0o600);
    try {
      if (header && (await file.stat()).size === 0) await file.appendFile(header + '\n', 'utf8');
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

  #cutTornTail(torn: (bytes: number) => void): void {
    let fd: number;
    try {
      fd = openSync(this.path, constants.O_RDWR | NO_FOLLOW);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
      throw error;
    }
    try {
      const size = fstatSync(fd).size;
      if (size === 0) return;
      const buffer = Buffer.alloc(Math.min(CHUNK, size));
      readSync(fd, buffer, 0, 1, size - 1);
      if (buffer[0] === 0x0a) return;
      let keep = 0;
      for (let end = size; end > 0;) {
        const length = Math.min(CHUNK, end);
        const start = end - length;
        readSync(fd, buffer, 0, length, start);
        const newline = buffer.subarray(0, length).lastIndexOf(0x0a);
        if (newline >= 0) {
          keep = start + newline + 1;
          break;
        }
        end = start;
      }
      ftruncateSync(fd, keep);
      fsyncSync(fd);
      torn(size - keep);
    } finally {
      closeSync(fd);
    }
  }

  /** Never the whole file as one string. */
  read(take: (line: string) => void, torn = this.torn): void {
    if (!this.exists()) return;
    this.#cutTornTail(torn);
    const fd = openSync(this.path, constants.O_RDONLY | NO_FOLLOW);
    try {
      const buffer = Buffer.alloc(CHUNK);
      const decoder = new StringDecoder('utf8');
      let rest = '';
      for (let read = readSync(fd, buffer); read > 0; read = readSync(fd, buffer)) {
        const lines = (rest + decoder.write(buffer.subarray(0, read))).split('\n');
        rest = lines.pop() as string;
        for (const line of lines) if (line.trim()) take(line);
      }
    } finally {
      closeSync(fd);
    }
  }

  /** Whether it is held; one whose holder is gone (a crash, a power cut, a container recreated) is taken over. */
  lock(): boolean {
    if (this.#locked) return true;
    const me = JSON.stringify({ pid: process.pid, host: hostname() });
    // Made with the first line: a Node-RED whose sends all succeed never writes here.
    mkdirSync(dirname(this.#lockPath), { recursive: true, mode: 0o700 });
    for (let tries = 0; tries < 2; tries++) {
      try {
        writeFileSync(this.#lockPath, me, { flag: 'wx', mode: 0o600 });
        this.#hold(me);
        return true;
      } catch (error) {
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

  #hold(me: string): void {
    this.#me = me;
    this.#locked = true;
    this.#lost = false;
    this.#seen = undefined;
    clearInterval(this.#heartbeat);
    this.#heartbeat = setInterval(() => this.#touch(), this.touchEveryMs);
    this.#heartbeat.unref?.();
    held.add(this);
    if (!releaseOnExit) {
      releaseOnExit = true;
      process.on('exit', () => {
        for (const journal of held) journal.unlock();
      });
    }
  }

  /** Still this process's: its time set to now. Never throws (a timer's). */
  #touch(): void {
    let fd: number | undefined;
    try {
      fd = openSync(this.#lockPath, constants.O_RDONLY | NO_FOLLOW);
      const text = readFileSync(fd, 'utf8');
      if (text !== this.#me) return this.#lose();
      const now = new Date();
      futimesSync(fd, now, now);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') this.#lose();
      // Otherwise (a disk that does not answer for a moment) the next touch tries again.
    } finally {
      if (fd !== undefined) closeSync(fd);
    }
  }

  /** Another process holds it now: nothing more is written here until it is taken again. */
  #lose(): void {
    this.#stopHolding();
    this.#lost = true;
    this.#chain = this.#chain.then(() => this.#close());
    try {
      this.lost();
    } catch {
      // The holder's to report; a timer never throws into Node-RED.
    }
  }

  #stopHolding(): void {
    clearInterval(this.#heartbeat);
    this.#heartbeat = undefined;
    this.#locked = false;
    held.delete(this);
  }

  /**
   * What the process's exit does (the tests' restarts too): the lock file goes when it is still this process's, and is
   * no longer touched; the journal stays for the next start.
   */
  unlock(): void {
    try {
      if (readFileSync(this.#lockPath, 'utf8') === this.#me) unlinkSync(this.#lockPath);
    } catch {
      // Gone already, or never readable: nothing to give up.
    }
    this.#stopHolding();
  }

  /** The lock's text and time, as another process sees it; undefined when there is none. */
  #look(): { owner: { pid?: unknown; host?: unknown } | undefined; seen: Seen } | undefined {
    let text: string;
    let mtime: number;
    let fd: number;
    try {
      fd = openSync(this.#lockPath, constants.O_RDONLY | NO_FOLLOW);
    } catch {
      return undefined;
    }
    try {
      text = readFileSync(fd, 'utf8');
      mtime = fstatSync(fd).mtimeMs;
    } catch {
      text = '';
      mtime = 0;
    } finally {
      closeSync(fd);
    }
    const signature = `${mtime} ${text}`;
    const now = performance.now();
    const last = this.#seen;
    if (!last || last.signature !== signature)
      this.#seen = { signature, since: now, touched: last !== undefined, age: Math.max(0, Date.now() - mtime) };
    let owner: { pid?: unknown; host?: unknown } | undefined;
    try {
      owner = JSON.parse(text) as typeof owner;
    } catch {
      owner = undefined;
    }
    return { owner, seen: this.#seen as Seen };
  }

  /** Whether its holder is gone: a process of this machine not running, the lock unreadable or untouched too long. */
  #stale(): boolean {
    const look = this.#look();
    if (!look?.owner || typeof look.owner !== 'object') return true;
    const { owner, seen } = look;
    if (owner.host === hostname() && typeof owner.pid === 'number') {
      if (owner.pid === process.pid) return true;
      try {
        process.kill(owner.pid, 0);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ESRCH') return true;
      }
    }
    // Its time is the wall clock's (the holder's, through the file system), read once when first seen; then the lock
    // not seen changing, on this process's own clock: a holder's clock ahead counts from then, and a step of the wall
    // clock while this process watches makes no living holder's lock stale.
    return seen.age + (performance.now() - seen.since) > this.staleMs;
  }

  /** Whether another process that holds the lock is known to run: one of this machine, or a lock touched lately. */
  holderAlive(): boolean {
    if (this.#locked) return false;
    const look = this.#look();
    if (!look) return false;
    const { owner, seen } = look;
    if (owner && owner.host === hostname() && typeof owner.pid === 'number' && owner.pid !== process.pid) {
      try {
        process.kill(owner.pid, 0);
        return true;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ESRCH') return true;
      }
    }
    return seen.touched && performance.now() - seen.since <= 3 * this.touchEveryMs;
  }

  /** After what is appended now; resolves with how many (asked meanwhile: the queued one). */
  compact(lines: () => string[]): Promise<number> {
    if (this.#compaction) return this.#compaction;
    this.#flush();
    const run = this.#chain.then(() => this.#rewrite(lines())).finally(() => (this.#compaction = undefined));
    this.#chain = run.catch(() => undefined);
    this.#compaction = run;
    return run;
  }

  async #rewrite(lines: string[]): Promise<number> {
    if (this.options.lockedError && !this.#locked) return 0;
    const temporary = `${this.path}.${process.pid}.${Date.now().toString(36)}.tmp`;
    // Created exclusively: a planted file or symlink of that name makes it fail, never followed.
    const file = await open(temporary, 'wx', 0o600);
    try {
      if (this.options.header) await file.write(this.options.header + '\n');
      // No string of the whole file held twice.
      for (let i = 0; i < lines.length; i += 1000) await file.write(lines.slice(i, i + 1000).join('\n') + '\n');
      await file.sync();
      await file.close();
      await this.#close();
      await rename(temporary, this.path);
    } catch (error) {
      // Closing twice does nothing.
      await file.close();
      await unlink(temporary).catch(() => undefined);
      throw error;
    }
    try {
      const directory = await open(dirname(this.path), 'r');
      await directory.sync().finally(() => directory.close());
    } catch {
      // Not every file system can flush a directory; the rename is atomic either way.
    }
    return lines.length;
  }

  /** Once what was appended is written; the next append opens it again. */
  close(): Promise<void> {
    this.#flush();
    const run = this.#chain.then(() => this.#close());
    this.#chain = run;
    return run;
  }

  /** Removes the file and its lock after what is appended now, unless a line was appended since. */
  release(): Promise<void> {
    const run = this.#chain.then(async () => {
      if (!this.#locked || this.#waiters.length) return;
      // Lines a failed commit left end what the file held: with it gone, nothing to write.
      this.#again = [];
      this.#riders = [];
      await this.#close();
      await unlink(this.path).catch(() => undefined);
      // In the same step as `#locked = false`: no moment holds the lock without its file.
      try {
        unlinkSync(this.#lockPath);
      } catch {
        // Already gone.
      }
      this.#stopHolding();
    });
    this.#chain = run.catch(() => undefined);
    return run;
  }
}
