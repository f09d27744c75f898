// The account at runtime: its gateway client (one connection pool), rate limit, circuit, outbox,
// tracker and recent sms_ids; no Node-RED import. The send nodes prepare, `submit` and route.
import {
  baseUrlWording,
  DEFAULT_BASE_URL,
  DEFAULT_CONNECTIONS,
  DEFAULT_RETRIES,
  DEFAULT_TIMEOUT,
  GatewayClient,
  isWithdrawn,
  monotonicAt,
  monotonicNow,
  settledWithin,
  storableBody,
  storableBodyInSteps,
  type GiveUp,
  type Operation,
  type PreparedRequest,
  type ProxySettings,
  type SendPolicy,
} from '../../gateway';
import type { Msg } from '../plumbing/msg';
import { numberSetting } from '../plumbing/settings';
import { causeOf, nodeError, nodeInvalid, nodeWording } from '../plumbing/wording';
import { LIST_STEP } from '../../gateway/steps';
import type { Wording } from '../../gateway/wording';
import { Circuit, type OutageEnd } from './circuit';
import {
  DEFAULT_OUTBOX_SIZE,
  deferrable,
  giveUpError,
  MAX_PROBE_DELAY,
  outboxFor,
  storableMsg,
  storableMsgInSteps,
  type Outbox,
  type OutboxEntry,
  type OutboxReport,
  type OutboxWorker,
  type Outcome,
  type SendResult,
} from './outbox';
import { RateLimiter } from './rate-limit';
import { RecentSends } from './recent-sends';
import type { RedisIncidents } from './escalation-redis';
import type { AlertClaimer } from './redis-store';
import type { AccountStore } from './store';
import { storeUrlWording } from '../plumbing/store-url';
import type { DeliveryTracker } from './tracking';

export interface AccountConfig {
  name?: string;
  baseUrl?: string;
  application_product?: string;
  country?: string;
  timeout?: number | string;
  retries?: number | string;
  retryDelay?: number | string;
  rateLimit?: number | string;
  rateWindow?: number | string;
  queueSize?: number | string;
  /** A core `http proxy` config node's id; none: the environment's proxy variables. */
  proxy?: string;
  outboxMinutes?: number | string;
  outboxSize?: number | string;
  /** Not in the panel (tests use a short one): the first wait between outbox rounds, ms. */
  outboxDelay?: number | string;
  /** `file` (default) or `redis` (shared by several copies). */
  store?: string;
  storeUrl?: string;
  /** Not in the panel (tests use a short one): an outbox claim's life unless renewed, seconds. */
  storeClaimSeconds?: number | string;
}

export interface AccountCredentials {
  application_id?: string;
  application_token?: string;
  /** The Redis store's password (never in storeUrl). */
  storePassword?: string;
}

interface AccountSurroundings {
  store: AccountStore;
  /** A shared store's: which copy sends an alert several copies raised at once. */
  claims: AlertClaimer | undefined;
  /** A shared store's escalation incidents (every copy's); undefined: they are kept in the user directory. */
  incidents?: () => RedisIncidents;
  /** The proxy to use: undefined for the environment's, null when the one chosen is missing. */
  proxy(): ProxySettings | undefined | null;
  /** A log line by its catalog key; a cause given as an Error is worded in the user's language by the node. */
  warn: (key: string, params: Record<string, string | number | Error>) => void;
}

/**
 * A promise it returns resolves once the msg left the node; `afterRestart`: it ended before a stop or a crash, and may
 * have left then too.
 */
export type DeferredHandler = (
  msg: Msg,
  entry: OutboxEntry,
  outcome: Outcome,
  afterRestart: boolean,
) => void | Promise<void>;

/** Whether a node still wants its msg kept in the outbox sent (asked before each attempt). */
export type StillWanted = (msg: Record<string, unknown>) => boolean | Promise<boolean>;

