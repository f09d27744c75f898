/** Bounds reports not yet emitted: a call waits, unread; after `waitMs`, 503 (the gateway may not resend). */
import { Fifo } from '../../gateway/fifo';

export class ReportGate {
  pending = 0;
  readonly #waiting = new Fifo<{ enter: () => void; timer: NodeJS.Timeout }>();
  /** Calls let in whose reports are not read yet: a waiting call goes in only when their count is known. */
  #reading = 0;
  refused = 0;

  constructor(
    readonly limit: number,
    readonly waitMs: number,
  ) {}

  /** Resolves when a call may read its reports; rejects (`refused` counted) after `waitMs` without room. */
  enter(): Promise<void> {
    if (this.pending < this.limit && !this.#waiting.size) {
      this.#reading++;
      return Promise.resolve();
    }
    return new Promise((resolve, reject) => {
      const waiter = {
        enter: () => {
          clearTimeout(waiter.timer);
          resolve();
        },
        timer: setTimeout(() => {
          this.#waiting.remove(waiter);
          this.refused++;
          reject(new Error('no room for more reports'));
        }, this.waitMs),
      };
      this.#waiting.push(waiter);
    });
  }

  taken(count: number): void {
    this.pending += count;
    this.left();
  }

  /** A call that went in ends without reports (refused once read). */
  left(): void {
    this.#reading = Math.max(0, this.#reading - 1);
    this.#admit();
  }

  /** Reports were emitted (or dropped by a closed node): a call waiting goes in when there is room. */
  emitted(count: number): void {
    this.pending = Math.max(0, this.pending - count);
    this.#admit();
  }

  /** Lets the oldest waiting call in, one at a time: its reports are counted before the next one's room is judged. */
  #admit(): void {
    if (this.#reading > 0 || this.pending >= this.limit) return;
    const next = this.#waiting.shift();
    if (!next) return;
    this.#reading++;
    next.enter();
  }

  /** The node closed: whatever waits goes in (a closed node emits nothing of it). */
  open(): void {
    this.pending = 0;
    this.#reading = 0;
    for (const waiter of this.#waiting) waiter.enter();
    this.#waiting.clear();
  }
}
