/**
 * The tail of an append-only JSON-lines file (the outbox's journal, the tracking file). Every write
 * ends with a newline, so a last line without one was written in part: power was lost, the process
 * killed, or the disk filled mid-write. Such a line is cut back before anything is appended (as
 * Redis's `redis-check-aof --fix` and Kafka's log recovery do): appended onto it, the next line
 * would be read as one damaged line with it and lost. A write that fails is cut back to where it
 * began, for the same reason.
 *
 * The file itself (the last path component) is never opened through a symbolic link: one planted
 * at its path would receive what is written.
 */
import { closeSync, constants, fstatSync, fsyncSync, ftruncateSync, openSync, readSync } from 'node:fs';

/** `O_NOFOLLOW` where the platform has it (not on Windows, where a plain user cannot make a symbolic link). */
export const NO_FOLLOW = constants.O_NOFOLLOW ?? 0;
/** Opening for appending, created if missing, never through a symbolic link. */
export const APPEND = constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | NO_FOLLOW;
/** Opening for reading, never through a symbolic link. */
export const READ = constants.O_RDONLY | NO_FOLLOW;

/** Bytes read at once when looking back for the last newline (a torn line may be megabytes long). */
const STEP = 64 * 1024;

/**
 * Cuts a last line without its newline off the file at `path`; returns how many bytes were cut
 * (0 when the file ends with a newline, is empty or does not exist).
 */
export function cutTornTail(path: string): number {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDWR | NO_FOLLOW);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return 0;
    throw error;
  }
  try {
    const size = fstatSync(fd).size;
    if (size === 0) return 0;
    const buffer = Buffer.alloc(Math.min(STEP, size));
    readSync(fd, buffer, 0, 1, size - 1);
    if (buffer[0] === 0x0a) return 0;
    let keep = 0;
    for (let end = size; end > 0;) {
      const length = Math.min(STEP, end);
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
    return size - keep;
  } finally {
    closeSync(fd);
  }
}
