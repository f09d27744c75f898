/**
 * The sms_ids an account's nodes got back in the gateway's duplicate window (5 minutes for
 * transactional messages). With `duplicates_check` on, the gateway answers a copy of a recent
 * message with that message's own record (its sms_id, price 0) and does not send it again: an
 * answer whose sms_id is already here is such a dropped copy, not a message sent.
 */
const WINDOW_MS = 5 * 60_000;
const LIMIT = 10_000;

export class RecentSends {
  /** sms_id -> when it came back. */
  readonly #seen = new Map<string, number>();
  /**
   * The same sms_ids oldest first, from `#head` (the slots before it are empty). The oldest are forgotten from here, not by
   * iterating the Map: V8 keeps a deleted Map entry's slot until it rehashes, so a Map used as a
   * queue walks thousands of deleted slots on every send once it is full.
   */
  #order: (string | undefined)[] = [];
  #head = 0;

  /** Whether `smsId` came back within the window before; remembers it either way. */
  seenBefore(smsId: string, now = Date.now()): boolean {
    while (this.#head < this.#order.length) {
      const id = this.#order[this.#head] as string;
      if ((this.#seen.get(id) as number) > now - WINDOW_MS && this.#seen.size <= LIMIT) break;
      this.#seen.delete(id);
      // Emptied as it is passed: a forgotten id is not kept alive until the next compaction.
      this.#order[this.#head++] = undefined;
    }
    if (this.#head > 1024 && this.#head * 2 > this.#order.length) {
      this.#order = this.#order.slice(this.#head);
      this.#head = 0;
    }
    const seen = this.#seen.has(smsId);
    if (!seen) {
      this.#seen.set(smsId, now);
      this.#order.push(smsId);
    }
    return seen;
  }
}
