/** The simulator's own endpoints (`/simulator/...`), for tests and the outbox page. */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { SimulatorAccountInit } from './accounts';
import type { FaultSettings } from './faults';
import { json, mediaType, parseObject, readBody } from './http';
import type { SimulatorState } from './state';
import { isWebhookUrl } from './webhook';

export async function serveControl(
  state: SimulatorState,
  req: IncomingMessage,
  res: ServerResponse,
  path: string,
): Promise<void> {
  let input: Record<string, unknown> | undefined = {};
  // A DELETE may carry a body (which webhook); without one it is read as {}.
  const bodied =
    req.method === 'POST' ||
    (req.method === 'DELETE' &&
      (Number(req.headers['content-length'] ?? 0) > 0 || req.headers['transfer-encoding'] !== undefined));
  if (bodied) {
    // JSON only: a cross-site form or a text/plain fetch cannot send it without a preflight.
    if (mediaType(req) !== 'application/json') {
      req.resume();
      return json(res, 415, { error: "the simulator's controls take application/json only" });
    }
    const raw = await readBody(req);
    if (raw === undefined) return json(res, 413, { error: 'body too large' });
    input = parseObject(raw || '{}');
    if (!input) return json(res, 400, { error: 'the body must be a JSON object' });
  }
  switch (`${req.method} ${path}`) {
    case 'GET /simulator/outbox':
      return json(res, 200, state.outbox());
    case 'GET /simulator/requests':
      return json(res, 200, state.requests);
    case 'DELETE /simulator/requests':
      state.clearLog();
      return json(res, 200, { ok: true });
    case 'POST /simulator/reset':
      state.reset();
      return json(res, 200, { ok: true });
    case 'POST /simulator/accounts':
      if (!input.id || !input.token) return json(res, 400, { error: 'id and token are required' });
      state.addAccount(input as unknown as SimulatorAccountInit);
      return json(res, 200, { ok: true });
    case 'POST /simulator/faults':
      state.faults.set(input as FaultSettings);
      state.notify();
      return json(res, 200, { ok: true });
    case 'DELETE /simulator/faults':
      state.faults.clear();
      return json(res, 200, { ok: true });
    case 'GET /simulator/webhook':
      return json(res, 200, { webhooks: state.webhook.list(), delay: state.webhook.delay });
    case 'POST /simulator/webhook': {
      // Adds one: each example that sets its webhook keeps the others' (the demo runs them together).
      // Checked here: a bad URL taken would throw later, in a report's timer, and end the process.
      const url = input.url ?? '';
      if (url !== '' && !isWebhookUrl(url))
        return json(res, 400, { error: 'url must be an http or https URL, or empty to turn every webhook off' });
      if (url === '') state.webhook.clear();
      else state.webhook.add(url as string, input.bulk === true);
      if (typeof input.delay === 'number') state.webhook.delay = input.delay;
      return json(res, 200, { ok: true, webhooks: state.webhook.list().length });
    }
    case 'DELETE /simulator/webhook': {
      const url = input.url ?? '';
      if (typeof url !== 'string')
        return json(res, 400, { error: 'url must be the URL of a webhook set, or absent to remove every webhook' });
      if (url === '') state.webhook.clear();
      // Named without its query: that is where a webhook's secret is.
      else if (!state.webhook.remove(url)) return json(res, 404, { error: `no webhook ${url.split('?')[0]} is set` });
      return json(res, 200, { ok: true, webhooks: state.webhook.list().length });
    }
    case 'POST /simulator/incoming': {
      const smsID = `sim-in-${String(state.gateway.state.nextId++).padStart(8, '0')}`;
      state.webhook.incoming(smsID, input);
      return json(res, 200, { ok: true, smsID });
    }
    case 'GET /simulator/events':
      res.writeHead(200, {
        'content-type': 'text/event-stream',
        'cache-control': 'no-store',
        connection: 'keep-alive',
      });
      res.write('retry: 1000\n\n');
      state.listeners.add(res);
      req.on('close', () => state.listeners.delete(res));
      return;
    default:
      return json(res, 404, { error: `no ${req.method} ${path}` });
  }
}
