/**
 * The `bulkgate-escalation` node: raises an incident per `msg.topic`, texts the chain's steps
 * through the account's send path (rate limit, outbox), and stops when a texted number replies
 * with the incident's code or an ack word, or the flow acknowledges or resolves. Output 1 each SMS
 * the gateway took, 2 acknowledged or resolved, 3 nobody acknowledged. The incidents are the
 * account's (escalation-desk.ts), stored before a raising msg's `done`.
 */
import type { Node, NodeAPI, NodeDef } from 'node-red';
import {
  GatewayError,
  isPhoneNumber,
  isWithdrawn,
  normalizeNumber,
  sendOperation,
  splitNumbers,
  type PreparedRequest,
} from '../../gateway';
import type { Account } from '../account/account';
import {
  DEFAULT_ACK_WORDS,
  incidentKey,
  REPEAT_BOUNDS,
  STEP_BOUNDS,
  WAIT_BOUNDS,
  type Ended,
  type Fired,
  type Incident,
  type PendingSms,
  type Policy,
} from '../account/escalation';
import { deskFor, EscalationDesk, type IncidentDesk } from '../account/escalation-desk';
import { SharedEscalationDesk } from '../account/escalation-redis';
import { EscalationFile, EscalationMemory, escalationPath } from '../account/escalation-store';
import { storableMsg, type SendResult } from '../account/outbox';
import {
  fail,
  NO_ACCOUNT,
  nodeCatalog,
  sentenceOf,
  StatusThrottle,
  type Done,
  type Msg,
  type NodeCatalog,
  type Send,
} from '../plumbing/runtime';
import { causeOf, nodeError, nodeInvalid } from '../plumbing/wording';
import { accountOf } from './deployed-account';

export interface EscalationConfig {
  account?: string;
  steps?: unknown;
  repeat?: number | string;
  text?: string;
  ackWords?: string;
  sender_id?: string;
  sender_id_value?: string;
}

const OPERATION = sendOperation('transactional', { api: 'advanced' });

/**
 * One desk per account and user directory in this process: its nodes share the incidents (codes, ack words); on a Redis
 * store, every copy's.
 */
function deskOf(RED: NodeAPI, accountId: string, account: Account): IncidentDesk {
  const userDir = (RED.settings as { userDir?: string }).userDir;
  const shared = account.sharedIncidents;
  if (shared) return deskFor(`${userDir ?? ''}\0${accountId}\0shared`, () => new SharedEscalationDesk(shared));
  return deskFor(`${userDir ?? ''}\0${accountId}`, () => {
    const state = userDir ? new EscalationFile(escalationPath(userDir, accountId)) : new EscalationMemory();
    return new EscalationDesk(state);
  });
}

function inRange(value: number, bounds: { min: number; max: number }): boolean {
  return Number.isInteger(value) && value >= bounds.min && value <= bounds.max;
}

/** The node's settings as an incident's policy; a clear error naming the field when the chain cannot run. */
export function policyOf(config: EscalationConfig): Policy {
  const steps = Array.isArray(config.steps) ? (config.steps as { numbers?: unknown; wait?: unknown }[]) : [];
  if (steps.length < STEP_BOUNDS.min) throw nodeInvalid('escalation.no-steps');
  if (steps.length > STEP_BOUNDS.max) throw nodeInvalid('escalation.too-many-steps', { steps: steps.length });
  const policySteps = steps.map((step, i) => {
    const numbers = Array.isArray(step?.numbers) ? step.numbers.map(String) : splitNumbers(String(step?.numbers ?? ''));
    if (!numbers.length) throw nodeInvalid('escalation.no-numbers', { step: i + 1 });
    const impossible = numbers.find((n) => !isPhoneNumber(n));
    if (impossible !== undefined) throw nodeInvalid('escalation.bad-number', { step: i + 1, number: impossible });
    const wait = Number(step?.wait);
    if (!inRange(wait, WAIT_BOUNDS))
      throw nodeInvalid('escalation.wait', { step: i + 1, wait: String(step?.wait ?? '') });
    return { numbers: numbers.map(normalizeNumber), wait };
  });
  const repeat = config.repeat === undefined || config.repeat === '' ? 1 : Number(config.repeat);
  if (!inRange(repeat, REPEAT_BOUNDS)) throw nodeInvalid('escalation.repeat', { repeat: String(config.repeat) });
  const words = (config.ackWords === undefined ? DEFAULT_ACK_WORDS.join(',') : config.ackWords)
    .split(',')
    .map((w) => w.trim())
    .filter((w) => w !== '');
  return {
    steps: policySteps,
    repeat,
    text: config.text ?? '',
    ackWords: words,
    sender_id: config.sender_id || 'gSystem',
    sender_id_value: config.sender_id_value ?? '',
  };
}