interface Submission {
  node: string;
  operation: Operation;
  prepared: PreparedRequest;
  msg: Msg;
  since: number;
  /** Its place among the msgs every send node took (the outbox keeps that order). */
  order: number;
  /** Its node's give-up time, ms from `since`; 0: the account's outbox time only. */
  giveUpMs: number;
  /** `since` on the monotonic clock, set at the account's first look: its give-up time counts from it. */
  startedAt?: number;
  queueStop: AbortSignal;
  wireStop: AbortSignal;
  onWire: () => void;
}

type Submitted = { result: SendResult } | { kept: true };
const KEPT: Submitted = { kept: true };

export class Account {
  /** The only address, timeout and store URL the stored token and store password are sent to. */
  readonly deployed: { baseUrl: string; timeout: number; storeUrl: string };
  /** While the shared store cannot be reached: why (the client's words) and since when. */
  get storeTrouble(): { reason: string; since: number } | undefined {
    return this.#surroundings.store.health.trouble;
  }
  readonly limiter: RateLimiter;
  readonly circuit = new Circuit();
  readonly outbox: Outbox;
  /** 0: none is kept (a failed send goes to Catch at once). */
  readonly outboxMinutes: number;
  readonly tracker: DeliveryTracker;
  /** An answer with one of these sms_ids again is a duplicate the gateway dropped. */
  readonly recent = new RecentSends();
  readonly claims: AlertClaimer | undefined;
  /** A shared store's escalation incidents, made on first use; undefined: the user directory keeps them. */
  get sharedIncidents(): RedisIncidents | undefined {
    return this.#surroundings.incidents?.();
  }

  readonly #label: string;
  readonly #config: AccountConfig;
  readonly #credentials: AccountCredentials;
  readonly #surroundings: AccountSurroundings;
  readonly #problem: string | Wording | undefined;
  #client: GatewayClient | undefined;
  readonly #listeners = new Set<() => void>();
  readonly #deferredTargets = new Map<string, DeferredHandler>();
  readonly #wantedBy = new Map<string, StillWanted>();
  readonly #resendStop = new AbortController();
  readonly #worker: OutboxWorker;
  readonly #unwatchOutbox: () => void;
  readonly #unwatchStore: () => void;
  #outageSince: number | undefined;
  /** While the gateway is unreachable and nothing waits in the outbox (it could not keep): the account's own probe. */
  #probeTimer: NodeJS.Timeout | undefined;
  #probeDelay = 0;
  /**
   * The probe is due: the next sends go out live, whatever the circuit says, and the first that gets through closes it.
   */
  #probeDue = false;

