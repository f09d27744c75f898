/**
 * A process that compacts an outbox journal and is killed (SIGKILL, by itself) at one step of the
 * compaction, as a power cut or the OOM killer would: `node compaction-child.js <journal> <step>`.
 * It keeps 3,000 entries, ends the first 2,500 (so the file is mostly spent), then compacts. The
 * steps are found by standing in for the file system's calls the compaction makes.
 */
import fs from 'node:fs/promises';
import { OutboxJournal } from '../../nodes/account/outbox-journal';

export const STEPS = [
  'temporary-created',
  'temporary-half-written',
  'before-flush',
  'after-flush',
  'before-rename',
  'after-rename',
  'before-directory-flush',
  'compacted',
] as const;
export const KEPT = 3000;
export const ENDED = 2500;
export const entryLine = (i: number) =>
  JSON.stringify({
    id: `e${i}`,
    node: 't',
    body: { text: `Alert e${i}` },
    since: 1_700_000_000_000 + i,
    order: i,
    attempts: 1,
    reason: '',
  });

const die = (): never => {
  process.kill(process.pid, 'SIGKILL');
  throw new Error('unreachable');
};

async function standIn(step: string): Promise<void> {
  const probe = await fs.open(__filename, 'r');
  const handle = Object.getPrototypeOf(probe) as Record<string, (...args: unknown[]) => Promise<unknown>>;
  await probe.close();
  const patch = (
    target: Record<string, unknown>,
    name: string,
    around: (original: (...args: unknown[]) => Promise<unknown>, args: unknown[], self: unknown) => Promise<unknown>,
  ) => {
    const original = target[name] as (...args: unknown[]) => Promise<unknown>;
    target[name] = function (this: unknown, ...args: unknown[]) {
      return around(original.bind(this), args, this);
    };
  };
  const mutableFs = fs as unknown as Record<string, unknown>;
  patch(mutableFs, 'open', async (original, args) => {
    const [path, flags] = args as [string, string];
    if (step === 'before-directory-flush' && flags === 'r' && !path.endsWith('.js')) die();
    const file = await original(...args);
    if (step === 'temporary-created' && path.endsWith('.tmp')) die();
    return file;
  });
  let writes = 0;
  patch(handle, 'write', async (original, args) => {
    // The lines' first write (after the header's) stops half-way, as a kill mid-write leaves it.
    if (step === 'temporary-half-written' && ++writes === 2) {
      const data = args[0] as string;
      await original(data.slice(0, Math.floor(data.length / 2)));
      die();
    }
    return original(...args);
  });
  patch(handle, 'sync', async (original, args) => {
    if (step === 'before-flush') die();
    const done = await original(...args);
    if (step === 'after-flush') die();
    return done;
  });
  patch(mutableFs, 'rename', async (original, args) => {
    if (step === 'before-rename') die();
    const done = await original(...args);
    if (step === 'after-rename') die();
    return done;
  });
}

async function main(): Promise<void> {
  const [path, step] = process.argv.slice(2) as [string, string];
  const journal = new OutboxJournal(path);
  if (!journal.lock()) throw new Error('not locked');
  await Promise.all(Array.from({ length: KEPT }, (_, i) => journal.keep(entryLine(i))));
  await Promise.all(Array.from({ length: ENDED }, (_, i) => journal.done(`e${i}`)));
  if (!journal.wantsCompaction(KEPT - ENDED)) throw new Error('not mostly spent');
  await standIn(step);
  await journal.compact(() => Array.from({ length: KEPT - ENDED }, (_, i) => entryLine(ENDED + i)));
  if (step === 'compacted') die();
}

if (require.main === module) void main();
