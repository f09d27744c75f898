/** A send's last step: the answer to the ports, what was accepted tracked, drops marked, the totals. */
import type { Node, NodeAPI, NodeStatus } from 'node-red';
import { briefOf, scheduleMs, type PromotionalResult, type SendRecord, type TransactionalResult } from '../../gateway';
import type { Account } from '../account/account';
import { eachInSteps, inTurns } from '../../gateway/steps';
import { storeCause } from '../account/store-health';
import { numberKey } from '../account/tracking';
import {
  sendInBatches,
  sequence,
  type Msg,
  type NodeCatalog,
  type Send,
  type StatusThrottle,
} from '../plumbing/runtime';

/** The wire body of a send (without credentials), read only when delivery tracking needs it. */
type WireBody = () => Record<string, unknown>;

/** What route() answers for a result routed at once. */
const ROUTED: Promise<void> = Promise.resolve();

export class SendRouter {
  sent = 0;
  rejected = 0;
  /** Msgs the gateway dropped as duplicates of an earlier one (duplicates_check). */
  duplicates = 0;
  /** Msgs from the outbox that ended in Catch `unconfirmed`: they may have been delivered. */
  unconfirmed = 0;
  /** Why the last recipient was rejected (`invalid number`). */
  lastReason = '';

  constructor(
    private readonly RED: NodeAPI,
    private readonly node: Node,
    private readonly texts: NodeCatalog,
    private readonly status: StatusThrottle,
    private readonly account: Account | null,
  ) {}

  /** `count` recipients rejected, `last` the last of them: its reason shows in the status. */
  rejectedFor(last: SendRecord, count = 1): void {
    this.rejected += count;
    const brief = briefOf(String(last.type ?? 'invalid_phone_number'), String(last.error ?? ''));
    this.lastReason = this.texts(`brief.${brief.key}`, brief.params);
  }

  show(): void {
    this.status.show(this.#describe);
  }

  readonly #describe = (): NodeStatus => {
    const { texts, sent, rejected, duplicates, unconfirmed } = this;
    const queued = this.account?.limiter.queued ?? 0;
    const key = queued ? 'totals-queued' : rejected ? 'totals-why' : 'totals';
    let text = texts(`status.${key}`, { sent, rejected, queued, reason: this.lastReason });
    if (duplicates) text += ` ${texts('status.duplicates', { count: duplicates })}`;
    if (unconfirmed) text += ` ${texts('status.unconfirmed', { count: unconfirmed })}`;
    // While the shared store cannot be reached the copies of Node-RED are not coordinated: said beside the totals, or
    // alone before any send.
    const trouble = this.account?.storeTrouble;
    if (trouble) {
      const store = texts('status.store-down', { cause: texts(`status.store-causes.${storeCause(trouble.reason)}`) });
      return {
        fill: 'yellow',
        shape: 'ring',
        text: sent || rejected || duplicates || unconfirmed ? `${text} / ${store}` : store,
      };
    }
    return { fill: rejected || duplicates || unconfirmed ? 'yellow' : 'green', shape: 'dot', text };
  };

  /**
   * Routes a result to the ports (a promotional one resolves once its last batch is sent); `resend`: a send from the
   * outbox.
   */
  route(
    msg: Msg,
    result: PromotionalResult | TransactionalResult,
    send: Send,
    body: WireBody,
    resend: boolean,
  ): Promise<void> {
    if ('response' in result) return this.#promotional(msg, result, send, body, resend);
    // Not an async function: an alert's result is routed at once, without one more promise of its own.
    this.transactional(msg, result, send, body, resend);
    return ROUTED;
  }