/** Whether a chain SMS (its msg as the outbox keeps it) is one of this incident's. */
function ofIncident(msg: Record<string, unknown>, incident: Incident): boolean {
  const sms = msg.escalation as { key?: unknown; code?: unknown } | undefined;
  return sms?.key === incident.topic && sms?.code === incident.code;
}

/** A reply as the events node's output 2 emits it: `from` and the text. */
function replyOf(payload: unknown): { from: string; text: string } | undefined {
  if (typeof payload !== 'object' || payload === null) return undefined;
  const p = payload as Record<string, unknown>;
  if (p.status !== 'incoming' || (typeof p.from !== 'string' && typeof p.from !== 'number')) return undefined;
  const text = typeof p.message === 'string' ? p.message : typeof p.text === 'string' ? p.text : '';
  return { from: String(p.from), text };
}

let mustache: typeof import('mustache') | undefined;

/** Orders among this account's msgs in the outbox: after those the send nodes took before (they count from 1). */
let taken = 0;

export function escalationNode(RED: NodeAPI) {
  const texts = nodeCatalog(RED, 'bulkgate-escalation');
  return function BulkgateEscalation(this: Node, config: NodeDef & EscalationConfig) {
    RED.nodes.createNode(this, config);
    const runtime = new EscalationRuntime(RED, this, config, texts);
    this.on('input', (msg: object, send: Send, done: Done) => runtime.input(msg as Msg, send, done));
    this.on('close', (removed: boolean, done: () => void) => runtime.close(removed, done));
  };
}

class EscalationRuntime {
  readonly #account: Account | null;
  readonly #desk: IncidentDesk | undefined;
  readonly #status: StatusThrottle;
  /** Each incident's SMS waiting for the rate limit: withdrawn when it is acknowledged or resolved. */
  readonly #queued = new Map<string, AbortController>();
  readonly #wireStop = new AbortController();
  readonly #detach: (() => void) | undefined;
  readonly #stopDeferred: (() => void) | undefined;
  readonly #unwatch: (() => void) | undefined;
  #duplicates = 0;
  #ignored = 0;

  constructor(
    private readonly RED: NodeAPI,
    private readonly node: Node,
    private readonly config: EscalationConfig,
    private readonly texts: NodeCatalog,
  ) {
    this.#account = accountOf(RED, config.account);
    this.#status = new StatusThrottle(node);
    if (!this.#account || !config.account) return;
    const desk = (this.#desk = deskOf(RED, config.account, this.#account));
    void desk.ready.then(() => {
      if (desk.loadError)
        node.warn(texts('warnings.unreadable', { where: desk.state.where, cause: sentenceOf(texts, desk.loadError) }));
      this.#show();
    });
    this.#detach = desk.attach(node.id, {
      fired: (fired) => this.#fired(fired),
      ended: (ended) => this.#ended(ended),
      resume: (incident, sms) => sms.forEach((s) => this.#text(incident, s)),
      withdrawn: (incident) => this.#withdraw(incident),
    });
    this.#stopDeferred = this.#account.onDeferred(
      node.id,
      (msg, _entry, outcome) => this.#leftOutbox(msg, outcome),
      (msg) => this.#stillWanted(msg),
    );
    this.#unwatch = this.#account.watch(() => this.#show());
  }

  input(msg: Msg, send: Send, done: Done): void {
    this.#handle(msg, send, done).catch((error: unknown) => fail(this.texts, this.#status, msg, error, done));
  }

