/**
 * `bulkgate-events`: delivery reports and incoming messages. Serves a path on Node-RED's HTTP
 * node server for the gateway's webhook (GET, one report; POST, a JSON array of reports),
 * answers at once, then emits one msg per report: output 1 delivery reports, output 2 incoming
 * messages. The URL must carry the node's secret token.
 */
import { timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Node, NodeAPI, NodeDef } from 'node-red';
import { INCOMING, readEvent, type EventPayload } from '../gateway';
import { catalogText } from './lib/runtime';

interface EventsConfig {
  path?: string;
  name?: string;
}

/** Larger bodies are refused (a bulk report of thousands of reports is far below this). */
const MAX_BODY_BYTES = 1024 * 1024;
const DEFAULT_EVENTS_PATH = '/bulkgate/events';

type Request = IncomingMessage & { query?: Record<string, unknown>; body?: unknown; url: string };
type Response = ServerResponse & { status?(code: number): Response; send?(body: string): void };

function sameSecret(given: unknown, secret: string): boolean {
  if (typeof given !== 'string' || !secret) return false;
  const a = Buffer.from(given);
  const b = Buffer.from(secret);
  return a.length === b.length && timingSafeEqual(a, b);
}

function answer(res: Response, code: number, text: string): void {
  if (res.headersSent) return;
  res.statusCode = code;
  res.setHeader('content-type', 'text/plain; charset=utf-8');
  res.end(text);
}

function readBody(req: Request): Promise<string | undefined> {
  // Node-RED's http-in routes parse bodies themselves; this route reads its own, with a limit.
  if (typeof req.body === 'string') return Promise.resolve(req.body);
  if (req.body !== undefined && typeof req.body === 'object' && !Buffer.isBuffer(req.body) && Object.keys(req.body as object).length) {
    return Promise.resolve(JSON.stringify(req.body));
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        resolve(undefined);
        req.destroy();
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

const register = (RED: NodeAPI): void => {
  function BulkgateEvents(this: Node & { credentials?: { secret?: string } }, config: NodeDef & EventsConfig) {
    RED.nodes.createNode(this, config);
    const node = this;
    const path = normalisePath(config.path);
    const secret = node.credentials?.secret ?? '';
    let received = 0;

    const emit = (events: EventPayload[]) => {
      for (const event of events) {
        received++;
        const msg = { payload: event, smsId: event.smsID, topic: event.status, _msgid: RED.util.generateId() };
        node.send(event.statusCode === INCOMING ? [null, msg] : [msg, null]);
      }
      node.status({ fill: 'green', shape: 'dot', text: catalogText(RED, 'status.events', { count: received }) });
    };

    const handler = (req: Request, res: Response) => {
      void (async () => {
        const query = (req.query ?? Object.fromEntries(new URL(req.url, 'http://x').searchParams)) as Record<string, unknown>;
        if (!sameSecret(query.token, secret)) return answer(res, 403, 'Forbidden');
        let raw: unknown;
        if (req.method === 'GET') {
          const { token: _token, ...report } = query;
          raw = [report];
        } else {
          const text = await readBody(req);
          if (text === undefined) return answer(res, 413, 'Body too large');
          try {
            raw = JSON.parse(text);
          } catch {
            node.warn(catalogText(RED, 'warnings.bad-event-body'));
            return answer(res, 400, 'Body is not JSON');
          }
          raw = Array.isArray(raw) ? raw : [raw];
        }
        const events = (raw as unknown[]).map(readEvent);
        if (events.some((e) => e === undefined)) {
          node.warn(catalogText(RED, 'warnings.bad-event-body'));
          return answer(res, 400, 'Not a report');
        }
        // Answer first: the gateway is not kept waiting for the flow.
        answer(res, 200, 'OK');
        setImmediate(() => emit(events as EventPayload[]));
      })().catch(() => answer(res, 500, 'Error'));
    };

    if (!secret) node.status({ fill: 'red', shape: 'ring', text: catalogText(RED, 'status.no-secret') });
    // As the core http-in node: with httpNodeRoot off there is no server to listen on.
    if ((RED.settings as { httpNodeRoot?: unknown }).httpNodeRoot === false || !RED.httpNode) {
      node.warn(catalogText(RED, 'warnings.no-http-node'));
      return;
    }
    RED.httpNode.get(path, handler as never);
    RED.httpNode.post(path, handler as never);

    node.on('close', () => {
      // Remove this node's routes, as the core http-in node does.
      const router = (RED.httpNode as unknown as { _router?: { stack: { route?: { path: string } }[] } })._router;
      if (router) router.stack = router.stack.filter((layer) => !(layer.route && layer.route.path === path));
    });
  }

  RED.nodes.registerType('bulkgate-events', BulkgateEvents as never, { credentials: { secret: { type: 'text' } } });
};

function normalisePath(path: string | undefined): string {
  const p = (path || DEFAULT_EVENTS_PATH).trim();
  return p.startsWith('/') ? p : `/${p}`;
}

export = register;
