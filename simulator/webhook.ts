/** Delivery reports and incoming messages; a webhook that does not answer is the receiver's problem. */
import type { SimulatorAccount } from './accounts';
import type { OutboxMessage } from './gateway';

/** An http(s) URL: anything else would throw later, in a report's timer, and end the process. */
export function isWebhookUrl(url: unknown): url is string {
  return typeof url === 'string' && URL.canParse(url) && /^https?:$/.test(new URL(url).protocol);
}

export interface Webhook {
  url: string;
  /** A POST of a JSON array per call (the gateway's "Bulk DLRs"), else a GET with query parameters. */
  bulk: boolean;
  /** Calls answered 2xx, and the others (another status, or no answer): whether the receiver gets them. */
  answered: number;
  failed: number;
}

/** Every webhook set, each called with every event: the demo's examples each have an events node on its own path. */
export class WebhookDispatcher {
  /** Milliseconds from a message going out to its report. */
  delay = 200;
  readonly #hooks = new Map<string, Webhook>();
  #timers = new Set<NodeJS.Timeout>();

  constructor(urls: string | string[] = []) {
    for (const url of [urls].flat()) if (url) this.add(url);
  }

  /** Sets a webhook; one already set with this URL keeps its place and takes the new `bulk`. */
  add(url: string, bulk = false): void {
    const hook = this.#hooks.get(url);
    if (hook) hook.bulk = bulk;
    else this.#hooks.set(url, { url, bulk, answered: 0, failed: 0 });
  }

  /** Removes the webhook with this URL; false when none was set. */
  remove(url: string): boolean {
    return this.#hooks.delete(url);
  }

  clear(): void {
    this.#hooks.clear();
  }

  list(): Webhook[] {
    return [...this.#hooks.values()].map((hook) => ({ ...hook }));
  }

  /** To each webhook: a GET with the event as query parameters, or (bulk) a POST of a JSON array. */
  send(event: Record<string, unknown>): void {
    for (const hook of this.#hooks.values()) {
      let call: Promise<Response>;
      if (hook.bulk)
        call = fetch(hook.url, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify([event]),
        });
      else {
        const single = new URL(hook.url);
        for (const [k, v] of Object.entries(event)) single.searchParams.set(k, String(v));
        call = fetch(single);
      }
      call.then(
        (res) => {
          if (res.ok) hook.answered++;
          else hook.failed++;
          void res.body?.cancel().catch(() => undefined);
        },
        () => hook.failed++,
      );
    }
  }

  /** Delivered (1) or not (3), then Viber's "seen" (13); none for silent numbers. */
  reportSent(m: OutboxMessage, account: SimulatorAccount | undefined): void {
    if (account?.silent.has(m.number)) return;
    const base = { smsID: m.sms_id, to: m.number, price: m.price, channel: m.channel };
    const delivered = !account?.unreachable.has(m.number);
    const delay = account?.reportDelay.get(m.number) ?? this.delay;
    this.#later(delay, () => this.send({ status: delivered ? 1 : 3, ...base, date: new Date().toISOString() }));
    if (delivered && m.channel === 'viber')
      this.#later(delay * 2, () => this.send({ status: 13, ...base, date: new Date().toISOString() }));
  }

  incoming(smsID: string, input: { from?: unknown; to?: unknown; message?: unknown }): void {
    this.send({
      status: 10,
      smsID,
      from: String(input.from ?? ''),
      to: String(input.to ?? ''),
      message: String(input.message ?? ''),
      channel: 'sms',
      date: new Date().toISOString(),
    });
  }

  close(): void {
    for (const timer of this.#timers) clearTimeout(timer);
    this.#timers.clear();
  }

  #later(ms: number, run: () => void): void {
    const timer = setTimeout(() => {
      this.#timers.delete(timer);
      run();
    }, ms);
    this.#timers.add(timer);
  }
}
