// The package's one FIFO queue. Not a Map: V8 keeps deleted slots until it rehashes, so taking the
// oldest of 10,000 walks thousands. Not `Array.shift`: it moves every item. A passed slot is emptied.
export class Fifo<T> {
  #items: (T | undefined)[] = [];
  #head = 0;

  get size(): number {
    return this.#items.length - this.#head;
  }

  push(item: T): void {
    this.#items.push(item);
  }

  peek(): T | undefined {
    return this.#items[this.#head];
  }

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

  remove(item: T): boolean {
    if (this.size && this.peek() === item) return this.shift() === item;
    const i = this.#items.indexOf(item, this.#head);
    if (i >= 0) this.#items.splice(i, 1);
    return i >= 0;
  }

  *[Symbol.iterator](): Iterator<T> {
    for (let i = this.#head; i < this.#items.length; i++) yield this.#items[i] as T;
  }

  clear(): void {
    this.#items = [];
    this.#head = 0;
  }
}
