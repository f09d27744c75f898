/**
 * The simulator's HTTP server: the gateway's endpoints, the control endpoints tests use
 * (`/simulator/...`: outbox, received requests, accounts, faults), and the outbox page at `/`.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { isLoopbackHost } from '../gateway/base-url';
import type { Socket } from 'node:net';
import { createAccount, DEMO_ACCOUNT, type SimulatorAccount, type SimulatorAccountInit } from './accounts';
import { ApiError, SimulatedGateway, type Version } from './gateway';
import { outboxPage } from './page';

export interface SimulatorOptions {
  port?: number;
  host?: string;
  /** Where delivery reports and incoming messages go (the gateway's "Webhook" setting). */
  webhook?: string;
  accounts?: SimulatorAccountInit[];
  /** Refuse bodies the reference does not allow (2.0 top-level sender fields, unknown senders, long texts). */
  strict?: boolean;
  /** Bounds of the request log (the newest are kept): entries, and bytes of their bodies. */
  logMaxRequests?: number;
  logMaxBytes?: number;
}

/** A fault applied to the next `count` API requests (control requests are never faulted). */
export interface Fault {
  count?: number;
  /** Answer this HTTP status with an error body (not processed). */
  status?: number;
  /** Retry-After header, in seconds, with `status`. */
  retryAfter?: number;
  /** Answer a body that is not the documented JSON. html is not processed; truncated and empty are. */
  body?: 'html' | 'truncated' | 'empty';
  /** Close the connection: before the request body is read (nothing processed), or after processing it without answering. */
  drop?: 'before' | 'after';
  /** Process, then never answer (the client's timeout fires). */
  hang?: boolean;
  /** Answer HTTP 400 with an error body that echoes the request's application_token in every field (not processed). */
  echo?: boolean;
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

export interface Simulator {
  url: string;
  server: Server;
  gateway: SimulatedGateway;
  accounts: Map<string, SimulatorAccount>;
  requests: ReceivedRequest[];
  /** Sets latency and a fault for the next requests (what POST /simulator/faults does). */
  setFault(fault: Fault & { latency?: number }): void;
  close(): Promise<void>;
}

/** Larger request bodies are answered 413 (100,000 recipients with their own texts fit). */
const MAX_BODY = 32 * 1024 * 1024;
/** The request log keeps the newest requests within both bounds: memory stays bounded. */
const LOG_MAX_REQUESTS = 10_000;
const LOG_MAX_BYTES = 64 * 1024 * 1024;
const API_PATH = /^\/api\/([^/]+)\/([^/]+)\/([^/?]+)$/;

export async function startSimulator(options: SimulatorOptions = {}): Promise<Simulator> {
  const gateway = new SimulatedGateway(options.strict ?? true);
  const accounts = new Map<string, SimulatorAccount>();
  const initial = [DEMO_ACCOUNT, ...(options.accounts ?? [])];
  const resetAccounts = () => {
    accounts.clear();
    for (const init of initial) accounts.set(init.id, createAccount(init));
  };
  resetAccounts();
  const requests: ReceivedRequest[] = [];
  let loggedBytes = 0;
  const log = (record: ReceivedRequest) => {
    requests.push(record);
    loggedBytes += record.raw.length;
    while (requests.length > (options.logMaxRequests ?? LOG_MAX_REQUESTS) || (loggedBytes > (options.logMaxBytes ?? LOG_MAX_BYTES) && requests.length > 1)) {
      loggedBytes -= (requests.shift() as ReceivedRequest).raw.length;
    }
  };
  const clearLog = () => {
    requests.length = 0;
    loggedBytes = 0;
  };
  let latency = 0;
  let fault: Fault & { count: number } = { count: 0 };
  const sockets = new Set<Socket>();
  /** The webhook: single reports as GET with query parameters, or (bulk) POST with a JSON array. */
  const webhook = { url: options.webhook ?? '', bulk: false, delay: 200 };
  const callWebhook = (events: Record<string, unknown>[]) => {
    if (!webhook.url) return;
    const send = webhook.bulk
      ? fetch(webhook.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(events) })
      : Promise.all(
          events.map((e) => {
            const url = new URL(webhook.url);
            for (const [k, v] of Object.entries(e)) url.searchParams.set(k, String(v));
            return fetch(url);
          }),
        );
    // A webhook that does not answer is the receiver's problem, as at the real gateway.
    void Promise.resolve(send).catch(() => undefined);
  };
  const timers = new Set<NodeJS.Timeout>();
  const later = (ms: number, run: () => void) => {
    const timer = setTimeout(() => {
      timers.delete(timer);
      run();
    }, ms);
    timers.add(timer);
  };
  gateway.onSent = (m) => {
    const account = accounts.get(m.account);
    const base = { smsID: m.sms_id, to: m.number, price: m.price, channel: m.channel };
    const delivered = !account?.unreachable.has(m.number);
    later(webhook.delay, () => callWebhook([{ status: delivered ? 1 : 3, ...base, date: new Date().toISOString() }]));
    if (delivered && m.channel === 'viber') later(webhook.delay * 2, () => callWebhook([{ status: 13, ...base, date: new Date().toISOString() }]));
  };
  const listeners = new Set<ServerResponse>();
  const hanging = new Set<ServerResponse>();

