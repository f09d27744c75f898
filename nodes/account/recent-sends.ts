// The sms_ids got back in the gateway's duplicate window (5 minutes): with `duplicates_check`, the
// gateway answers a duplicate with the first one's record (its sms_id, price 0) and sends nothing.
import { monotonicNow } from '../../gateway/clock';
import { Fifo } from '../../gateway/fifo';
import { DUPLICATE_WINDOW_MS as WINDOW_MS } from '../../gateway/resend';

const LIMIT = 10_000;

export class RecentSends {
  readonly #seen = new Map<string, number>();
  /** The oldest are forgotten from here (Fifo says why not from the Map). */
  readonly #order = new Fifo<string>();

  /**
   * Remembers it either way; the window on the monotonic clock (a step of the wall clock neither ends it nor stretches
   * it).
   */
  seenBefore(smsId: string, now = monotonicNow()): boolean {
    for (let id = this.#order.peek(); id !== undefined; id = this.#order.peek()) {
      if ((this.#seen.get(id) as number) > now - WINDOW_MS && this.#seen.size <= LIMIT) break;
      this.#seen.delete(id);
      this.#order.shift();
    }
    if (this.#seen.has(smsId)) return true;
    this.#seen.set(smsId, now);
    this.#order.push(smsId);
    return false;
  }
}
