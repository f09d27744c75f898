/** Delivery reports and incoming messages; a webhook that does not answer is the receiver's problem. */
import type { SimulatorAccount } from './accounts';
import type { OutboxMessage } from './gateway';

export class WebhookDispatcher {
  bulk = false;
  /** Milliseconds from a message going out to its report. */
  delay = 200;
  #timers = new Set<NodeJS.Timeout>();

  constructor(public url = '') {}

  /** A GET with the event as query parameters, or (bulk) a POST of a JSON array. */
  send(event: Record<string, unknown>): void {
    if (!this.url) return;
    if (this.bulk) {
      void fetch(this.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify([event]) }).catch(() => undefined);
      return;
    }
    const single = new URL(this.url);
    for (const [k, v] of Object.entries(event)) single.searchParams.set(k, String(v));
    void fetch(single).catch(() => undefined);
  }

  /** Delivered (1) or not (3), then Viber's "seen" (13); none for silent numbers. */
  reportSent(m: OutboxMessage, account: SimulatorAccount | undefined): void {
    if (account?.silent.has(m.number)) return;
    const base = { smsID: m.sms_id, to: m.number, price: m.price, channel: m.channel };
    const delivered = !account?.unreachable.has(m.number);
    const delay = account?.reportDelay.get(m.number) ?? this.delay;
    this.#later(delay, () => this.send({ status: delivered ? 1 : 3, ...base, date: new Date().toISOString() }));
    if (delivered && m.channel === 'viber') this.#later(delay * 2, () => this.send({ status: 13, ...base, date: new Date().toISOString() }));
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
