// Alert storms: past `limit` messages in a window, the rest are held back (each ends without error)
// and one notice at its end says how many; with a shared store the copies count in one window.
import { timerDelay } from '../../gateway';
import { numberSetting } from '../plumbing/settings';

/** A node's storm guard from its settings: `stormLimit` alerts (0 or missing: off) per `stormWindow` seconds. */
export function stormGuardOf<T>(
  settings: { stormLimit?: unknown; stormWindow?: unknown },
  onWindowEnd: (last: T, held: number) => void,
): StormGuard<T> {
  return new StormGuard<T>(
    numberSetting(settings.stormLimit, 0),
    numberSetting(settings.stormWindow, 60) * 1000,
    onWindowEnd,
  );
}

/** What a shared store answered for one alert; `endsInMs` counted on the store's clock. */
export interface SharedStormAnswer {
  admitted: boolean;
  window: string;
  endsInMs: number;
}

/** How long after a shared window ends a copy asks for its count: every copy's held ones are in by then. */
export const SHARED_SETTLE_MS = 50;

export class StormGuard<T> {
  #admitted = 0;
  #held = 0;
  #last: T | undefined;
  #timer: NodeJS.Timeout | undefined;
  /** The shared windows in which this copy held messages: its last one and count, and the timer of the notice. */
  readonly #shared = new Map<string, { last: T; held: number; timer: NodeJS.Timeout }>();

  constructor(
    readonly limit: number,
    readonly windowMs: number,
    private readonly onWindowEnd: (last: T, held: number) => void,
  ) {}

  get enabled(): boolean {
    return this.limit > 0 && this.windowMs > 0;
  }

  /** What this copy holds back in the windows open now (the status says so). */
  get held(): number {
    return [...this.#shared.values()].reduce((sum, window) => sum + window.held, this.#held);
  }

  admit(item: T): boolean {
    if (!this.enabled) return true;
    if (!this.#timer) {
      this.#admitted = 0;
      this.#held = 0;
      this.#timer = setTimeout(() => this.#end(), this.windowMs);
    }
    if (this.#admitted < this.limit) {
      this.#admitted++;
      return true;
    }
    this.#held++;
    this.#last = item;
    return false;
  }

  /** When the shared window ends, `collect` takes every copy's held count (or this copy's own). */
  admitShared(item: T, answer: SharedStormAnswer, collect: (window: string) => Promise<number>): boolean {
    if (answer.admitted) return true;
    let window = this.#shared.get(answer.window);
    if (!window) {
      const timer = setTimeout(
        () => this.#endShared(answer.window, collect),
        timerDelay(answer.endsInMs + SHARED_SETTLE_MS),
      );
      this.#shared.set(answer.window, (window = { last: item, held: 0, timer }));
    }
    window.held++;
    window.last = item;
    return false;
  }

  #endShared(id: string, collect: (window: string) => Promise<number>): void {
    const window = this.#shared.get(id);
    if (!window) return;
    this.#shared.delete(id);
    void collect(id)
      .catch(() => window.held)
      .then((held) => {
        if (held > 0) this.onWindowEnd(window.last, held);
      })
      .catch(() => undefined);
  }

  #end(): void {
    this.#timer = undefined;
    // Its own count only: `held` adds the shared windows', which notify at their own end.
    const held = this.#held;
    const last = this.#last;
    this.#held = 0;
    this.#last = undefined;
    if (held > 0 && last !== undefined) this.onWindowEnd(last, held);
  }

  /** On close no notice is sent: the held messages have already ended. */
  close(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    for (const window of this.#shared.values()) clearTimeout(window.timer);
    this.#shared.clear();
  }
}
