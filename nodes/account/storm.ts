/**
 * Alert-storm protection for the transactional node: after `limit` messages in a window of
 * `windowMs`, the window's further messages are held back (not sent; each ends without error)
 * and when the window ends one notice says how many were held. A window opens with the first
 * message after the previous one ended.
 */
import { numberSetting } from '../plumbing/settings';

/**
 * A node's storm guard from its settings as the flow file keeps them: `stormLimit` alerts (0 or
 * missing: off) per `stormWindow` seconds (default 60).
 */
export function stormGuardOf<T>(settings: { stormLimit?: unknown; stormWindow?: unknown }, onWindowEnd: (last: T, held: number) => void): StormGuard<T> {
  return new StormGuard<T>(numberSetting(settings.stormLimit, 0), numberSetting(settings.stormWindow, 60) * 1000, onWindowEnd);
}

export class StormGuard<T> {
  #admitted = 0;
  #held = 0;
  #last: T | undefined;
  #timer: NodeJS.Timeout | undefined;

  constructor(
    readonly limit: number,
    readonly windowMs: number,
    private readonly onWindowEnd: (last: T, held: number) => void,
  ) {}

  get enabled(): boolean {
    return this.limit > 0 && this.windowMs > 0;
  }

  get held(): number {
    return this.#held;
  }

  /** Whether this message may go; when not, it is counted and remembered for the notice. */
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

  #end(): void {
    this.#timer = undefined;
    const { held } = this;
    const last = this.#last;
    this.#held = 0;
    this.#last = undefined;
    if (held > 0 && last !== undefined) this.onWindowEnd(last, held);
  }

  /** On close no notice is sent: the held messages have already ended. */
  close(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
  }
}
