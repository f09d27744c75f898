/**
 * The input pipeline of the promotional and transactional nodes: assemble the fields, check them
 * (nothing is sent when they fail), wait for the account's rate limit, send, route the result to
 * the ports, and end each msg with exactly one `done`. A msg the gateway could not be reached for
 * (or that waited or was on the wire when the node closed) goes to the account's outbox instead
 * of failing; it comes out of the ports (or reaches Catch) when it leaves the outbox.
 */
import type { Node, NodeAPI, NodeDef } from 'node-red';
import {
  AbortGroup,
  briefOf,
  GatewayError,
  type Circuit,
  type GiveUp,
  InFlight,
  isHeld,
  scheduleMs,
  type GatewayClient,
  storableBody,
  type PreparedRequest,
  type PromotionalResult,
  type SendFields,
  type SendRecord,
  type TransactionalResult,
} from '../../gateway';
import { deferrable, giveUpError, storableMsg } from '../account/outbox';
import type { Account, DeferredHandler } from '../account/account';
import { numberSetting } from '../plumbing/settings';
import {
  accountOf,
  catalogText,
  fail,
  NO_ACCOUNT,
  nodeCatalog,
  sendInBatches,
  sequenceParts,
  StatusThrottle,
  statusText,
  type Done,
  type Msg,
  type Send,
} from '../plumbing/runtime';
import { fieldPlan, noRecipient, nodeOperation, sendFields, type SendConfig } from './send-fields';
import { stormGuardOf } from '../account/storm';
import { numberKey } from '../account/tracking';

type Kind = 'promotional' | 'transactional';

/** Counts the msgs the send nodes take, so the outbox keeps them in the order they came. */
let taken = 0;