  const notify = () => {
    for (const res of listeners) res.write(`data: ${JSON.stringify({ at: Date.now() })}\n\n`);
  };
  const releaseTimer = setInterval(() => {
    if (gateway.releaseDue()) notify();
  }, 1000);
  releaseTimer.unref();

  const outbox = () => {
    gateway.releaseDue();
    return {
      messages: gateway.state.outbox,
      accounts: [...accounts.values()].map((a) => ({ id: a.id, credit: a.credit, currency: a.currency })),
    };
  };

  function setFault(input: Fault & { latency?: number }): void {
    if (typeof input.latency === 'number') latency = input.latency;
    const { latency: _latency, ...rest } = input;
    fault = { ...rest, count: typeof rest.count === 'number' ? rest.count : rest.status || rest.body || rest.drop || rest.hang || rest.echo ? 1 : 0 };
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) json(res, 500, { type: 'unknown', code: 500, error: String((error as Error)?.message ?? error), detail: null });
      else res.destroy();
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  server.keepAliveTimeout = 30_000;

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    // A page from another site (DNS rebinding, a cross-site fetch) must not reach the log, which
    // holds tokens, nor the controls: the Host must be this server, an Origin this page's own.
    if (!trusted(req)) return json(res, 403, { error: 'Host or Origin is not this simulator' });
    const url = new URL(req.url ?? '/', 'http://simulator');
    const path = url.pathname;
    if (path === '/' && req.method === 'GET') {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
      res.end(outboxPage());
      return;
    }
    if (path.startsWith('/simulator/')) return control(req, res, path);
    const match = API_PATH.exec(path);
    const active = fault.count > 0 ? { ...fault } : undefined;
    if (active) fault.count--;
    const at = new Date().toISOString();
    if (active?.drop === 'before') {
      // Closed before the request body is read: the gateway never saw the message.
      log({ method: req.method ?? 'GET', path, contentType: undefined, body: {}, raw: '', at, fault: 'drop before' });
      req.socket.destroy();
      return;
    }
    const raw = await readBody(req);
    if (raw === undefined) return json(res, 413, { type: 'invalid_parameter', code: 413, error: 'Request body too large', detail: null });
    const contentType = req.headers['content-type']?.split(';')[0]?.trim();
    const body = parseParameters(req.method ?? 'GET', contentType, raw, url.searchParams);
    const record: ReceivedRequest = { method: req.method ?? 'GET', path, contentType, body: body ?? {}, raw, at };
    if (active) record.fault = JSON.stringify({ ...active, count: undefined });
    log(record);
    if (latency) await new Promise((r) => setTimeout(r, latency));

    if (active?.status) {
      const headers: Record<string, string> = { 'content-type': 'application/json' };
      if (active.retryAfter !== undefined) headers['retry-after'] = String(active.retryAfter);
      res.writeHead(active.status, headers);
      res.end(JSON.stringify({ type: 'unknown', code: active.status, error: `Simulated HTTP ${active.status}`, detail: null }));
      return;
    }
    if (active?.echo) {
      // A gateway (or a proxy) that echoes what it was sent: the client must redact all of it.
      const token = String(body?.application_token ?? '');
      return json(res, 400, { type: token, code: token, error: `Echo of ${token}`, detail: `detail ${token}`, [token]: { nested: token } });
    }
    if (active?.body === 'html') {
      res.writeHead(502, { 'content-type': 'text/html' });
      res.end('<html><body><h1>502 Bad Gateway</h1></body></html>');
      return;
    }

