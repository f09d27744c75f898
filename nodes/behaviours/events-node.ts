/** The gateway's webhook: a stranger until the URL's secret matches, and even then its body is bounded. */
import { timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Node, NodeAPI, NodeDef } from 'node-red';
import { INCOMING, readEvent, type EventPayload } from '../../gateway';
import { localStore } from '../account/store';
import { numberSetting } from '../plumbing/settings';
import { EMIT_BATCH, nodeCatalog, wordedOr, type NodeCatalog } from '../plumbing/runtime';
import { accountOf } from './deployed-account';
import { ReportGate } from './report-gate';
import type { DeliveryTracker, Tracked } from '../account/tracking';

interface EventsConfig {
  path?: string;
  account?: string;
  reportTimeout?: number | string;
  /** Not in the panel (tests use small ones): MAX_PENDING and MAX_WAIT_MS. */
  pendingLimit?: number | string;
  busyWaitMs?: number | string;
}

/** Bounds of a call (413 over them): the gateway's bulk reports are far smaller. */
const MAX_BODY_BYTES = 1024 * 1024;
const MAX_REPORTS_PER_CALL = 10_000;
/** Deeper reports are refused with 400: a report is a flat record, and cloning a deep one would overflow the stack. */
const MAX_DEPTH = 32;
/** Reports taken, not yet emitted, at most (per node): beyond, a call waits unread for room; MAX_WAIT_MS, then 503. */
const MAX_PENDING = 20_000;
const MAX_WAIT_MS = 30_000;

type Query = Record<string, unknown>;
type Request = IncomingMessage & { query?: Record<string, unknown>; body?: unknown; _body?: boolean; url: string };
type Router = { stack: { route?: { stack: { handle: unknown }[] } }[] };

/** A refusal: the HTTP status and the short text it is answered with; `warn`: the node warns of a bad body. */
class Refusal {
  constructor(
    readonly status: number,
    readonly text: string,
    readonly warn = false,
  ) {}
}

function sameSecret(given: unknown, secret: string): boolean {
  if (typeof given !== 'string' || !secret) return false;
  const a = Buffer.from(given);
  const b = Buffer.from(secret);
  return a.length === b.length && timingSafeEqual(a, b);
}

function answer(res: ServerResponse, code: number, text: string): void {
  if (res.headersSent) return;
  res.statusCode = code;
  res.setHeader('content-type', 'text/plain; charset=utf-8');
  // A refused body may still be arriving: the connection closes after the answer, not before it.
  if (code === 413 || code === 503) res.setHeader('connection', 'close');
  res.end(text);
}

const tooLarge = () => new Refusal(413, 'Body too large');

/** The body, capped: what a parser before this route made of it (the stream is consumed), or the stream's text. */
async function readBody(req: Request): Promise<{ text: string } | { parsed: unknown }> {
  const declared = Number(req.headers['content-length']);
  if (declared > MAX_BODY_BYTES) throw tooLarge();
  if (req._body === true || req.readableEnded) {
    const body = req.body;
    if (typeof body === 'string' || Buffer.isBuffer(body)) {
      const text = body.toString('utf8');
      if (Buffer.byteLength(text) > MAX_BODY_BYTES) throw tooLarge();
      return { text };
    }
    // Without a content-length (chunked), the parsed body's own size is what is capped.
    if (!(declared >= 0) && Buffer.byteLength(JSON.stringify(body ?? null)) > MAX_BODY_BYTES) throw tooLarge();
    return { parsed: body ?? null };
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        // Stop keeping it; the rest is drained and dropped, the answer goes out at once.
        req.off('data', onData);
        req.resume();
        reject(tooLarge());
        return;
      }
      chunks.push(chunk);
    };
    req.on('data', onData);
    req.on('end', () => resolve({ text: Buffer.concat(chunks).toString('utf8') }));
    req.on('error', reject);
  });
}

