/**
 * The account's rate limit: at most `limit` messages in any `window` ms (a sliding window), with
 * a bounded FIFO queue for what has to wait. Shared by every node that uses the account.
 */
import { GatewayError, heldError, onStop, type Circuit, type GiveUp, type StopSignal } from '../../gateway';

interface Waiter {
  messages: number;
  resolve: () => void;
  reject: (error: GatewayError) => void;
  /** Stops listening to the caller's signal. */
  unlisten?: () => void;
}

export class RateLimiter {
  /** Send times of the messages in the current window, oldest first. */
  #sent: number[] = [];
  #queue: Waiter[] = [];
  #timer: NodeJS.Timeout | undefined;
  #closed: string | undefined;

  constructor(
    readonly limit: number,
    readonly windowMs: number,
    readonly queueSize: number,
    private readonly onChange: () => void = () => undefined,
  ) {}

  get enabled(): boolean {
    return this.limit > 0 && this.windowMs > 0;
  }

  get queued(): number {
    return this.#queue.length;
  }

  /**
   * Resolves when `messages` may be sent now; rejects `rate_limited` when the queue is full. With
   * the account's circuit, a msg that waits when it opens leaves the queue for the outbox.
   */
  acquire(messages: number, signal?: StopSignal, circuit?: Circuit, giveUp?: GiveUp): Promise<void> {
    if (this.#closed) return Promise.reject(closed(this.#closed));
    if (!this.enabled) return Promise.resolve();
    if (signal?.aborted) return Promise.reject(closed('the request was cancelled'));
    if (circuit?.open) return Promise.reject(heldError());
    if (messages > this.limit) {
      return Promise.reject(
        new GatewayError({
          type: 'rate_limited',
          message: `This request has ${messages} messages; the account's rate limit allows ${this.limit} per ${this.windowMs / 1000} s`,
        }),
      );
    }
    if (this.#queue.length === 0 && this.#fits(messages, Date.now())) {
      this.#take(messages, Date.now());
      return Promise.resolve();
    }
    if (this.#queue.length >= this.queueSize) {
      return Promise.reject(
        new GatewayError({
          type: 'rate_limited',
          message: `Rate limit reached (${this.limit} per ${this.windowMs / 1000} s) and ${this.queueSize} messages already wait; this one was refused`,
        }),
      );
    }
    return new Promise((resolve, reject) => {
      const waiter: Waiter = { messages, resolve, reject };
      const leave = (error: GatewayError) => {
        waiter.unlisten?.();
        this.#remove(waiter);
        reject(error);
      };
      const stopListening = onStop(signal, () => leave(closed('the request was cancelled')));
      const stopHolding = onStop(circuit?.signal, () => leave(heldError()));
      // Its node's give-up time passes while it waits here: it ends then, not when its turn comes.
      const timer = giveUp ? setTimeout(() => leave(giveUp.error()), Math.max(0, giveUp.at - Date.now())) : undefined;
      waiter.unlisten = () => {
        stopListening();
        stopHolding();
        clearTimeout(timer);
      };
      this.#queue.push(waiter);
      this.onChange();
      this.#schedule();
    });
  }

  /**
   * Gives back what a send took that did not reach the gateway and will be sent again (from the
   * outbox): a probe of an unreachable gateway does not use up the account's limit.
   */
  refund(messages: number): void {
    if (!this.enabled || messages <= 0) return;
    this.#sent.splice(Math.max(0, this.#sent.length - messages), messages);
    if (this.#queue.length) {
      clearTimeout(this.#timer);
      this.#timer = undefined;
      this.#pump();
    }
  }

  /** Refuses everything waiting (with the reason) and anything asked later. */
  close(reason: string): void {
    this.#closed = reason;
    clearTimeout(this.#timer);
    this.#timer = undefined;
    const waiting = this.#queue.splice(0);
    for (const w of waiting) {
      w.unlisten?.();
      w.reject(closed(reason));
    }
    if (waiting.length) this.onChange();
  }

  #fits(messages: number, now: number): boolean {
    while (this.#sent.length && (this.#sent[0] as number) <= now - this.windowMs) this.#sent.shift();
    return this.#sent.length + messages <= this.limit;
  }

  #take(messages: number, now: number): void {
    for (let i = 0; i < messages; i++) this.#sent.push(now);
  }

  #remove(waiter: Waiter): void {
    const i = this.#queue.indexOf(waiter);
    if (i >= 0) this.#queue.splice(i, 1);
    this.onChange();
  }

  #schedule(): void {
    if (this.#timer || this.#queue.length === 0) return;
    const oldest = this.#sent[0] ?? Date.now();
    const wait = Math.max(0, oldest + this.windowMs - Date.now()) + 1;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      this.#pump();
    }, wait);
  }

  #pump(): void {
    const now = Date.now();
    let changed = false;
    // Strict FIFO: the head waits even if a smaller request behind it would fit.
    while (this.#queue.length && this.#fits((this.#queue[0] as Waiter).messages, now)) {
      const waiter = this.#queue.shift() as Waiter;
      waiter.unlisten?.();
      this.#take(waiter.messages, now);
      waiter.resolve();
      changed = true;
    }
    if (changed) this.onChange();
    this.#schedule();
  }
}

function closed(reason: string): GatewayError {
  // It waited here: the gateway never saw it.
  return Object.assign(new GatewayError({ type: 'closed', retryable: true, message: `Not sent: ${reason}` }), { mayHaveReached: false });
}