    const version = (match?.[1] === '2.0' ? '2.0' : '1.0') as Version;
    let status = 200;
    let answer: Record<string, unknown>;
    try {
      answer = { data: api(match, req.method ?? 'GET', version, path, body) };
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      status = error.status;
      answer = error.body(version);
    }
    notify();
    if (active?.drop === 'after') return void req.socket.destroy();
    if (active?.hang) {
      hanging.add(res);
      res.on('close', () => hanging.delete(res));
      return;
    }
    if (active?.body === 'truncated') {
      const text = JSON.stringify(answer);
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(text.slice(0, Math.floor(text.length / 2)));
      return;
    }
    if (active?.body === 'empty') {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end();
      return;
    }
    json(res, status, answer);
  }

  function api(
    match: RegExpExecArray | null,
    method: string,
    version: Version,
    path: string,
    body: Record<string, unknown> | undefined,
  ): Record<string, unknown> {
    if (!match) throw new ApiError(404, 'unknown_action', 'Unknown action');
    const [, v, family, action] = match;
    if (v !== '1.0' && v !== '2.0') throw new ApiError(400, 'unsupported_api_version', `Unsupported API version ${v}`);
    const known =
      (action === 'promotional' || action === 'transactional' || action === 'info') &&
      (family === 'advanced' || family === 'simple') &&
      !(v === '2.0' && (action === 'info' || (action === 'promotional' && family === 'simple')));
    if (!known) throw new ApiError(404, 'unknown_action', 'Unknown action');
    if (method !== 'POST' && !(method === 'GET' && action === 'info' && family === 'simple'))
      throw new ApiError(405, 'method_not_allowed', 'Method not allowed');
    if (!body) throw new ApiError(400, 'invalid_parameter', 'The body is not valid JSON or form data');
    const account = accounts.get(String(body.application_id ?? ''));
    if (!account || !body.application_id || account.token !== body.application_token) {
      throw version === '2.0'
        ? new ApiError(401, 'unknown_identity', 'Unknown identity / Unauthorized / empty application_id')
        : new ApiError(401, 'authentication_failed', 'Authentication failed');
    }
    if (action === 'info') return gateway.info(account);
    if (action === 'promotional') return gateway.promotional(account, version, family === 'simple', path, body);
    return gateway.transactional(account, version, path, body);
  }

  async function control(req: IncomingMessage, res: ServerResponse, path: string): Promise<void> {
    let input: Record<string, unknown> = {};
    if (req.method === 'POST') {
      // JSON only: a cross-site form or a text/plain fetch cannot send it without a preflight.
      if (req.headers['content-type']?.split(';')[0]?.trim() !== 'application/json') {
        req.resume();
        return json(res, 415, { error: "the simulator's controls take application/json only" });
      }
      const raw = await readBody(req);
      if (raw === undefined) return json(res, 413, { error: 'body too large' });
      try {
        const parsed: unknown = JSON.parse(raw || '{}');
        if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new Error('not an object');
        input = parsed as Record<string, unknown>;
      } catch {
        return json(res, 400, { error: 'the body must be a JSON object' });
      }
    }
    switch (`${req.method} ${path}`) {
      case 'GET /simulator/outbox':
        return json(res, 200, outbox());
      case 'GET /simulator/requests':
        return json(res, 200, requests);
      case 'DELETE /simulator/requests':
        clearLog();
        return json(res, 200, { ok: true });
      case 'POST /simulator/reset':
        gateway.reset();
        resetAccounts();
        clearLog();
        latency = 0;
        fault = { count: 0 };
        notify();
        return json(res, 200, { ok: true });
      case 'POST /simulator/accounts': {
        const init = input as unknown as SimulatorAccountInit;
        if (!init.id || !init.token) return json(res, 400, { error: 'id and token are required' });
        initial.push(init);
        accounts.set(init.id, createAccount(init));
        return json(res, 200, { ok: true });
      }
      case 'POST /simulator/faults':
        setFault(input as Fault & { latency?: number });
        return json(res, 200, { ok: true });
      case 'POST /simulator/webhook':
        webhook.url = typeof input.url === 'string' ? input.url : '';
        webhook.bulk = input.bulk === true;
        if (typeof input.delay === 'number') webhook.delay = input.delay;
        return json(res, 200, { ok: true });
      case 'POST /simulator/incoming': {
        // A reply from a phone: status 10 with the sender and the text.
        const smsID = `sim-in-${String(gateway.state.nextId++).padStart(8, '0')}`;
        callWebhook([
          {
            status: 10,
            smsID,
            from: String(input.from ?? ''),
            to: String(input.to ?? ''),
            message: String(input.message ?? ''),
            channel: 'sms',
            date: new Date().toISOString(),
          },
        ]);
        return json(res, 200, { ok: true, smsID });
      }
      case 'DELETE /simulator/faults':
        latency = 0;
        fault = { count: 0 };
        return json(res, 200, { ok: true });
      case 'GET /simulator/events':
        res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-store', connection: 'keep-alive' });
        res.write('retry: 1000\n\n');
        listeners.add(res);
        req.on('close', () => listeners.delete(res));
        return;
      default:
        return json(res, 404, { error: `no ${req.method} ${path}` });
    }
  }

  const port = options.port ?? 0;
  const host = options.host ?? '127.0.0.1';
  const wildcard = host === '0.0.0.0' || host === '::';
  if (!isLoopbackHost(host)) {
    console.warn(
      `bulkgate-simulator: listening on ${host}, not loopback: other machines can reach it, its request log (tokens included) and its controls. It is a developer tool; use --host 127.0.0.1 unless you need this.`,
    );
  }
  /** Host names this server answers to: its own address, and loopback names for a loopback bind. */
  let allowedHosts = new Set<string>();
  const trusted = (req: IncomingMessage): boolean => {
    const hostHeader = (req.headers.host ?? '').toLowerCase();
    // A wildcard bind answers on every address of the machine: the user chose that, with a warning.
    if (!wildcard && !allowedHosts.has(hostHeader)) return false;
    const origin = req.headers.origin;
    if (origin === undefined) return true;
    try {
      return new URL(origin).host.toLowerCase() === hostHeader;
    } catch {
      return false;
    }
  };
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address();
  const actualPort = typeof address === 'object' && address ? address.port : port;
  const urlHost = host.includes(':') ? `[${host}]` : host;
  const names = isLoopbackHost(host) ? [urlHost, 'localhost', '127.0.0.1', '[::1]'] : [urlHost];
  allowedHosts = new Set(names.map((n) => `${n.toLowerCase()}:${actualPort}`));
  return {
    url: `http://${urlHost}:${actualPort}`,
    server,
    gateway,
    accounts,
    requests,
    setFault,
    close: () =>
      new Promise<void>((resolve) => {
        clearInterval(releaseTimer);
        for (const timer of timers) clearTimeout(timer);
        for (const res of [...listeners, ...hanging]) res.destroy();
        server.close(() => resolve());
        for (const socket of sockets) socket.destroy();
      }),
  };
}

