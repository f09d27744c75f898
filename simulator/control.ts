/** The simulator's own endpoints (`/simulator/...`), for tests and the outbox page. */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { SimulatorAccountInit } from './accounts';
import type { Fault } from './faults';
import { json, mediaType, parseObject, readBody } from './http';
import type { SimulatorState } from './state';

export async function serveControl(state: SimulatorState, req: IncomingMessage, res: ServerResponse, path: string): Promise<void> {
  let input: Record<string, unknown> | undefined = {};
  if (req.method === 'POST') {
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
      state.faults.set(input as Fault & { latency?: number; jitter?: number });
      state.notify();
      return json(res, 200, { ok: true });
    case 'DELETE /simulator/faults':
      state.faults.clear();
      return json(res, 200, { ok: true });
    case 'POST /simulator/webhook': {
      // Checked here: a bad URL taken would throw later, in a report's timer, and end the process.
      const url = input.url ?? '';
      if (url !== '' && !(typeof url === 'string' && URL.canParse(url) && /^https?:$/.test(new URL(url).protocol)))
        return json(res, 400, { error: 'url must be an http or https URL, or empty to turn the webhook off' });
      state.webhook.url = url as string;
      state.webhook.bulk = input.bulk === true;
      if (typeof input.delay === 'number') state.webhook.delay = input.delay;
      return json(res, 200, { ok: true });
    }
    case 'POST /simulator/incoming': {
      const smsID = `sim-in-${String(state.gateway.state.nextId++).padStart(8, '0')}`;
      state.webhook.incoming(smsID, input);
      return json(res, 200, { ok: true, smsID });
    }
    case 'GET /simulator/events':
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-store', connection: 'keep-alive' });
      res.write('retry: 1000\n\n');
      state.listeners.add(res);
      req.on('close', () => state.listeners.delete(res));
      return;
    default:
      return json(res, 404, { error: `no ${req.method} ${path}` });
  }
}
