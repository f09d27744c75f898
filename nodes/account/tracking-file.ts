// Tracking across a restart: `{"s": record}` a send, `{"f": id}` its final report, `{"l": id}`
// output 3 fired (a rewrite: `{"s": {...}, "f": true, "l": true}`). Not flushed at each commit: a
// report that races a crash is the worst that can be lost.
import { join } from 'node:path';
import { fill } from '../../gateway/wording';
import { Journal } from './journal';
import type { Tracked, TrackedRecord, TrackingState } from './tracking';

/** Beyond it, no topic and payload: the file stays within about 2 x 10,000 lines of 2 KB. */
export const MAX_LINE = 2048;

export function trackingPath(userDir: string, accountId: string): string {
  return join(userDir, 'bulkgate-tracking', `${accountId.replace(/[^\w.-]/g, '_')}.jsonl`);
}

/**
 * The file's log lines in English; the nodes word them through the catalog's `tracking` section (its en-US the same: a
 * test keeps them equal).
 */
export const TRACKING_LOG = {
  torn: '__path__: the last line was written in part (__bytes__ bytes cut off before anything else is written)',
  damaged: '__path__: __lines__ damaged line(s) skipped',
  unreadable: 'could not read __path__: __reason__',
  unwritable: 'could not write __path__: __reason__',
  unrewritable: 'could not rewrite __path__: __reason__',
} as const;

export interface TrackingLine {
  key: keyof typeof TRACKING_LOG;
  params: Record<string, string | number>;
}

/** A log line: its English text, and its key and parameters for a node to word in the user's language. */
export type TrackingWarn = (text: string, line: TrackingLine) => void;

export class TrackingFile extends Journal implements TrackingState {
  #lines = 0;
  #warned = false;

  constructor(
    path: string,
    private readonly warnText: TrackingWarn = () => undefined,
  ) {
    super(path, { durable: false });
    this.torn = (bytes) => this.#warn('torn', { path, bytes });
  }

  #warn(key: TrackingLine['key'], params: TrackingLine['params']): void {
    this.warnText(
      fill(TRACKING_LOG[key], params, () => ''),
      { key, params },
    );
  }

  load(): { records: TrackedRecord[]; final: Set<string>; late: Set<string> } {
    const records: TrackedRecord[] = [];
    const final = new Set<string>();
    const late = new Set<string>();
    let damaged = 0;
    const take = (line: string) => {
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
    };
    try {
      this.read(take);
    } catch (error) {
      this.#warnOnce('unreadable', { path: this.path, reason: (error as Error).message });
    }
    if (damaged) this.#warn('damaged', { path: this.path, lines: damaged });
    return { records, final, late };
  }

  sent(record: TrackedRecord): void {
    const line = sendLine(record);
    if (line !== undefined) this.#append(line);
  }

  /** Only for a send it holds (and once). */
  final(smsId: string, here = true): void {
    if (here) this.#append(JSON.stringify({ f: smsId }));
  }

  late(smsId: string): void {
    this.#append(JSON.stringify({ l: smsId }));
  }

  compactIfSpent(remembered: number, live: () => Tracked[]): void {
    // At most about twice what is remembered, plus a margin so that a rewrite is rare.
    if (this.#lines <= 2 * remembered + 1000) return;
    // Counted again from the rewrite: a rewrite that fails is tried again at the bound.
    this.#lines = 0;
    const lines = () =>
      live().flatMap(
        (t) => sendLine(recordOf(t), { ...(t.final ? { f: true } : {}), ...(t.late ? { l: true } : {}) }) ?? [],
      );
    void this.compact(lines).then(
      (written) => (this.#lines += written),
      (error: unknown) => this.#warnOnce('unrewritable', { path: this.path, reason: (error as Error).message }),
    );
  }

  #append(line: string): void {
    this.#lines++;
    void this.append(line).catch((error: unknown) =>
      this.#warnOnce('unwritable', { path: this.path, reason: (error as Error).message }),
    );
  }

  #warnOnce(key: TrackingLine['key'], params: TrackingLine['params']): void {
    if (this.#warned) return;
    this.#warned = true;
    this.#warn(key, params);
  }
}

function recordOf(t: Tracked): TrackedRecord {
  return { smsId: t.smsId, number: t.number, sent: t.sent, acceptedAt: t.acceptedAt, countsFrom: t.countsFrom };
}

/** Not JSON, or too long: without the msg's topic and payload. */
function sendLine(record: TrackedRecord, marks: Record<string, boolean> = {}): string | undefined {
  const line = safeJson({ s: record, ...marks });
  if (line !== undefined && line.length <= MAX_LINE) return line;
  return safeJson({
    s: { ...record, sent: { topic: undefined, payload: undefined, node: record.sent.node } },
    ...marks,
  });
}

function safeJson(value: unknown): string | undefined {
  try {
    return JSON.stringify(value);
  } catch {
    return undefined;
  }
}