  constructor(id: string, config: AccountConfig, credentials: AccountCredentials, surroundings: AccountSurroundings) {
    this.#label = config.name || id;
    this.#config = config;
    this.#credentials = credentials;
    this.#surroundings = surroundings;
    const baseUrl = (config.baseUrl || DEFAULT_BASE_URL).trim();
    const storeUrl = config.store === 'redis' ? (config.storeUrl ?? '').trim() : '';
    this.deployed = { baseUrl, timeout: numberSetting(config.timeout, DEFAULT_TIMEOUT, 1), storeUrl };
    const missing = (['application_id', 'application_token'] as const).find((key) => !credentials[key]);
    this.#problem =
      baseUrlWording(baseUrl) ??
      (missing ? nodeWording('account-no-credential', { field: missing }) : undefined) ??
      (config.store === 'redis' ? storeUrlWording(config.storeUrl) : undefined);
    this.claims = surroundings.claims;

    const changed = this.#changed;
    const limit = numberSetting(config.rateLimit, 0);
    const windowMs = numberSetting(config.rateWindow, 60) * 1000;
    this.limiter = new RateLimiter(
      limit,
      windowMs,
      numberSetting(config.queueSize, 100),
      changed,
      surroundings.store.rateWindow(id, limit, windowMs),
    );
    // One log line when an outage starts, one when its cause changes, one when it ends: "reachable
    // again" only when the gateway answered; when the last msg stopped waiting, not a word of it.
    this.circuit.onChange = () => {
      const cause = this.circuit.cause;
      const url = this.deployed.baseUrl;
      if (cause) {
        // On the monotonic clock: the outage's length in the log line, whatever the wall clock did meanwhile.
        this.#outageSince ??= monotonicNow();
        surroundings.warn('gateway-unreachable', {
          url,
          reason: cause.failure instanceof Error ? cause.failure : cause.reason,
        });
      } else if (this.#outageSince !== undefined) {
        const seconds = Math.round((monotonicNow() - this.#outageSince) / 1000);
        surroundings.warn(this.circuit.ended === 'answered' ? 'gateway-reachable' : 'gateway-nothing-waits', {
          url,
          seconds,
        });
        this.#outageSince = undefined;
      }
      changed();
    };
    this.tracker = surroundings.store.tracker(id);
    this.outboxMinutes = numberSetting(config.outboxMinutes, 60, 0);
    this.outbox = outboxFor(surroundings.store, id, surroundings.warn);
    this.#unwatchOutbox = this.outbox.watch(changed);
    this.#unwatchStore = surroundings.store.health.watch(changed);
    this.#worker = {
      minutes: this.outboxMinutes,
      firstDelay: numberSetting(config.outboxDelay, 1000, 1),
      size: numberSetting(config.outboxSize, DEFAULT_OUTBOX_SIZE, 1),
      account: this.#label,
      // As many as a live send has on the wire: the client's connections.
      concurrency: DEFAULT_CONNECTIONS,
      report: (report) => this.#heard(report),
      transient: (error, entry) => deferrable(error, entry.operation),
      send: (entry, probe) => this.#resend(entry, probe),
      wanted: (entry) => this.#wantedBy.get(entry.node)?.(entry.msg) ?? true,
      settle: (entry, msg, outcome, afterRestart) => {
        const handler = this.#deferredTargets.get(entry.node);
        if (handler) return handler(msg, entry, outcome, afterRestart);
        // Its node was deleted; one it withdrew as it went (its log line said so) needs no word.
        if ('error' in outcome && isWithdrawn(outcome.error)) return;
        if ('result' in outcome) surroundings.warn('outbox-orphan-sent', { node: entry.node });
        else surroundings.warn('outbox-orphan-failed', { node: entry.node, reason: outcome.error });
      },
    };
    this.outbox.attach(this.#worker);
  }

  readonly #changed = (): void => this.#listeners.forEach((l) => l());

  // The one owner of "the gateway is unreachable" (CONTRIBUTING: who decides a msg's fate): it
  // trips on a live send's failure and a failed probe; it resets when a probe or a live send got
  // through, or when nothing waits any more (else the next msg would wait for a probe that nothing
  // schedules).
  #heard(report: OutboxReport): void {
    if (report.kind === 'probe-failed') this.circuit.trip(report.failure);
    else this.#reachable(report.kind === 'empty' && !report.answered ? 'nothing-waits' : 'answered');
  }

  #unreachable(failure: unknown): void {
    this.#probeDue = false;
    this.circuit.trip(failure);
  }

  #reachable(how: OutageEnd): void {
    clearTimeout(this.#probeTimer);
    this.#probeTimer = undefined;
    this.#probeDelay = 0;
    this.#probeDue = false;
    this.circuit.reset(how);
  }

