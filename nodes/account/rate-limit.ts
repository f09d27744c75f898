/**
 * The account's rate limit: at most `limit` messages in any `window` ms (a sliding window, kept
 * by the account's store), with a bounded FIFO queue for what has to wait. Shared by every node
 * that uses the account.
 */
import { GatewayError, withdrawnError, onStop, type GiveUp, type StopSignal } from '../../gateway';
import { MemoryWindow, type RateWindow, type Reservation } from './store';

interface Waiter {
  messages: number;
  resolve: () => void;
  reject: (error: GatewayError) => void;
  /** Stops listening to the caller's signal. */
  unlisten?: () => void;
}

/** Sends asked for in one question to the window at most (a shared store's: one round trip). */
const MAX_RUN = 100;

export class RateLimiter {
  #queue: Waiter[] = [];
  #timer: NodeJS.Timeout | undefined;
  /** The run of waiters (from the head) whose answer from the window is awaited (a shared store's window). */
  #asking: Waiter[] | undefined;
  #closed: string | undefined;

  constructor(
    readonly limit: number,
    readonly windowMs: number,
    readonly queueSize: number,
    private readonly onChange: () => void = () => undefined,
    private readonly window: RateWindow = new MemoryWindow(limit, windowMs),
  ) {}

  get enabled(): boolean {
    return this.limit > 0 && this.windowMs > 0;
  }

  get queued(): number {
    return this.#queue.length;
  }

  /**
   * Resolves when `messages` may be sent now; rejects `rate_limited` when the queue is full. With
   * a `withdraw` (the account's circuit), a msg that waits when it fires leaves the queue, withdrawn.
   */
  acquire(messages: number, signal?: StopSignal, withdraw?: StopSignal, giveUp?: GiveUp): Promise<void> {
    if (this.#closed) return Promise.reject(closed(this.#closed));
    if (!this.enabled) return Promise.resolve();
    if (signal?.aborted) return Promise.reject(closed('the request was cancelled'));
    if (withdraw?.aborted) return Promise.reject(withdrawnError());
    if (messages > this.limit) {
      return Promise.reject(
        new GatewayError({
          type: 'rate_limited',
          message: `This request has ${messages} messages; the account's rate limit allows ${this.limit} per ${this.windowMs / 1000} s`,
        }),
      );
    }
    // Nothing waits: the window decides at once (this process's window answers synchronously).
    const answer = this.#queue.length === 0 && !this.#asking ? this.window.reserveInOrder([messages], Date.now()) : undefined;
    if (answer && !(answer instanceof Promise) && answer.passed === 1) return Promise.resolve();
    // The msgs whose answer is awaited are not waiting for the limit (yet): they do not count against the queue.
    if (this.#queue.length - (this.#asking?.length ?? 0) >= this.queueSize) {
      // A shared window may have counted it already: given back.
      if (answer instanceof Promise) void answer.then((r) => (r.passed ? this.window.refund(messages) : undefined)).catch(() => undefined);
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
      const stopWithdrawing = onStop(withdraw, () => leave(withdrawnError()));
      // Its node's give-up time passes while it waits here: it ends then, not when its turn comes.
      const timer = giveUp ? setTimeout(() => leave(giveUp.error()), Math.max(0, giveUp.at - Date.now())) : undefined;
      waiter.unlisten = () => {
        stopListening();
        stopWithdrawing();
        clearTimeout(timer);
      };
      this.#queue.push(waiter);
      this.onChange();
      if (answer === undefined) this.#pump();
      else this.#answered([waiter], answer);
    });
  }

  /**
   * Gives back what a send took that did not reach the gateway and will be sent again (from the
   * outbox): a probe of an unreachable gateway does not use up the account's limit.
   */
  refund(messages: number): void {
    if (!this.enabled || messages <= 0) return;
    const next = () => {
      if (!this.#queue.length || this.#asking) return;
      clearTimeout(this.#timer);
      this.#timer = undefined;
      this.#pump();
    };
    const refunded = this.window.refund(messages);
    if (refunded) void refunded.then(next, () => undefined);
    else next();
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

  #remove(waiter: Waiter): void {
    const i = this.#queue.indexOf(waiter);
    if (i >= 0) this.#queue.splice(i, 1);
    this.onChange();
  }

  /**
   * Asks the window for the queue, from the head, while they fit: strict FIFO (the head waits even
   * if a smaller request behind it would fit). A window that answers later is asked for the whole
   * queue at once, and asked again for what came meanwhile when it answers.
   */
  #pump(): void {
    while (!this.#timer && !this.#asking && !this.#closed && this.#queue.length) {
      const run = this.#queue.slice(0, MAX_RUN);
      const answer = this.window.reserveInOrder(
        run.map((w) => w.messages),
        Date.now(),
      );
      if (answer instanceof Promise) return this.#answered(run, answer);
      this.#settle(run, answer);
    }
  }

  /** The window's answer for `run`: those that passed go now; the next waits as long as the window says. */
  #answered(run: Waiter[], answer: Reservation | Promise<Reservation>): void {
    if (!(answer instanceof Promise)) {
      this.#settle(run, answer);
      return this.#pump();
    }
    this.#asking = run;
    answer.then(
      (reservation) => {
        this.#asking = undefined;
        this.#settle(run, reservation);
        this.#pump();
      },
      (error: unknown) => {
        // The window could not answer (its store is unreachable): the head is refused, the rest asked again.
        this.#asking = undefined;
        const head = run[0] as Waiter;
        const i = this.#queue.indexOf(head);
        if (i >= 0) {
          this.#queue.splice(i, 1);
          head.unlisten?.();
          head.reject(error instanceof GatewayError ? error : closed(`the rate limit could not be checked (${(error as Error).message})`));
          this.onChange();
        }
        this.#pump();
      },
    );
  }

  #settle(run: Waiter[], { passed, wait }: Reservation): void {
    let changed = false;
    for (let i = 0; i < passed; i++) changed = this.#pass(run[i] as Waiter) || changed;
    if (passed < run.length && wait > 0) this.#wait(wait);
    if (changed) this.onChange();
  }

  /** Lets `waiter` go; false when it left the queue while the window was asked (what it reserved is given back). */
  #pass(waiter: Waiter): boolean {
    const i = this.#queue.indexOf(waiter);
    if (i < 0) {
      void this.window.refund(waiter.messages);
      return false;
    }
    this.#queue.splice(i, 1);
    waiter.unlisten?.();
    waiter.resolve();
    return true;
  }

  /** The queue waits `ms` for the window (one timer: a new wait replaces the one armed). */
  #wait(ms: number): void {
    clearTimeout(this.#timer);
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      this.#pump();
    }, ms);
  }
}

function closed(reason: string): GatewayError {
  // It waited here: the gateway never saw it.
  return Object.assign(new GatewayError({ type: 'closed', retryable: true, message: `Not sent: ${reason}` }), { mayHaveReached: false });
}