function json(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

/** Reads a body up to MAX_BODY; undefined when larger (the rest is drained, to answer 413). */
function readBody(req: IncomingMessage): Promise<string | undefined> {
  if (Number(req.headers['content-length']) > MAX_BODY) {
    req.resume();
    return Promise.resolve(undefined);
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY) {
        req.off('data', onData);
        req.resume();
        resolve(undefined);
        return;
      }
      chunks.push(chunk);
    };
    req.on('data', onData);
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

/** Reads the parameters of an API request: JSON body, form body, or the query of a GET. */
function parseParameters(method: string, contentType: string | undefined, raw: string, query: URLSearchParams): Record<string, unknown> | undefined {
  if (method === 'GET') return Object.fromEntries(query);
  // The gateway takes JSON or a form; any other content type is no parameters at all.
  if (contentType !== 'application/json' && contentType !== 'application/x-www-form-urlencoded') return undefined;
  if (contentType === 'application/x-www-form-urlencoded') {
    const form: Record<string, unknown> = Object.fromEntries(new URLSearchParams(raw));
    // Form bodies carry booleans as yes/no.
    for (const key of ['unicode', 'flash']) if (key in form) form[key] = form[key] === 'yes' || form[key] === '1' || form[key] === 'true';
    return form;
  }
  try {
    const parsed: unknown = JSON.parse(raw);
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}
