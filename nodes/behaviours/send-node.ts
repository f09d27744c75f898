/** The send nodes' pipeline: read, prepare, gate (storm, outbox, rate limit), send, route; one `done` per msg. */
import type { Node, NodeAPI, NodeDef } from 'node-red';
import {
  settledWithin,
  storableBody,
  type GatewayClient,
  type Operation,
  type PreparedRequest,
  type SendFields,
} from '../../gateway';
import type { Account, DeferredHandler } from '../account/account';
import { stormGuardOf, type StormGuard } from '../account/storm';
import {
  fail,
  NO_ACCOUNT,
  nodeCatalog,
  StatusThrottle,
  type Done,
  type Msg,
  type NodeCatalog,
  type Send,
} from '../plumbing/runtime';
import { numberSetting } from '../plumbing/settings';
import { accountOf } from './deployed-account';
import { fieldPlan, noRecipient, nodeOperation, sendFields, type FieldPlan, type SendConfig } from './send-fields';
import { SendRouter } from './send-route';

type Taken = { since: number; order: number };

/** Counts the msgs the send nodes take, so the outbox keeps them in the order they came. */
let taken = 0;

export function sendNode(RED: NodeAPI, kind: 'promotional' | 'transactional') {
  const texts = nodeCatalog(RED, `bulkgate-${kind}`);
  return function BulkgateSend(this: Node, config: NodeDef & SendConfig) {
    RED.nodes.createNode(this, config);
    const pipeline = new SendPipeline(RED, this, kind, config, texts);
    this.on('input', (msg: object, send: Send, done: Done) => pipeline.input(msg as Msg, send, done));
    this.on('close', (_removed: boolean, done: () => void) => pipeline.close(done));
  };
}

class SendPipeline {
  readonly #operation: Operation;
  readonly #plan: FieldPlan;
  readonly #account: Account | null;
  /** Aborts what waits in the account's queue: on close it is refused at once. */
  readonly #queueStop = new AbortController();
  /** Aborts requests on the wire: on close, after they had the timeout to finish. */
  readonly #wireStop = new AbortController();
  readonly #inFlight = new Set<Promise<void>>();
  readonly #status: StatusThrottle;
  readonly #router: SendRouter;
  readonly #storm: StormGuard<{ msg: Msg; fields: SendFields }>;
  readonly #giveUpMs: number;
  #showsWaiting = false;
  #showsStoreTrouble = false;
  readonly #unwatch: (() => void) | undefined;
  readonly #stopDeferred: (() => void) | undefined;

  constructor(
    private readonly RED: NodeAPI,
    private readonly node: Node,
    kind: 'promotional' | 'transactional',
    config: SendConfig,
    private readonly texts: NodeCatalog,
  ) {
    this.#operation = nodeOperation(kind, config);
    this.#plan = fieldPlan(config, this.#operation);
    this.#account = accountOf(RED, config.account);
    this.#status = new StatusThrottle(node);
    this.#router = new SendRouter(RED, node, texts, this.#status, this.#account);
    // Storm protection is the transactional node's (a promotional send is one request to many).
    this.#storm = stormGuardOf(
      kind === 'transactional' ? config : {},
      (last, held) => void this.#sendNotice(last.msg, last.fields, held),
    );
    this.#giveUpMs = numberSetting(config.giveUpAfter, 0) * 1000;
    this.#unwatch = this.#account?.watch(() => this.#showQueue());
    // Redeployed alone while its account's store is down: says so at once.
    if (this.#account?.storeTrouble) this.#showQueue();
    this.#stopDeferred = this.#account?.onDeferred(node.id, this.#settleDeferred);
  }

  /** A msg comes in: it ends once, on a port, in the outbox, held back, or at Catch; nothing throws out of here. */
  input(msg: Msg, send: Send, done: Done): void {
    this.#track(this.#read(msg, send, done), (error) => fail(this.texts, this.#status, msg, error, done));
  }