  /**
   * Unreachable, and nothing kept (a store down, a full disk, a lock another Node-RED holds): no
   * outbox round will probe, so the account does, with the next send after the outbox's delay
   * (doubling to its longest); sends that can go out still do.
   */
  #probeLater(): void {
    if (!this.circuit.open || this.outbox.waiting > 0 || this.#probeTimer || this.#probeDue) return;
    this.#probeDelay = Math.min(MAX_PROBE_DELAY, this.#probeDelay ? this.#probeDelay * 2 : this.#worker.firstDelay);
    this.#probeTimer = setTimeout(() => {
      this.#probeTimer = undefined;
      if (this.circuit.open && this.outbox.waiting === 0) this.#probeDue = true;
    }, this.#probeDelay);
  }

  gateway(): GatewayClient {
    if (this.#problem)
      throw nodeInvalid(
        'account-problem',
        { problem: this.#problem, account: this.#label },
        { key: 'account-incomplete' },
      );
    return (this.#client ??= this.#build());
  }

  // Behind what waits in the outbox (order is kept per account), else through the rate limit.
  async submit(s: Submission): Promise<Submitted> {
    const outbox = this.outboxMinutes > 0 ? this.outbox : undefined;
    const prepared = s.prepared;
    if (outbox && (outbox.waiting || (this.circuit.open && !this.#probeDue)) && !prepared.nothingToSend) {
      const reason = outbox.waiting ? nodeWording('reason.older-wait') : this.#withdrawnReason();
      await this.#keep(s, 0, reason);
      return KEPT;
    }
    const client = this.gateway();
    // A probe goes out whatever the circuit says (it is open, and its signal fired).
    const withdraw = outbox && !this.circuit.open ? this.circuit.signal : undefined;
    const limiter = this.limiter;
    let counted = false;
    let result: SendResult;
    try {
      if (limiter.enabled) {
        await limiter.acquire(
          prepared.messages,
          s.queueStop,
          withdraw,
          this.#giveUp(s, nodeWording('reason.rate-wait')),
        );
        counted = true;
      }
      result = await this.#transmit(client, s, outbox !== undefined, withdraw);
    } catch (error) {
      if (!outbox || !deferrable(error, s.operation)) throw error;
      // Sent from the outbox: this attempt does not use up the rate limit.
      if (counted) limiter.refund(prepared.messages);
      // Withdrawn, it was never tried (and the circuit is open already).
      const withdrawn = isWithdrawn(error);
      // At once, before the keep is on disk: what waits for a connection, a retry or the rate limit is withdrawn and
      // kept too.
      if (!withdrawn) this.#unreachable(error);
      await this.#keep(s, withdrawn ? 0 : 1, withdrawn ? this.#withdrawnReason() : causeOf(error));
      return KEPT;
    }
    if (this.circuit.open && outbox && !outbox.waiting) this.#reachable('answered');
    return { result };
  }

  #transmit(
    client: GatewayClient,
    s: Submission,
    kept: boolean,
    withdraw: AbortSignal | undefined,
  ): Promise<SendResult> {
    s.onWire();
    const giveUp = this.#giveUp(s, nodeWording('reason.retry-due'));
    // With an outbox, no retries: the outbox is the retry.
    const policy = kept || giveUp ? { withdraw, giveUp, retries: kept ? 0 : undefined } : undefined;
    return send(client, s.operation, s.prepared, s.wireStop, policy);
  }

  /**
   * The msg's one deadline (its node's "give up after"), ms since the epoch: the outbox stores it
   * with the entry (so it survives a restart) for its one expiry timer; the rate-limit queue and the
   * client's retries read the same time on the monotonic clock (#giveUp).
   */
  #deadline(s: Submission): number | undefined {
    return s.giveUpMs > 0 ? s.since + s.giveUpMs : undefined;
  }

  #giveUp(s: Submission, where: Wording): GiveUp | undefined {
    if (s.giveUpMs <= 0) return undefined;
    const at = (s.startedAt ??= monotonicAt(s.since)) + s.giveUpMs;
    return { at, error: () => giveUpError(s.giveUpMs / 1000, where) };
  }

  #withdrawnReason(): Wording {
    const failure = this.circuit.cause?.failure;
    return failure === undefined
      ? nodeWording('reason.retry-due')
      : nodeWording('reason.unreachable-now', { cause: causeOf(failure) });
  }

  async #keep(s: Submission, attempts: number, reason: Wording): Promise<void> {
    // A list's body and msg are read in steps; an alert's at once (no turn of the event loop).
    const long = s.prepared.messages > LIST_STEP;
    const kept = this.outbox.keep(
      {
        node: s.node,
        operation: s.operation,
        body: long ? await storableBodyInSteps(s.prepared) : storableBody(s.prepared),
        rejected: s.prepared.rejected,
        messages: s.prepared.messages,
        msg: long ? await storableMsgInSteps(s.msg) : storableMsg(s.msg),
        since: s.since,
        order: s.order,
        deadline: this.#deadline(s),
        attempts,
        reason,
      },
      s.msg,
    );
    try {
      await kept;
    } catch (error) {
      this.#probeLater();
      throw error;
    }
  }

  /** A request's body without the account's token: what identifies an alert across copies. */
  alertBody(prepared: PreparedRequest): string {
    const token = this.#credentials.application_token;
    const body = prepared.payload ?? prepared.path;
    return token ? body.split(token).join('') : body;
  }

  watch(listener: () => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** `wanted`: asked before each attempt of the node's msgs kept in the outbox; false, the msg ends withdrawn. */
  onDeferred(node: string, handler: DeferredHandler, wanted?: StillWanted): () => void {
    this.#deferredTargets.set(node, handler);
    if (wanted) this.#wantedBy.set(node, wanted);
    return () => {
      if (this.#deferredTargets.get(node) === handler) this.#deferredTargets.delete(node);
      if (wanted && this.#wantedBy.get(node) === wanted) this.#wantedBy.delete(node);
    };
  }

  emptyOutbox(): Promise<number> {
    return this.outbox.empty(() => nodeError({ type: 'discarded', key: 'discarded', brief: { key: 'discarded' } }));
  }

  async close(): Promise<void> {
    this.limiter.close(nodeWording('reason.account-closed'));
    clearTimeout(this.#probeTimer);
    this.#unwatchOutbox();
    this.#unwatchStore();
    this.#listeners.clear();
    // Resends on the wire get the client's timeout to finish, as a live send does (the send node's close).
    const detached = this.outbox.detach(this.#worker);
    await settledWithin([detached], this.deployed.timeout);
    this.#resendStop.abort();
    await detached;
    await this.#client?.close();
  }

  /** On first use: by then the http proxy config node has started. */
  #build(): GatewayClient {
    const proxy = this.#surroundings.proxy();
    if (proxy === null) throw nodeInvalid('proxy-missing', { account: this.#label }, { key: 'account-incomplete' });
    const config = this.#config;
    try {
      return new GatewayClient({
        baseUrl: this.deployed.baseUrl,
        applicationId: this.#credentials.application_id as string,
        applicationToken: this.#credentials.application_token as string,
        applicationProduct: config.application_product || undefined,
        defaultCountry: config.country || undefined,
        timeout: this.deployed.timeout,
        retries: numberSetting(config.retries, DEFAULT_RETRIES),
        // Not in the panel: for flows (and tests) that need another first backoff.
        retryDelay: numberSetting(config.retryDelay, 500),
        proxy,
      });
    } catch (error) {
      // A proxy URL undici cannot use; the message names no credential.
      throw proxy
        ? nodeInvalid('proxy-unusable', undefined, { key: 'account-incomplete' })
        : nodeInvalid('proxy-error', { cause: causeOf(error) }, { key: 'account-incomplete' });
    }
  }

  async #resend(entry: OutboxEntry, probe: boolean) {
    const client = this.gateway();
    const prepared = await client.prepareResendInSteps(entry.operation, entry);
    const withdraw = probe ? undefined : this.circuit.signal;
    if (this.limiter.enabled) await this.limiter.acquire(prepared.messages, this.#resendStop.signal, withdraw);
    try {
      return await send(client, entry.operation, prepared, this.#resendStop.signal, { retries: 0, withdraw });
    } catch (error) {
      if (deferrable(error, entry.operation)) this.limiter.refund(prepared.messages);
      throw error;
    }
  }
}

function send(
  client: GatewayClient,
  operation: Operation,
  prepared: PreparedRequest,
  stop: AbortSignal,
  policy?: SendPolicy,
): Promise<SendResult> {
  return operation.kind === 'promotional'
    ? client.sendPromotional(prepared, stop, policy)
    : client.sendTransactional(prepared, stop, policy);
}
