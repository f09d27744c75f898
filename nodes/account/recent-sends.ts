/**
 * The sms_ids an account's nodes got back in the gateway's duplicate window (5 minutes for
 * transactional messages). With `duplicates_check` on, the gateway answers a duplicate of a recent
 * message with that message's own record (its sms_id, price 0) and does not send it again: an
 * answer whose sms_id is already here is such a dropped duplicate, not a message sent.
 */
import { Fifo } from '../../gateway/fifo';

const WINDOW_MS = 5 * 60_000;
const LIMIT = 10_000;

export class RecentSends {
  /** When each came back. */
  readonly #seen = new Map<string, number>();
  /** The oldest are forgotten from here (see Fifo for why not from the Map). */
  readonly #order = new Fifo<string>();

  /** Remembers it either way. */
  seenBefore(smsId: string, now = Date.now()): boolean {
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