async function reportsOf(req: Request, query: Query): Promise<EventPayload[]> {
  const { token: _token, ...report } = query;
  const body = req.method === 'GET' ? { parsed: [report] } : await readBody(req);
  let raw: unknown;
  if ('parsed' in body) raw = body.parsed;
  else {
    if (!body.text.trim()) throw new Refusal(400, 'No reports', true);
    try {
      raw = JSON.parse(body.text);
    } catch {
      throw new Refusal(400, 'Body is not JSON', true);
    }
  }
  const list: unknown[] = Array.isArray(raw) ? raw : [raw];
  if (list.length === 0) throw new Refusal(400, 'No reports', true);
  if (deeperThan(list)) throw new Refusal(400, `Nested deeper than ${MAX_DEPTH} levels`, true);
  if (list.length > MAX_REPORTS_PER_CALL) throw new Refusal(413, `More than ${MAX_REPORTS_PER_CALL} reports`);
  return list.map((item) => {
    const event = readEvent(item);
    // Refused at the first bad one: no more of the body is read.
    if (!event) throw new Refusal(400, 'Not a report', true);
    return event;
  });
}

/** Whether a value nests arrays or objects deeper than MAX_DEPTH levels (walked without recursion). */
function deeperThan(value: unknown): boolean {
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length) {
    const [item, depth] = stack.pop() as [unknown, number];
    if (typeof item !== 'object' || item === null) continue;
    if (depth >= MAX_DEPTH) return true;
    for (const child of Array.isArray(item) ? item : Object.values(item))
      if (typeof child === 'object' && child !== null) stack.push([child, depth + 1]);
  }
  return false;
}

/** Paths served per HTTP node app, and by which events node: to warn about a second one. */
const servedPaths = new WeakMap<object, Map<string, string>>();

export function eventsNode(RED: NodeAPI) {
  const texts = nodeCatalog(RED, 'bulkgate-events');
  return function BulkgateEvents(this: EventsNode, config: NodeDef & EventsConfig) {
    RED.nodes.createNode(this, config);
    new EventsEndpoint(RED, this, config, texts);
  };
}

type EventsNode = Node & { credentials?: { secret?: string } };

/** What a report was matched to when it came: a tracked send ends its wait for output 3 then, not when emitted. */
type Matched = { event: EventPayload; tracked?: Tracked; last?: Tracked };

class EventsEndpoint {
  readonly #path: string;
  readonly #secret: string;
  #received = 0;
  #closed = false;
  readonly #tracker: DeliveryTracker | undefined;
  readonly #gate: ReportGate;

