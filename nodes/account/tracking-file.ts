/**
 * Delivery tracking kept in the user directory, so that a restart or an update does not forget
 * what was sent: `<userDir>/bulkgate-tracking/<account id>.jsonl`, one line per event:
 *
 * - `{"s": <Tracked without its flags>}`: a send the gateway accepted;
 * - `{"f": "<sms_id>"}`: its final report came (no `no_report` for it any more);
 * - `{"l": "<sms_id>"}`: output 3 fired for it (it does not fire again after a restart);
 * - after a rewrite, a send with its marks on one line: `{"s": {...}, "f": true, "l": true}`.
 *
 * Written only while an events node tracks the account (the tracker writes nothing otherwise),
 * appended once per turn of the event loop (no fsync: a report that races a crash is the worst
 * that can be lost), and rewritten with the remembered sends alone when most lines are spent.
 * Loading skips damaged lines; the tracker applies its bounds (10,000, 24 h) to what it loads. The
 * tail follows the outbox journal's rules (file-tail.ts): a last line cut short is cut back before
 * anything is appended, a write that fails is cut back to where it began, and the file is never
 * opened through a symbolic link.
 */
import { closeSync, existsSync, fstatSync, ftruncateSync, mkdirSync, openSync, readFileSync, renameSync, unlinkSync, writeFileSync, writeSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { dirname, join } from 'node:path';
import { APPEND, cutTornTail, READ } from './file-tail';
import type { Tracked, TrackedRecord, TrackingLog } from './tracking';

/**
 * A line beyond this keeps the send without the msg's topic and payload (a report after a restart
 * still finds it, without `msg.sent.payload`): the file stays within about 2 x 10,000 lines of 2 KB.
 */
export const MAX_LINE = 2048;

export function trackingPath(userDir: string, accountId: string): string {
  return join(userDir, 'bulkgate-tracking', `${accountId.replace(/[^\w.-]/g, '_')}.jsonl`);
}

export class TrackingFile implements TrackingLog {
  #pending = '';
  #flushing = false;
  #lines = 0;
  #warned = false;
  /** Whether a torn last line was looked for (once, before the first append). */
  #tailChecked = false;

  constructor(
    readonly path: string,
    private readonly warn: (text: string) => void = () => undefined,
  ) {}

  load(): { records: TrackedRecord[]; final: Set<string>; late: Set<string> } {
    const records: TrackedRecord[] = [];
    const final = new Set<string>();
    const late = new Set<string>();
    if (!existsSync(this.path)) return { records, final, late };
    let text: string;
    try {
      this.#cutTornTail();
      const fd = openSync(this.path, READ);
      try {
        text = readFileSync(fd, 'utf8');
      } finally {
        closeSync(fd);
      }
    } catch (error) {
      this.#warnOnce(`could not read ${this.path}: ${(error as Error).message}`);
      return { records, final, late };
    }
    let damaged = 0;
    for (const line of text.split('\n')) {
      if (!line) continue;
      this.#lines++;
      try {
        const parsed = JSON.parse(line) as { s?: TrackedRecord; f?: string | boolean; l?: string | boolean };
        if (parsed.s && typeof parsed.s.smsId === 'string' && typeof parsed.s.acceptedAt === 'number') {
          records.push(parsed.s);
          if (parsed.f === true) final.add(parsed.s.smsId);
          if (parsed.l === true) late.add(parsed.s.smsId);
        } else if (typeof parsed.f === 'string') final.add(parsed.f);
        else if (typeof parsed.l === 'string') late.add(parsed.l);
        else damaged++;
      } catch {
        damaged++;
      }
    }
    if (damaged) this.warn(`${this.path}: ${damaged} damaged line(s) skipped`);
    return { records, final, late };
  }

  sent(record: TrackedRecord): void {
    const line = sendLine(record);
    if (line !== undefined) this.#append(line);
  }

  final(smsId: string): void {
    this.#append(JSON.stringify({ f: smsId }));
  }

  late(smsId: string): void {
    this.#append(JSON.stringify({ l: smsId }));
  }

  compactIfSpent(remembered: number, live: () => Tracked[]): void {
    // At most about twice what is remembered, plus a margin so that a rewrite is rare.
    if (this.#lines <= 2 * remembered + 1000) return;
    this.#flush();
    const lines: string[] = [];
    for (const t of live()) {
      const line = sendLine(recordOf(t), { ...(t.final ? { f: true } : {}), ...(t.late ? { l: true } : {}) });
      if (line !== undefined) lines.push(line);
    }
    // Created exclusively (a planted file or symlink is not followed), then moved over the old one.
    const temporary = `${this.path}.${randomBytes(6).toString('hex')}.tmp`;
    try {
      writeFileSync(temporary, lines.length ? `${lines.join('\n')}\n` : '', { flag: 'wx', mode: 0o600 });
      renameSync(temporary, this.path);
      this.#lines = lines.length;
    } catch (error) {
      try {
        unlinkSync(temporary);
      } catch {
        // It was not created.
      }
      this.#warnOnce(`could not rewrite ${this.path}: ${(error as Error).message}`);
    }
  }

  #append(line: string): void {
    this.#pending += `${line}\n`;
    this.#lines++;
    if (this.#flushing) return;
    this.#flushing = true;
    setImmediate(() => this.#flush());
  }

  #flush(): void {
    this.#flushing = false;
    const text = this.#pending;
    if (!text) return;
    this.#pending = '';
    let fd: number | undefined;
    let start = 0;
    try {
      mkdirSync(dirname(this.path), { recursive: true, mode: 0o700 });
      if (!this.#tailChecked) this.#cutTornTail();
      fd = openSync(this.path, APPEND, 0o600);
      start = fstatSync(fd).size;
      const bytes = Buffer.from(text);
      // A write may take part of the bytes (a disk filling up): the rest follows, or its error does.
      for (let written = 0; written < bytes.length;) written += writeSync(fd, bytes, written);
    } catch (error) {
      // Nothing of a failed write stays: the next one starts on a line of its own.
      if (fd !== undefined) {
        try {
          ftruncateSync(fd, start);
        } catch {
          // The next load cuts it back instead.
        }
      }
      this.#warnOnce(`could not write ${this.path}: ${(error as Error).message}`);
    } finally {
      if (fd !== undefined) closeSync(fd);
    }
  }

  #cutTornTail(): void {
    this.#tailChecked = true;
    const bytes = cutTornTail(this.path);
    if (bytes > 0) this.warn(`${this.path}: the last line was written in part (${bytes} bytes cut off before anything else is written)`);
  }

  #warnOnce(text: string): void {
    if (this.#warned) return;
    this.#warned = true;
    this.warn(text);
  }
}

function recordOf(t: Tracked): TrackedRecord {
  return { smsId: t.smsId, number: t.number, sent: t.sent, acceptedAt: t.acceptedAt, countsFrom: t.countsFrom };
}

/** A send's line; one that cannot be written as JSON, or is too long, keeps the send without the msg's topic and payload. */
function sendLine(record: TrackedRecord, marks: Record<string, boolean> = {}): string | undefined {
  const line = safeJson({ s: record, ...marks });
  if (line !== undefined && line.length <= MAX_LINE) return line;
  return safeJson({ s: { ...record, sent: { topic: undefined, payload: undefined, node: record.sent.node } }, ...marks });
}

function safeJson(value: unknown): string | undefined {
  try {
    return JSON.stringify(value);
  } catch {
    return undefined;
  }
}