/** The constructor of a promotional or transactional node (loaded when the first one starts). */
export function sendNode(RED: NodeAPI, kind: Kind) {
  const texts = nodeCatalog(RED, `bulkgate-${kind}`);
  function BulkgateSend(this: Node, config: NodeDef & SendConfig) {
    RED.nodes.createNode(this, config);
    const node = this;
    const operation = nodeOperation(kind, config);
    const plan = fieldPlan(config, operation);
    const account = accountOf(RED, config.account);
    /** Aborts what waits in the account's queue: on close it is refused at once. */
    const queueStop = new AbortGroup();
    /** Aborts requests on the wire: on close, after they had the timeout to finish. */
    const wireStop = new AbortGroup();
    const inFlight = new InFlight();
    let sent = 0;
    let rejected = 0;
    /** Msgs the gateway dropped as copies of an earlier one (duplicates_check). */
    let copies = 0;
    const status = new StatusThrottle(node);
    // Storm protection is the transactional node's (a promotional send is one request to many).
    const storm = stormGuardOf<{ msg: Msg; fields: SendFields }>(
      kind === 'transactional' ? config : {},
      (last, held) => void sendNotice(last.msg, last.fields, held),
    );

    /** Whether the status shows this node's msgs waiting in the outbox (cleared when none waits). */
    let showsWaiting = false;
    const unwatch = account?.watch(() => {
      const queued = account.limiter.queued;
      const waiting = account.outbox.waitingFor(node.id);
      if (waiting > 0) {
        showsWaiting = true;
        status.show(() => ({ fill: 'yellow', shape: 'ring', text: statusText(texts, 'waiting', { count: account.outbox.waitingFor(node.id) }) }));
      } else if (queued > 0) {
        showsWaiting = false;
        status.show(() => ({ fill: 'yellow', shape: 'ring', text: statusText(texts, 'queued', { count: queued }) }));
      } else if (showsWaiting) {
        showsWaiting = false;
        showTotals();
      }
    });

    // A msg's way from the input to its end is a chain of promises, not an async function: an
    // async function keeps a frame of all its locals per msg in flight, and a burst holds 10,000
    // msgs in flight (the benchmark's bursts). Each step returns undefined when the msg has ended at once.

    /** The node's give-up time, ms from a msg's first attempt (0: the account's outbox time only). */
    const giveUpMs = numberSetting(config.giveUpAfter, 0) * 1000;
    /** When a msg taken at `since` gives up, wherever it waits, and the error it ends with then. */
    const giveUpOf = (since: number, where: string): GiveUp | undefined =>
      giveUpMs > 0 ? { at: since + giveUpMs, error: () => giveUpError(giveUpMs / 1000, where) } : undefined;

    const ignored = (field: string) => node.warn(catalogText(texts, 'warnings.payload-ignored', { field }));

    /** Reads a msg's fields (throws, or rejects, when they cannot be read), then dispatches it. */
    function handle(msg: Msg, send: Send, done: Done): Promise<void> | undefined {
      const when = { since: Date.now(), order: ++taken };
      if (!account) throw NO_ACCOUNT();
      const client = account.gateway();
      const assembled = sendFields(RED, node, plan, msg, ignored);
      // Most settings are read at once; only flow, global and JSONata ones make it wait.
      if (assembled instanceof Promise) return assembled.then((fields) => dispatch(account, client, msg, fields, when, send, done));
      return dispatch(account, client, msg, assembled, when, send, done);
    }

    /**
     * Checks the fields (throws when they fail: nothing is sent), then holds the msg back (storm
     * protection), keeps it in the outbox behind older ones, or sends it and routes the result.
     * A send the gateway could not be reached for goes to the outbox instead of failing.
     */
    function dispatch(
      account: Account,
      client: GatewayClient,
      msg: Msg,
      fields: SendFields,
      when: { since: number; order: number },
      send: Send,
      done: Done,
    ): Promise<void> | undefined {
      const missing = noRecipient(plan, fields, msg);
      if (missing) throw missing;
      const prepared = client.prepareOperation(operation, fields);
      if (!storm.admit({ msg, fields })) {
        // Held back by storm protection: deliberately not sent, so not an error.
        status.show(() => ({ fill: 'yellow', shape: 'ring', text: statusText(texts, 'held', { count: storm.held }) }));
        done();
        return undefined;
      }
      if (prepared.pastSchedule) {
        // Sent at once, as the gateway does with it; the sender hears of it in the log and on the msg.
        const warning = catalogText(texts, 'warnings.schedule-past', { schedule: prepared.pastSchedule });
        node.warn(warning);
        msg.bulkgate = { ...(msg.bulkgate as object | undefined), warning };
      }
      if (prepared.missingVariables.length) {
        node.warn(catalogText(texts, 'warnings.missing-variables', { names: prepared.missingVariables.map((n) => `<${n}>`).join(', ') }));
      }
      const outbox = account.outboxMinutes > 0 ? account.outbox : undefined;
      // While messages wait in the outbox, or the gateway was just found unreachable, a new one
      // goes behind them without trying it: order is kept per account.
      if (outbox && (outbox.waiting || account.circuit.open) && !prepared.nothingToSend) {
        const reason = outbox.waiting ? 'older messages of this account wait in the outbox' : 'the gateway could not be reached a moment ago';
        return keep(msg, prepared, when, 0, reason).then(() => done());
      }
      // With an outbox, the account's circuit holds what waits (here, in the client) once the gateway fails.
      const circuit = outbox ? account.circuit : undefined;
      let counted = false;
      const sending = account.limiter.enabled
        ? account.limiter.acquire(prepared.messages, queueStop, circuit, giveUpOf(when.since, "it waited for the account's rate limit")).then(() => {
            counted = true;
            return transmit(client, prepared, circuit, when.since);
          })
        : transmit(client, prepared, circuit, when.since);
      return sending.then(
        (result) => {
          const sending = route(msg, result, send, () => storableBody(prepared), false);
          if (!sending) return done();
          return sending.then(() => done());
        },
        (error: unknown) => {
          if (!outbox || !deferrable(error, operation)) throw error;
          // Held back by the circuit, it was never tried.
          const attempts = isHeld(error) ? 0 : 1;
          // It will be sent from the outbox: this attempt does not use up the account's rate limit.
          if (counted) account.limiter.refund(prepared.messages);
          return keep(msg, prepared, when, attempts, (error as Error).message, error).then(() => done());
        },
      );
    }

    function transmit(
      client: GatewayClient,
      prepared: PreparedRequest,
      circuit: Circuit | undefined,
      since: number,
    ): Promise<PromotionalResult | TransactionalResult> {
      status.show(() => ({ fill: 'blue', shape: 'dot', text: statusText(texts, 'sending') }));
      const giveUp = giveUpOf(since, 'the gateway could not be reached before the next retry was due');
      const policy = circuit || giveUp ? { circuit, giveUp } : undefined;
      return kind === 'promotional'
        ? client.sendPromotional(prepared, wireStop, undefined, policy)
        : client.sendTransactional(prepared, wireStop, undefined, policy);
    }

    /**
     * Routes a result to the ports; a promotional one with many recipients resolves once its last
     * batch is sent. `body`: the wire body (without credentials), read only when delivery tracking needs it.
     */
    function route(
      msg: Msg,
      result: PromotionalResult | TransactionalResult,
      send: Send,
      body: () => Record<string, unknown>,
      resend: boolean,
    ): Promise<void> | undefined {
      if ('response' in result) return routePromotional(msg, result, send, body, resend);
      routeTransactional(msg, result, send, body, resend);
      return undefined;
    }

    /**
     * Whether an accepted record is a copy the gateway dropped (duplicates_check): its sms_id came
     * back before in the window (`gateway`: this msg was not sent), or, for an outbox resend, it cost
     * nothing (`resend`: its first attempt got through; a success).
     */
    function duplicateOf(record: SendRecord, resend: boolean): 'gateway' | 'resend' | undefined {
      if (record.status === 'error' || typeof record.sms_id !== 'string' || !account) return undefined;
      const seen = account.recent.seenBefore(record.sms_id);
      if (resend) return seen || record.price === 0 ? 'resend' : undefined;
      return seen ? 'gateway' : undefined;
    }

    /** The account's delivery tracking remembers what was accepted, while an events node listens. */
    const tracker = account?.tracker;

    /**
     * Keeps a msg in the account's outbox; resolves once it is on disk. If it cannot be kept (the
     * disk is full, say), the send's own error goes to Catch, or one that says why.
     */
    async function keep(
      msg: Msg,
      prepared: PreparedRequest,
      when: { since: number; order: number },
      attempts: number,
      reason: string,
      error?: unknown,
    ): Promise<void> {
      try {
        await (account as Account).outbox.keep(
          {
            node: node.id,
            operation,
            body: storableBody(prepared),
            rejected: prepared.rejected,
            messages: prepared.messages,
            msg: storableMsg(msg),
            ...when,
            deadline: giveUpMs > 0 ? when.since + giveUpMs : undefined,
            attempts,
            reason,
          },
          msg,
        );
      } catch (failure) {
        // Full, or held by another Node-RED: that is the msg's end (Catch), and it says why.
        if (failure instanceof GatewayError) throw failure;
        node.warn(catalogText(texts, 'warnings.outbox-write-failed', { reason: (failure as Error).message }));
        throw error ?? failure;
      }
    }

    /** A msg that left the outbox: out of the ports as a live send's, or to Catch; with `msg.bulkgate.deferred`. */
    const settleDeferred: DeferredHandler = (msg, entry, outcome) => {
      const deferred = { since: new Date(entry.since).toISOString(), attempts: entry.attempts };
      try {
        if ('result' in outcome) {
          msg.bulkgate = { ...(msg.bulkgate as object | undefined), deferred };
          void route(
            msg,
            outcome.result,
            (m) => node.send(m as never),
            () => entry.body,
            true,
          )?.catch(() => undefined);
        } else {
          fail(texts, status, msg, outcome.error, (e) => {
            msg.bulkgate = { ...(msg.bulkgate as object), deferred };
            node.error(e, msg);
          });
        }
      } catch {
        // A message leaving the outbox must never throw into the account's round.
      }
    };
    const stopDeferred = account?.onDeferred(node.id, settleDeferred);

    function routePromotional(msg: Msg, result: PromotionalResult, send: Send, body: () => Record<string, unknown>, resend: boolean): Promise<void> {
      const records = result.response;
      if (tracker?.listening) {
        // msg.sent.payload of each recipient: its entry of the request, as the node sent it.
        const wire = body();
        const entries = recipientEntries(wire.number);
        const at = scheduleMs(wire.schedule);
        for (const record of records) {
          if (record.status === 'error' || typeof record.sms_id !== 'string') continue;
          const key = numberKey(record.number);
          tracker.track(record.sms_id, record.number, { topic: msg.topic, payload: entries.get(key) ?? { number: record.number }, node: node.id }, at);
        }
      }
      const accepted: Msg[] = [];
      const refused: Msg[] = [];
      // One clone of the msg (without its payload, which may hold the whole recipient list);
      // each record's msg is a shallow copy of it, not a deep copy per recipient.
      const { payload: _payload, ...rest } = msg;
      const template = RED.util.cloneMessage(rest as Msg);
      const id = RED.util.generateId();
      let dropped = 0;
      records.forEach((record: SendRecord, index) => {
        const duplicate = duplicateOf(record, resend);
        const out = { ...template, payload: duplicate ? { ...record, duplicate } : record, parts: sequenceParts(msg, id, index, records.length) } as Msg;
        if (duplicate) out.bulkgate = { ...(template.bulkgate as object | undefined), duplicate };
        if (duplicate === 'gateway') dropped++;
        (record.status === 'error' ? refused : accepted).push(out);
      });
      copies += dropped;
      sent += accepted.length - dropped;
      rejected += refused.length;
      const last = refused.at(-1)?.payload as SendRecord | undefined;
      if (last) lastReason = reasonOf(last);
      msg.payload = { total: result.total, response: result.response };
      showTotals();
      return sendInBatches(send, [accepted, refused, msg]);
    }

    function routeTransactional(msg: Msg, result: TransactionalResult, send: Send, body: () => Record<string, unknown>, resend: boolean): void {
      const duplicate = result.rejected ? undefined : duplicateOf(result.record, resend);
      const record = duplicate ? { ...result.record, duplicate } : result.record;
      if (duplicate) msg.bulkgate = { ...(msg.bulkgate as object | undefined), duplicate };
      if (!result.rejected && tracker?.listening && typeof record.sms_id === 'string') {
        const at = record.status === 'scheduled' ? scheduleMs(body().schedule) : undefined;
        // A copy of the payload as the node received it: the flow may change the msg's later.
        const sent = { topic: msg.topic, payload: RED.util.cloneMessage(msg.payload as never), node: node.id };
        tracker.track(record.sms_id, record.number ?? body().number, sent, at);
      }
      msg.payload = record;
      if (result.rejected) {
        rejected++;
        lastReason = reasonOf(record);
        send([null, msg]);
      } else {
        if (duplicate === 'gateway') copies++;
        else sent++;
        send([msg, null]);
      }
      showTotals();
    }

    /** The one message a storm window ends with: how many alerts were held, and the last one's text. */
    async function sendNotice(last: Msg, fields: SendFields, held: number): Promise<void> {
      const msg = RED.util.cloneMessage(last);
      msg.held = held;
      try {
        if (!account) return;
        const lastText = typeof fields.text === 'string' ? fields.text : '';
        const text = catalogText(texts, 'storm.notice', {
          count: held,
          seconds: storm.windowMs / 1000,
          text: lastText.length > 120 ? `${lastText.slice(0, 117)}...` : lastText,
        });
        // Channel texts would win over the notice: the cascade keeps its settings, not its texts.
        const channel = Array.isArray(fields.channel) ? fields.channel.map((c) => ({ ...(c as object), text: undefined })) : fields.channel;
        const client = account.gateway();
        const prepared = client.prepareOperation(operation, { ...fields, text, channel });
        if (account.limiter.enabled) await account.limiter.acquire(prepared.messages, queueStop);
        routeTransactional(
          msg,
          await client.sendTransactional(prepared, wireStop),
          (m) => node.send(m as never),
          () => storableBody(prepared),
          false,
        );
      } catch (error) {
        fail(texts, status, msg, error, (e) => node.error(e, msg));
      }
    }

    /** Why the last recipient was rejected, in the status's few words (`invalid number`). */
    let lastReason = '';
    const reasonOf = (record: SendRecord): string => {
      const brief = briefOf(String(record.type ?? 'invalid_phone_number'), String(record.error ?? ''));
      return catalogText(texts, `brief.${brief.key}`, brief.params);
    };

    function showTotals(): void {
      const queued = account?.limiter.queued ?? 0;
      const key = queued ? 'totals-queued' : rejected ? 'totals-why' : 'totals';
      const totals = statusText(texts, key, { sent, rejected, queued, reason: lastReason });
      // A msg the gateway dropped as a copy was not sent: the status says so beside the totals.
      const text = copies ? `${totals} ${statusText(texts, 'copies', { count: copies })}` : totals;
      status.show(() => ({ fill: rejected || copies ? 'yellow' : 'green', shape: 'dot', text }));
    }

    node.on('input', (msg: object, send: Send, done: Done) => {
      const failed = (error: unknown) => {
        try {
          fail(texts, status, msg as Msg, error, done);
        } catch {
          // The failure path must never throw out of a handler.
        }
      };
      let task: Promise<void> | undefined;
      try {
        task = handle(msg as Msg, send, done);
      } catch (error) {
        failed(error);
        return;
      }
      if (task) void inFlight.track(task.catch(failed));
    });

    node.on('close', (_removed: boolean, done: () => void) => {
      unwatch?.();
      stopDeferred?.();
      status.close();
      storm.close();
      queueStop.abort();
      void inFlight
        .settled(account ? safeTimeout(account) : 0)
        .then(() => {
          wireStop.abort();
          return inFlight.settled();
        })
        .then(done);
    });
  }

  return BulkgateSend;
}

function safeTimeout(account: Account): number {
  try {
    return account.gateway().timeout;
  } catch {
    return 0;
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
