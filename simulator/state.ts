/** Everything a running simulator holds, in one place the API, the controls and the server share. */
import type { ServerResponse } from 'node:http';
import { createAccount, DEMO_ACCOUNT, type SimulatorAccount, type SimulatorAccountInit } from './accounts';
import { FaultInjector } from './faults';
import { SimulatedEndpoints } from './endpoints';
import { SimulatedGateway } from './gateway';
import { WebhookDispatcher } from './webhook';

export interface SimulatorOptions {
  port?: number;
  host?: string;
  /** Where delivery reports and incoming messages go (the gateway's "Webhook" setting): one URL or several. */
  webhook?: string | string[];
  accounts?: SimulatorAccountInit[];
  /** Refuse bodies the reference does not allow (2.0 top-level sender fields, unknown senders, long texts). */
  strict?: boolean;
  /** Bounds of the request log (the newest are kept): entries, and characters of their bodies (bytes for ASCII). */
  logMaxRequests?: number;
  logMaxBytes?: number;
  /** How many messages the outbox keeps, the newest (OUTBOX_MAX by default). */
  outboxMax?: number;
}

export interface ReceivedRequest {
  method: string;
  path: string;
  contentType: string | undefined;
  /** The parameters as received (JSON body, form body or query); a form's yes/no read as booleans. */
  body: Record<string, unknown>;
  raw: string;
  at: string;
  fault?: string;
}

export class SimulatorState {
  readonly gateway: SimulatedGateway;
  readonly endpoints: SimulatedEndpoints;
  readonly accounts = new Map<string, SimulatorAccount>();
  /** What the simulator received, newest last: tests and GET /simulator/requests read it. */
  readonly requests: ReceivedRequest[] = [];
  #requestBytes = 0;
  readonly #logMax: { requests: number; bytes: number };
  readonly faults = new FaultInjector();
  readonly webhook: WebhookDispatcher;
  /** Outbox pages listening for changes (server-sent events). */
  readonly listeners = new Set<ServerResponse>();
  /** Answers a `hang` fault holds open until the simulator closes. */
  readonly hanging = new Set<ServerResponse>();
  /** The accounts a reset returns to: the demo's, the options', and those added since. */
  readonly #initial: SimulatorAccountInit[];

  constructor(options: SimulatorOptions) {
    this.gateway = new SimulatedGateway(options.strict ?? true, options.outboxMax);
    this.endpoints = new SimulatedEndpoints(this.gateway);
    this.#logMax = { requests: options.logMaxRequests ?? 10_000, bytes: options.logMaxBytes ?? 64 * 1024 * 1024 };
    this.webhook = new WebhookDispatcher(options.webhook);
    this.#initial = [DEMO_ACCOUNT, ...(options.accounts ?? [])];
    this.#resetAccounts();
    this.gateway.onSent = (m) => this.webhook.reportSent(m, this.accounts.get(m.account));
  }

  addAccount(init: SimulatorAccountInit): void {
    this.#initial.push(init);
    this.accounts.set(init.id, createAccount(init));
  }

  reset(): void {
    this.gateway.reset();
    this.endpoints.reset();
    this.#resetAccounts();
    this.clearLog();
    this.faults.clear();
    this.notify();
  }

  /** Logs a request; the oldest go past the bounds, so memory stays bounded. */
  logRequest(record: ReceivedRequest): void {
    this.requests.push(record);
    this.#requestBytes += record.raw.length;
    while (
      this.requests.length > this.#logMax.requests ||
      (this.#requestBytes > this.#logMax.bytes && this.requests.length > 1)
    ) {
      this.#requestBytes -= (this.requests.shift() as ReceivedRequest).raw.length;
    }
  }

  clearLog(): void {
    this.requests.length = 0;
    this.#requestBytes = 0;
  }

  notify(): void {
    for (const res of this.listeners) res.write(`data: ${JSON.stringify({ at: Date.now() })}\n\n`);
  }

  /** What the outbox page shows: the messages, each account's credit, and until when the gateway is offline. */
  outbox() {
    this.gateway.releaseDue();
    return {
      offlineUntil: this.faults.unavailableUntil > Date.now() ? this.faults.unavailableUntil : null,
      messages: this.gateway.state.outbox,
      accounts: [...this.accounts.values()].map((a) => ({ id: a.id, credit: a.credit, currency: a.currency })),
    };
  }

  close(): void {
    this.webhook.close();
    for (const res of [...this.listeners, ...this.hanging]) res.destroy();
  }

  #resetAccounts(): void {
    this.accounts.clear();
    for (const init of this.#initial) this.accounts.set(init.id, createAccount(init));
  }
}
