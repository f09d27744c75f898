// The account's rate limit, shared by its nodes: at most `limit` messages in a sliding window (kept
// by the account's store), with a bounded FIFO queue for what has to wait.
import { after, GatewayError, withdrawnError, monotonicNow, onStop, timerDelay, type GiveUp } from '../../gateway';
import { Fifo } from '../../gateway/fifo';
import type { Wording } from '../../gateway/wording';
import { causeOf, nodeError, nodeWording } from '../plumbing/wording';
import { MemoryWindow, type RateWindow, type Reservation } from './store';

interface Waiter {
  messages: number;
  resolve: () => void;
  reject: (error: GatewayError) => void;
  unlisten?: () => void;
  /** The window had no room for it once: it waits for the limit (counted in `queued`, bounded by `queueSize`). */
  refused?: boolean;
}

/** Sends asked for in one question to the window at most (a shared store's: one round trip). */
const MAX_RUN = 100;

export class RateLimiter {
  readonly #queue = new Fifo<Waiter>();
  #timer: NodeJS.Timeout | undefined;
  /** The run of waiters (from the head) whose answer from the window is awaited. */
  #asking: Waiter[] | undefined;
  #closed: string | Wording | undefined;
  #refused = 0;

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

  /** How many msgs wait for the limit (not those the window is being asked about). */
  get queued(): number {
    return this.#refused;
  }

  /** Rejects `rate_limited` when `queueSize` wait already; `withdraw` (the account's circuit) withdraws what waits. */
  acquire(messages: number, signal?: AbortSignal, withdraw?: AbortSignal, giveUp?: GiveUp): Promise<void> {
    if (this.#closed) return Promise.reject(closed(this.#closed));
    if (!this.enabled) return Promise.resolve();
    if (signal?.aborted) return Promise.reject(closed(nodeWording('reason.cancelled')));
    if (withdraw?.aborted) return Promise.reject(withdrawnError());
    if (messages > this.limit) {
      return Promise.reject(
        nodeError({
          type: 'rate_limited',
          key: 'over-rate-limit',
          params: { messages, limit: this.limit, seconds: this.windowMs / 1000 },
        }),
      );
    }
    // Behind a msg the window refused, this one waits too (strict order): no question needed.
    const behind = this.#refused > 0;
    if (behind && this.#refused >= this.queueSize) return Promise.reject(this.#full());
    return new Promise((resolve, reject) => {
      const waiter: Waiter = { messages, resolve, reject };
      const stopListening = onStop(signal, () => this.#refuse(waiter, closed(nodeWording('reason.cancelled'))));
      const stopWithdrawing = onStop(withdraw, () => this.#refuse(waiter, withdrawnError()));
      // Its node's give-up time passes while it waits here: it ends then, not when its turn comes.
      const stopGivingUp = giveUp
        ? after(giveUp.at - monotonicNow(), () => this.#refuse(waiter, giveUp.error()))
        : undefined;
      waiter.unlisten = () => {
        stopListening();
        stopWithdrawing();
        stopGivingUp?.();
      };
      this.#queue.push(waiter);
      if (!behind) return void this.#pump();
      waiter.refused = true;
      this.#count(1);
    });
  }

  /** Gives back what a send took that will be sent again (from the outbox): a probe does not use up the limit. */
  refund(messages: number): void {
    if (!this.enabled || messages <= 0) return;
    this.window.refund(messages).then(
      () => {
        if (!this.#queue.size || this.#asking) return;
        clearTimeout(this.#timer);
        this.#timer = undefined;
        void this.#pump();
      },
      () => undefined,
    );
  }

  close(reason: string | Wording): void {
    this.#closed = reason;
    clearTimeout(this.#timer);
    this.#timer = undefined;
    for (const w of this.#queue) {
      w.unlisten?.();
      w.reject(closed(reason));
    }
    this.#queue.clear();
    this.#count(-this.#refused);
  }

  #full(): GatewayError {
    return nodeError({
      type: 'rate_limited',
      key: 'rate-queue-full',
      params: { limit: this.limit, seconds: this.windowMs / 1000, queued: this.queueSize },
    });
  }

  /** Out of the queue, its listeners stopped; false when it had left already. */
  #take(waiter: Waiter): boolean {
    if (!this.#queue.remove(waiter)) return false;
    if (waiter.refused) this.#count(-1);
    waiter.unlisten?.();
    return true;
  }

  #refuse(waiter: Waiter, error: GatewayError): void {
    if (this.#take(waiter)) waiter.reject(error);
  }

  /** The account's nodes hear of it (their status). */
  #count(by: number): void {
    if (by === 0) return;
    this.#refused += by;
    this.onChange();
  }

  /** One question at a time, from the head: strict FIFO (the head waits even if a smaller one behind it would fit). */
  async #pump(): Promise<void> {
    if (this.#timer || this.#asking || this.#closed || !this.#queue.size) return;
    const run: Waiter[] = [];
    for (const waiter of this.#queue) if (run.push(waiter) === MAX_RUN) break;
    this.#asking = run;
    let reservation: Reservation | undefined;
    try {
      // This process's window counts on the monotonic clock: a wall clock stepped back an hour would hold it shut for
      // the hour, one stepped forward would empty it.
      reservation = await this.window.reserveInOrder(
        run.map((w) => w.messages),
        monotonicNow(),
      );
    } catch (error) {
      // The window could not answer (its store is unreachable): the head is refused, the rest asked again.
      this.#refuse(
        run[0] as Waiter,
        error instanceof GatewayError ? error : closed(nodeWording('reason.rate-unchecked', { cause: causeOf(error) })),
      );
    }
    this.#asking = undefined;
    if (reservation) this.#settle(run, reservation);
    // Not awaited: a queue that never empties would chain one promise per question.
    void this.#pump();
  }

  #settle(run: Waiter[], { passed, wait }: Reservation): void {
    for (const waiter of run.slice(0, passed)) {
      if (this.#take(waiter)) waiter.resolve();
      // One that left the queue while the window was asked gives back what it reserved.
      else void this.window.refund(waiter.messages);
    }
    if (passed === run.length || wait <= 0) return;
    // The head waits for the window: so does every msg behind it, and beyond `queueSize` it is refused.
    for (const waiter of [...this.#queue]) {
      if (waiter.refused) continue;
      if (this.#refused >= this.queueSize) this.#refuse(waiter, this.#full());
      else {
        waiter.refused = true;
        this.#count(1);
      }
    }
    clearTimeout(this.#timer);
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      void this.#pump();
      // A shared store's clock stepped back answers a wait of the step: asked again within the timer's limit.
    }, timerDelay(wait));
  }
}

function closed(reason: string | Wording): GatewayError {
  // It waited here: the gateway never saw it.
  return Object.assign(nodeError({ type: 'closed', retryable: true, key: 'not-sent', params: { reason } }), {
    mayHaveReached: false,
  });
}