  async #handle(msg: Msg, _send: Send, done: Done): Promise<void> {
    const desk = this.#desk;
    if (!desk) throw NO_ACCOUNT();
    const reply = replyOf(msg.payload);
    if (reply) {
      const outcome = await desk.reply(reply.from, reply.text);
      if ('ignored' in outcome) {
        this.#ignored++;
        this.node.debug(
          this.texts('log.reply-ignored', { from: reply.from, why: this.texts(`log.ignored.${outcome.ignored}`) }),
        );
      }
      this.#show();
      return done();
    }
    const topic = msg.topic === undefined || msg.topic === null ? '' : String(msg.topic);
    const key = incidentKey(this.node.id, topic);
    if (msg.escalation !== undefined) {
      if (msg.escalation === 'acknowledge') await desk.acknowledge(key, 'flow');
      else if (msg.escalation === 'resolve') await desk.resolve(key);
      else throw nodeInvalid('escalation.command', { value: JSON.stringify(msg.escalation) ?? String(msg.escalation) });
      this.#show();
      return done();
    }
    const policy = policyOf(this.config);
    let incident: Incident | undefined;
    try {
      incident = await desk.raise(this.node.id, topic, policy, storableMsg(msg));
    } catch (error) {
      throw nodeError({
        type: 'store_unavailable',
        key: 'escalation.unstored',
        params: { where: desk.state.where, cause: causeOf(error) },
        cause: error,
      });
    }
    if (!incident) this.#duplicates++;
    this.#show();
    done();
  }

  #fired(fired: Fired): void {
    if (fired.kind === 'unacknowledged') {
      this.#unqueue(fired.incident.key);
      return this.#output(2, fired.incident, { state: 'unacknowledged' });
    }
    for (const sms of fired.sms) this.#text(fired.incident, sms);
    this.#show();
  }

  #ended({ incident, state, by, after }: Ended): void {
    this.#withdraw(incident);
    this.#output(1, incident, { state, by, after: Math.round(after) });
  }

  /** The raising msg on output 2 (ended) or 3 (nobody acknowledged), `msg.escalation` saying how the incident stands. */
  #output(port: 1 | 2, incident: Incident, how: Record<string, unknown>): void {
    const msg = this.#incidentMsg(incident);
    msg.escalation = { key: incident.topic, code: incident.code, ...how };
    const ports: (Msg | null)[] = [null, null, null];
    ports[port] = msg;
    this.node.send(ports as never);
    this.#show();
  }

  #unqueue(key: string): void {
    this.#queued.get(key)?.abort();
    this.#queued.delete(key);
  }

  /**
   * Acknowledged or resolved: its SMS still waiting for the rate limit or in the outbox are withdrawn (each logged at
   * debug level as it leaves).
   */
  #withdraw(incident: Incident): void {
    this.#unqueue(incident.key);
    this.#account?.outbox.withdraw(this.node.id, (msg) => ofIncident(msg, incident)).catch(() => undefined);
  }

  /** The raising msg again (a copy), its topic the incident's key. */
  #incidentMsg(incident: Incident): Msg {
    const msg = this.RED.util.cloneMessage(incident.msg) as Msg;
    msg._msgid = this.RED.util.generateId();
    msg.topic = incident.topic;
    return msg;
  }

  #smsText(incident: Incident, sms: PendingSms): string {
    const policy = incident.policy;
    if (policy.text) {
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      mustache ??= require('mustache') as typeof import('mustache');
      const view = { ...incident.msg, code: incident.code, step: sms.step, round: sms.round };
      return mustache.render(policy.text, view, {}, { escape: (value: unknown) => String(value) });
    }
    const payload = incident.msg.payload;
    const said = typeof payload === 'string' ? payload : payload === undefined ? '' : JSON.stringify(payload);
    // From the second SMS on, the text names the step and round: the gateway's duplicate check never drops it as a
    // copy.
    const where =
      sms.step > 1 || sms.round > 1 ? ` (${this.texts('sms.step', { step: sms.step, round: sms.round })})` : '';
    return `${said}${where} ${this.texts('sms.hint', { code: incident.code })}`.trim();
  }

  /**
   * One SMS of the chain, through the account's send path; its answer recorded (a crash after it does not send it
   * again).
   */
  #text(incident: Incident, sms: PendingSms): void {
    const desk = this.#desk as IncidentDesk;
    const account = this.#account as Account;
    const msg = this.#incidentMsg(incident);
    msg.escalation = {
      key: incident.topic,
      code: incident.code,
      step: sms.step,
      round: sms.round,
      number: sms.number,
      late: sms.late,
    };
    const answered = (number?: string) => desk.answered(incident, sms, number).catch(() => undefined);
    if (!desk.stillEscalating(incident)) {
      void answered();
      return;
    }
    let queue = this.#queued.get(incident.key);
    if (!queue) this.#queued.set(incident.key, (queue = new AbortController()));
    let prepared: PreparedRequest;
    try {
      prepared = account.gateway().prepareOperation(OPERATION, {
        number: sms.number,
        text: this.#smsText(incident, sms),
        sender_id: incident.policy.sender_id,
        sender_id_value: incident.policy.sender_id_value || undefined,
      });
    } catch (error) {
      void answered();
      this.#failed(msg, error);
      return;
    }
    account
      .submit({
        node: this.node.id,
        operation: OPERATION,
        prepared,
        msg,
        since: Date.now(),
        order: ++taken,
        giveUpMs: 0,
        queueStop: queue.signal,
        wireStop: this.#wireStop.signal,
        onWire: () => undefined,
      })
      .then(
        (submitted) => {
          if ('kept' in submitted) {
            // The outbox holds it now, durably: it comes back through #leftOutbox.
            void answered();
            // Acknowledged while it was being kept: withdrawn as the others were.
            if (!desk.stillEscalating(incident)) this.#withdraw(incident);
            this.#show();
            return;
          }
          void answered(this.#took(msg, submitted.result));
        },
        (error: unknown) => {
          void answered();
          if (!desk.stillEscalating(incident)) {
            this.node.debug(this.texts('log.withdrawn', { key: incident.topic, number: sms.number }));
            return;
          }
          this.#failed(msg, error);
        },
      )
      .catch(() => undefined);
  }

  /**
   * The gateway's answer: output 1 when it took the SMS, Catch when it refused it; the number as the gateway wrote it.
   */
  #took(msg: Msg, result: SendResult): string | undefined {
    if (!('record' in result)) return undefined;
    const record = result.record as Record<string, unknown>;
    if (result.rejected) {
      const reason = String(record.error ?? record.status ?? 'rejected');
      this.#failed(
        msg,
        nodeError({
          type: 'invalid_phone_number',
          key: 'escalation.rejected',
          params: { number: String(msg.escalation && (msg.escalation as { number: string }).number), reason },
        }),
      );
      return undefined;
    }
    msg.payload = record;
    this.node.send([msg, null, null] as never);
    this.#show();
    return typeof record.number === 'string' || typeof record.number === 'number' ? String(record.number) : undefined;
  }

  /**
   * Asked by the outbox before each attempt of a chain SMS it keeps: the incidents' state now (at
   * every copy, on a shared store) withdraws one whose incident was acknowledged or resolved where
   * this copy did not see it (another copy, a crash before the withdrawal), and keeps the last step's
   * SMS of a chain that ran out (nobody acknowledged).
   */
  #stillWanted(msg: Record<string, unknown>): boolean | Promise<boolean> {
    const sms = msg.escalation as { key?: unknown; code?: unknown } | undefined;
    if (!this.#desk || typeof sms?.key !== 'string' || typeof sms.code !== 'string') return true;
    return this.#desk.stillWanted(incidentKey(this.node.id, sms.key), sms.code);
  }

  #leftOutbox(msg: Msg, outcome: { result: SendResult } | { error: GatewayError }): void {
    try {
      if ('result' in outcome) {
        const number = this.#took(msg, outcome.result);
        if (number) this.#desk?.texted(incidentKey(this.node.id, String(msg.topic ?? '')), number);
      } else if (isWithdrawn(outcome.error)) {
        const sms = msg.escalation as { key?: unknown; number?: unknown } | undefined;
        this.node.debug(
          this.texts('log.withdrawn', { key: String(sms?.key ?? msg.topic), number: String(sms?.number) }),
        );
      } else this.#failed(msg, outcome.error);
    } catch {
      // A msg leaving the outbox must never throw into the account's round.
    }
  }

  /** A chain SMS that failed for good: to Catch with the raising msg and msg.escalation; the chain goes on. */
  #failed(msg: Msg, error: unknown): void {
    fail(this.texts, this.#status, msg, error, (e) => this.node.error(e, msg));
  }

  #show(): void {
    const desk = this.#desk;
    const account = this.#account;
    if (!desk || !account) return;
    this.#status.show(() => {
      const waiting = account.outbox.waitingFor(this.node.id);
      if (waiting > 0) return { fill: 'yellow', shape: 'ring', text: this.texts('status.waiting', { count: waiting }) };
      const { open, acknowledged } = desk.counts(this.node.id);
      const parts = [this.texts('status.open', { count: open })];
      if (acknowledged) parts.push(this.texts('status.acknowledged', { count: acknowledged }));
      if (this.#duplicates) parts.push(this.texts('status.raised-again', { count: this.#duplicates }));
      if (this.#ignored) parts.push(this.texts('status.replies-ignored', { count: this.#ignored }));
      return { fill: open > acknowledged ? 'yellow' : 'green', shape: open ? 'ring' : 'dot', text: parts.join(', ') };
    });
  }

  close(removed: boolean, done: () => void): void {
    this.#detach?.();
    this.#stopDeferred?.();
    this.#unwatch?.();
    this.#status.close();
    // Redeployed: the chain's SMS already handed on finish (their answers are recorded at the desk).
    if (!removed || !this.#desk) return done();
    for (const queue of this.#queued.values()) queue.abort();
    // Deleted: its open incidents end with a log line; nothing more is sent for them. Its SMS kept in
    // the outbox are withdrawn; one still on its way there (out of the rate limit) is withdrawn as
    // it is kept, its incident no longer escalating (#text).
    void this.#desk
      .dropNode(this.node.id)
      .then((dropped) => {
        for (const incident of dropped)
          this.node.log(this.texts('log.dropped', { key: incident.topic, code: incident.code }));
      })
      .catch(() => undefined)
      .then(() => void this.#account?.outbox.withdraw(this.node.id, () => true).catch(() => undefined))
      .then(done);
  }
}