  constructor(
    private readonly RED: NodeAPI,
    private readonly node: EventsNode,
    config: EventsConfig,
    private readonly texts: NodeCatalog,
  ) {
    const path = (config.path || '/bulkgate/events').trim();
    this.#path = path.startsWith('/') ? path : `/${path}`;
    this.#secret = node.credentials?.secret ?? '';
    const account = accountOf(RED, config.account);
    this.#tracker = config.account
      ? (account?.tracker ??
        localStore((RED.settings as { userDir?: string }).userDir, (text, line) =>
          RED.log.warn(`bulkgate: ${wordedOr(texts, `tracking.${line.key}`, line.params, text)}`),
        ).tracker(config.account))
      : undefined;
    if (config.account && !account) node.warn(texts('warnings.tracking-account-missing', { account: config.account }));
    const timeoutMs = numberSetting(config.reportTimeout, 0) * 1000;
    this.#tracker?.listen(node, timeoutMs, (tracked) => this.#noReport(tracked, timeoutMs));
    this.#gate = new ReportGate(
      numberSetting(config.pendingLimit, MAX_PENDING, 1),
      numberSetting(config.busyWaitMs, MAX_WAIT_MS, 1),
    );
    node.on('close', () => this.close());
    // Cleared with a secret too: Node-RED keeps the status of the node this one replaces (deployed before it had a
    // secret) and shows it to every editor that connects later.
    node.status(this.#secret ? {} : { fill: 'red', shape: 'ring', text: texts('status.no-secret') });
    // As the core http-in node: with httpNodeRoot off there is no server to listen on.
    if ((RED.settings as { httpNodeRoot?: unknown }).httpNodeRoot === false || !RED.httpNode) {
      node.warn(texts('warnings.no-http-node'));
      return;
    }
    let paths = servedPaths.get(RED.httpNode);
    if (!paths) servedPaths.set(RED.httpNode, (paths = new Map()));
    const other = paths.get(this.#path);
    if (other && other !== node.id) node.warn(texts('warnings.path-taken', { path: this.#path, node: other }));
    else paths.set(this.#path, node.id);
    RED.httpNode.get(this.#path, this.#handler as never);
    RED.httpNode.post(this.#path, this.#handler as never);
  }

  close(): void {
    this.#closed = true;
    this.#tracker?.unlisten(this.node);
    this.#gate.open();
    const paths = servedPaths.get(this.RED.httpNode);
    if (paths?.get(this.#path) === this.node.id) paths.delete(this.#path);
    // Remove this node's own routes only: a user's http-in node on the same path stays. Express 4 keeps them as
    // `_router`, 5 as `router`.
    const app = this.RED.httpNode as unknown as { _router?: Router; router?: Router };
    const router = app._router ?? app.router;
    if (router)
      router.stack = router.stack.filter((layer) => !layer.route?.stack.some((l) => l.handle === this.#handler));
  }

  readonly #handler = (req: Request, res: ServerResponse): void => {
    const query = (req.query ?? Object.fromEntries(new URL(req.url, 'http://x').searchParams)) as Query;
    if (!sameSecret(query.token, this.#secret)) return answer(res, 403, 'Forbidden');
    this.#take(req, res, query).catch(() => undefined);
  };

  async #take(req: Request, res: ServerResponse, query: Query): Promise<void> {
    const gate = this.#gate;
    let events: EventPayload[];
    try {
      await gate.enter().catch(() => {
        this.node.warn(this.texts('warnings.webhook-busy', { count: gate.refused, seconds: gate.waitMs / 1000 }));
        throw new Refusal(503, 'Busy: try again later');
      });
      events = await reportsOf(req, query).catch((error: unknown) => {
        gate.left();
        throw error;
      });
    } catch (error) {
      if (!(error instanceof Refusal)) return answer(res, 500, 'Error');
      if (error.warn) this.node.warn(this.texts('warnings.bad-event-body'));
      return answer(res, error.status, error.text);
    }
    gate.taken(events.length);
    // Answer first: the gateway is not kept waiting for the flow (with a shared store, it waits for the lookups, so
    // that a report reaching any copy carries msg.sent).
    const matched = await Promise.all(
      events.map(async (event): Promise<Matched> => {
        if (event.statusCode === INCOMING) return { event, last: await this.#tracker?.lastTo(event.from) };
        return { event, tracked: await this.#tracker?.report(event.smsID, event.status) };
      }),
    );
    answer(res, 200, 'OK');
    setImmediate(() => this.#emit(matched, 0));
  }

  #emit(matched: Matched[], from: number): void {
    const end = Math.min(matched.length, from + EMIT_BATCH);
    if (!this.#closed) for (let i = from; i < end; i++) this.#emitOne(matched[i] as Matched);
    this.#gate.emitted(end - from);
    if (end < matched.length) setImmediate(() => this.#emit(matched, end));
    else if (!this.#closed)
      this.node.status({ fill: 'green', shape: 'dot', text: this.texts('status.events', { count: this.#received }) });
  }

  /** A flow that throws (a clone that cannot be made, say) fails that msg, never the process. */
  #emitOne({ event, tracked, last }: Matched): void {
    this.#received++;
    let out: (Record<string, unknown> | null)[] = [];
    try {
      const msg: Record<string, unknown> = {
        payload: event,
        smsId: event.smsID,
        topic: event.status,
        _msgid: this.RED.util.generateId(),
      };
      if (event.statusCode === INCOMING) {
        if (last) msg.inReplyTo = { sent: this.#sentOf(last), sms_id: last.smsId };
        out = [null, msg, null];
      } else {
        if (tracked) {
          msg.sent = this.#sentOf(tracked);
          msg.topic = (msg.sent as Tracked['sent']).topic;
        }
        out = [msg, null, null];
      }
      this.node.send(out as never);
    } catch (error) {
      try {
        this.node.error(error as Error, out.find((m) => m) as never);
      } catch {
        // Reporting must not throw either.
      }
    }
  }

  /** Output 3: a tracked send's final report did not come within the report timeout. */
  #noReport(tracked: Tracked, timeoutMs: number): void {
    if (this.#closed) return;
    const sent = this.#sentOf(tracked);
    const payload = { status: 'no_report', smsID: tracked.smsId, to: tracked.number, seconds: timeoutMs / 1000 };
    this.node.send([
      null,
      null,
      { payload, smsId: tracked.smsId, topic: sent.topic, sent, _msgid: this.RED.util.generateId() },
    ] as never);
  }

  /** What a flow gets of a tracked message: a copy, so a flow that changes it changes no other msg. */
  #sentOf(tracked: Tracked): Tracked['sent'] {
    return this.RED.util.cloneMessage(tracked.sent as never) as Tracked['sent'];
  }
}