  /** Close waits for it; its error ends its msg at Catch. */
  #track(task: Promise<void>, failed: (error: unknown) => void): void {
    const tracked = task.catch(failed);
    this.#inFlight.add(tracked);
    // then, not finally: fewer promises a msg; and a failure in `failed` is handled here, not left unhandled.
    const forget = () => this.#inFlight.delete(tracked);
    void tracked.then(forget, forget);
  }

  async close(done: () => void): Promise<void> {
    this.#unwatch?.();
    this.#stopDeferred?.();
    this.#status.close();
    this.#storm.close();
    this.#queueStop.abort();
    await settledWithin(this.#inFlight, this.#account?.deployed.timeout ?? 0);
    this.#wireStop.abort();
    await Promise.all(this.#inFlight);
    done();
  }

  async #read(msg: Msg, send: Send, done: Done): Promise<void> {
    const when = { since: Date.now(), order: ++taken };
    const account = this.#account;
    if (!account) throw NO_ACCOUNT();
    const client = account.gateway();
    const fields = await sendFields(this.RED, this.node, this.#plan, msg, this.#ignored);
    await this.#dispatch(account, client, msg, fields, when, send, done);
  }

  readonly #ignored = (field: string) => this.node.warn(this.texts('warnings.payload-ignored', { field }));

  /**
   * Prepares the request (throws `invalid_request`: nothing is sent), then holds the msg back (storm), keeps it behind
   * older ones (outbox) or sends it.
   */
  async #dispatch(
    account: Account,
    client: GatewayClient,
    msg: Msg,
    fields: SendFields,
    when: Taken,
    send: Send,
    done: Done,
  ): Promise<void> {
    const missing = noRecipient(this.#plan, fields, msg);
    if (missing) throw missing;
    // A long promotional list is checked and written in steps: the other flows run between them. A transactional send
    // has one number: prepared at once (no turn of the event loop, no promise, for an alert).
    const prepared =
      this.#operation.kind === 'promotional'
        ? await client.prepareOperationInSteps(this.#operation, fields)
        : client.prepareOperation(this.#operation, fields);
    const item = { msg, fields };
    let admitted: boolean;
    // With a shared store, an alert several copies of Node-RED raised at once goes out from one,
    // and the storm guard counts what every copy sends (one call to the store for both).
    const claims = account.claims;
    if (!claims || prepared.nothingToSend) admitted = this.#storm.admit(item);
    else {
      const storm = this.#storm.enabled ? { limit: this.#storm.limit, windowMs: this.#storm.windowMs } : undefined;
      const decision = await claims.claim(this.node.id, account.alertBody(prepared), storm);
      if (!decision.ours) return this.#copyElsewhere(msg, send, done);
      if (!decision.storm) admitted = this.#storm.admit(item);
      else
        admitted = this.#storm.admitShared(item, decision.storm, (window) => claims.collectHeld(this.node.id, window));
    }
    if (!admitted) return this.#held(done);
    this.#warn(msg, prepared);
    await this.#onward(account, msg, prepared, when, send, done);
  }

  /** Held back by storm protection: deliberately not sent, so not an error. */
  #held(done: Done): void {
    this.#status.show(() => ({
      fill: 'yellow',
      shape: 'ring',
      text: this.texts('status.held', { count: this.#storm.held }),
    }));
    done();
  }

  /**
   * Another copy of Node-RED sends this alert: the msg ends on port 1, marked (a dropped copy is a success, marked by
   * why it was dropped).
   */
  #copyElsewhere(msg: Msg, send: Send, done: Done): void {
    msg.bulkgate = { ...(msg.bulkgate as object | undefined), duplicate: 'copy' };
    this.#router.duplicates++;
    this.#router.show();
    send([msg]);
    done();
  }

  async #onward(
    account: Account,
    msg: Msg,
    prepared: PreparedRequest,
    when: Taken,
    send: Send,
    done: Done,
  ): Promise<void> {
    const submitted = await account.submit({
      node: this.node.id,
      operation: this.#operation,
      prepared,
      msg,
      // Named, not spread: a spread in an object literal cost 30 times the named fields to build (95 against 3 ns).
      since: when.since,
      order: when.order,
      giveUpMs: this.#giveUpMs,
      queueStop: this.#queueStop.signal,
      wireStop: this.#wireStop.signal,
      onWire: this.#showSending,
    });
    // Kept in the outbox: this msg's handling ends now; it comes out of the ports when it leaves.
    if ('kept' in submitted) return done();
    await this.#router.route(msg, submitted.result, send, () => storableBody(prepared), false);
    done();
  }

  /** Sends outside an input handler (a msg from the outbox, a storm notice). */
  readonly #emit: Send = (m) => this.node.send(m as never);

  readonly #showSending = () =>
    this.#status.show(() => ({ fill: 'blue', shape: 'dot', text: this.texts('status.sending') }));

  #warn(msg: Msg, prepared: PreparedRequest): void {
    if (prepared.pastSchedule) {
      // Sent at once, as the gateway does with it; the sender hears of it in the log and on the msg.
      const warning = this.texts('warnings.schedule-past', { schedule: prepared.pastSchedule });
      this.node.warn(warning);
      msg.bulkgate = { ...(msg.bulkgate as object | undefined), warning };
    }
    if (prepared.missingVariables.length) {
      this.node.warn(
        this.texts('warnings.missing-variables', { names: prepared.missingVariables.map((n) => `<${n}>`).join(', ') }),
      );
    }
  }

  /**
   * A msg that left the outbox: out of the ports as a live send's, or to Catch; with
   * `msg.bulkgate.deferred`, and its `afterRestart` when it ended before a stop or a crash (it may
   * have left then too). Resolves once it left (a long list's last port); never rejects.
   */
  readonly #settleDeferred: DeferredHandler = async (msg, entry, outcome, afterRestart) => {
    const deferred = {
      since: new Date(entry.since).toISOString(),
      attempts: entry.attempts,
      ...(afterRestart ? { afterRestart } : {}),
    };
    try {
      if ('result' in outcome) {
        msg.bulkgate = { ...(msg.bulkgate as object | undefined), deferred };
        await this.#router.route(msg, outcome.result, this.#emit, () => entry.body, true);
      } else {
        fail(this.texts, this.#status, msg, outcome.error, (e) => {
          msg.bulkgate = { ...(msg.bulkgate as object), deferred };
          this.node.error(e, msg);
        });
        // It may have been delivered: counted beside the totals until the node is redeployed.
        if (outcome.error.code === 'unconfirmed') {
          this.#router.unconfirmed++;
          this.#router.show();
        }
      }
    } catch {
      // A message leaving the outbox must never throw into the account's round.
    }
  };

  /**
   * The one message a storm window ends with: how many alerts were held, and the last one's text.
   * An alert like any other: through the account, behind the older ones in the outbox.
   */
  #sendNotice(last: Msg, fields: SendFields, held: number): void {
    const when = { since: Date.now(), order: ++taken };
    const msg = this.RED.util.cloneMessage(last);
    msg.held = held;
    const account = this.#account;
    if (!account) return;
    const notice = async () => {
      const whole = typeof fields.text === 'string' ? fields.text : '';
      const lastText = whole.length > 120 ? `${whole.slice(0, 117)}...` : whole;
      const text = this.texts('storm.notice', { count: held, seconds: this.#storm.windowMs / 1000, text: lastText });
      // Channel texts would win over the notice: the cascade keeps its settings, not its texts.
      const channel = Array.isArray(fields.channel)
        ? fields.channel.map((c) => ({ ...(c as object), text: undefined }))
        : fields.channel;
      const prepared = account.gateway().prepareOperation(this.#operation, { ...fields, text, channel });
      await this.#onward(account, msg, prepared, when, this.#emit, () => undefined);
    };
    this.#track(notice(), (error) => fail(this.texts, this.#status, msg, error, (e) => this.node.error(e, msg)));
  }

  /**
   * "N waiting" while this node's msgs wait in the outbox, "queued N" while the rate limit holds some, else the totals.
   */
  #showQueue(): void {
    const account = this.#account as Account;
    const queued = account.limiter.queued;
    const waiting = account.outbox.waitingFor(this.node.id);
    if (waiting > 0) {
      this.#showsWaiting = true;
      this.#status.show(() => {
        const count = account.outbox.waitingFor(this.node.id);
        const cause = account.circuit.cause?.brief;
        const text = cause
          ? this.texts('status.waiting-because', {
              count,
              cause: this.texts(`status.causes.${cause.key}`, cause.params),
            })
          : this.texts('status.waiting', { count });
        return { fill: 'yellow', shape: 'ring', text };
      });
    } else if (queued > 0) {
      this.#showsWaiting = false;
      this.#status.show(() => ({
        fill: 'yellow',
        shape: 'ring',
        text: this.texts('status.queued', { count: queued }),
      }));
    } else if (this.#showsWaiting || this.#showsStoreTrouble !== (account.storeTrouble !== undefined)) {
      this.#showsWaiting = false;
      this.#showsStoreTrouble = account.storeTrouble !== undefined;
      this.#router.show();
    }
  }
}
