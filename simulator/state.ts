/** Everything a running simulator holds, in one place the API, the controls and the server share. */
import type { ServerResponse } from 'node:http';
import { createAccount, DEMO_ACCOUNT, type SimulatorAccount, type SimulatorAccountInit } from './accounts';
import { FaultInjector } from './faults';
import { SimulatedEndpoints } from './endpoints';
import { SimulatedGateway } from './gateway';
import { RequestLog } from './request-log';
import { WebhookDispatcher } from './webhook';

export class SimulatorState {
  readonly gateway: SimulatedGateway;
  /** One-time passwords, number check, blacklist and address book. */
  readonly endpoints: SimulatedEndpoints;
  readonly accounts = new Map<string, SimulatorAccount>();
  readonly log: RequestLog;
  readonly faults = new FaultInjector();
  readonly webhook: WebhookDispatcher;
  /** Outbox pages listening for changes (server-sent events). */
  readonly listeners = new Set<ServerResponse>();
  /** Answers a `hang` fault holds open until the simulator closes. */
  readonly hanging = new Set<ServerResponse>();
  /** The accounts a reset returns to: the demo's, the options', and those added since. */
  readonly #initial: SimulatorAccountInit[];

  constructor(options: { strict?: boolean; accounts?: SimulatorAccountInit[]; webhook?: string; logMaxRequests?: number; logMaxBytes?: number }) {
    this.gateway = new SimulatedGateway(options.strict ?? true);
    this.endpoints = new SimulatedEndpoints(this.gateway);
    this.log = new RequestLog(options.logMaxRequests, options.logMaxBytes);
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
    this.log.clear();
    this.faults.clear();
    this.notify();
  }

  /** Tells the outbox pages that something changed. */
  notify(): void {
    for (const res of this.listeners) res.write(`data: ${JSON.stringify({ at: Date.now() })}\n\n`);
  }

  outbox(): { messages: SimulatedGateway['state']['outbox']; accounts: { id: string; credit: number; currency: string }[]; offlineUntil: number | null } {
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
