/**
 * The package's one first-in, first-out queue, oldest first: the requests waiting for a
 * connection (transport.ts), the msgs waiting for an account's rate limit, the webhook calls
 * waiting for room (report-gate.ts), and what an account remembers (the recent sms_ids, the
 * tracked sends, an events node's report timeouts).
 *
 * Not a Map used as a queue: V8 keeps a deleted Map entry's slot until the table rehashes, so
 * forgetting the oldest by iterating a Map from its start walks thousands of deleted slots on
 * every send once 10,000 are held. Not `Array.shift` either (it moves every item). An array with
 * a head: each slot is emptied as the head passes it, so what was forgotten is not kept alive
 * here, and the array is cut down once most of it is spent.
 */
export class Fifo<T> {
  #items: (T | undefined)[] = [];
  #head = 0;

  get size(): number {
    return this.#items.length - this.#head;
  }

  push(item: T): void {
    this.#items.push(item);
  }

  /** The oldest, left in place. */
  peek(): T | undefined {
    return this.#items[this.#head];
  }

  /** Takes the oldest out. */
  shift(): T | undefined {
    if (this.#head >= this.#items.length) return undefined;
    const item = this.#items[this.#head];
    this.#items[this.#head++] = undefined;
    if (this.#head > 1024 && this.#head * 2 > this.#items.length) {
      this.#items = this.#items.slice(this.#head);
      this.#head = 0;
    }
    return item;
  }

  /** Takes `item` out wherever it is (one that gave up its turn); false when it is not here. */
  remove(item: T): boolean {
    if (this.size && this.peek() === item) return this.shift() === item;
    const i = this.#items.indexOf(item, this.#head);
    if (i >= 0) this.#items.splice(i, 1);
    return i >= 0;
  }

  /** Oldest first. */
  *[Symbol.iterator](): Iterator<T> {
    for (let i = this.#head; i < this.#items.length; i++) yield this.#items[i] as T;
  }

  clear(): void {
    this.#items = [];
    this.#head = 0;
  }
}