  transactional(msg: Msg, result: TransactionalResult, send: Send, body: WireBody, resend: boolean): void {
    const duplicate = result.rejected ? undefined : this.#duplicateOf(result.record, resend);
    const record = duplicate ? { ...result.record, duplicate } : result.record;
    if (duplicate) msg.bulkgate = { ...(msg.bulkgate as object | undefined), duplicate };
    const tracker = this.account?.tracker;
    if (!result.rejected && tracker?.listening && typeof record.sms_id === 'string') {
      const at = record.status === 'scheduled' ? scheduleMs(body().schedule) : undefined;
      // A copy of the payload as the node received it: the flow may change the msg's later.
      const sent = { topic: msg.topic, payload: this.RED.util.cloneMessage(msg.payload as never), node: this.node.id };
      tracker.track(record.sms_id, record.number ?? body().number, sent, at);
    }
    msg.payload = record;
    if (result.rejected) {
      this.rejectedFor(record);
      send([null, msg]);
    } else {
      if (duplicate === 'gateway') this.duplicates++;
      else this.sent++;
      send([msg, null]);
    }
    this.show();
  }

  /**
   * A msg per recipient; a long answer's records in steps a turn of the event loop apart (another flow waits no more
   * than a step).
   */
  async #promotional(msg: Msg, result: PromotionalResult, send: Send, body: WireBody, resend: boolean): Promise<void> {
    const records = result.response;
    const track = this.#trackerFor(msg, body);
    const accepted: Msg[] = [];
    const refused: Msg[] = [];
    const copy = sequence(this.RED, msg, this.RED.util.generateId(), records.length);
    let dropped = 0;
    const each = (record: SendRecord, index: number) => {
      track?.(record);
      const duplicate = this.#duplicateOf(record, resend);
      const out = copy(duplicate ? { ...record, duplicate } : record, index);
      if (duplicate) out.bulkgate = { ...(out.bulkgate as object | undefined), duplicate };
      if (duplicate === 'gateway') dropped++;
      (record.status === 'error' ? refused : accepted).push(out);
    };
    const routed = () => {
      this.duplicates += dropped;
      this.sent += accepted.length - dropped;
      const last = refused.at(-1)?.payload as SendRecord | undefined;
      if (last) this.rejectedFor(last, refused.length);
      msg.payload = { total: result.total, response: result.response };
      this.show();
      return sendInBatches(send, [accepted, refused, msg]);
    };
    // A long list's records are routed in steps a turn of the event loop apart.
    await inTurns(eachInSteps(records, each));
    return routed();
  }

  /** Tracks a record: msg.sent.payload of each recipient is its entry of the request, as the node sent it. */
  #trackerFor(msg: Msg, body: WireBody): ((record: SendRecord) => void) | undefined {
    const tracker = this.account?.tracker;
    if (!tracker?.listening) return undefined;
    const wire = body();
    const entries = recipientEntries(wire.number);
    const at = scheduleMs(wire.schedule);
    return (record) => {
      if (record.status === 'error' || typeof record.sms_id !== 'string') return;
      const payload = entries.get(numberKey(record.number)) ?? { number: record.number };
      tracker.track(record.sms_id, record.number, { topic: msg.topic, payload, node: this.node.id }, at);
    };
  }

  /**
   * A duplicate (duplicates_check): `gateway`, its sms_id came before (not sent); `resend`, a resend that cost nothing.
   */
  #duplicateOf(record: SendRecord, resend: boolean): 'gateway' | 'resend' | undefined {
    if (record.status === 'error' || typeof record.sms_id !== 'string' || !this.account) return undefined;
    const seen = this.account.recent.seenBefore(record.sms_id);
    if (resend) return seen || record.price === 0 ? 'resend' : undefined;
    return seen ? 'gateway' : undefined;
  }
}

/** A request's recipient entries by number: `{number, variables, text}` objects, or `{number}` for plain numbers. */
function recipientEntries(wire: unknown): Map<string, unknown> {
  const entries = new Map<string, unknown>();
  const list = typeof wire === 'string' ? wire.split(';') : Array.isArray(wire) ? wire : [];
  for (const item of list) {
    const entry = typeof item === 'object' && item !== null ? item : { number: item };
    const key = numberKey((entry as { number?: unknown }).number);
    if (key && !entries.has(key)) entries.set(key, entry);
  }
  return entries;
}
