/** The gateway's API as the simulator serves it, with the faults a test asked for around it. */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { EndpointName } from '../gateway/operations';
import { SimulatedEndpoints } from './endpoints';
import { ApiError, type Version } from './gateway';
import { json, mediaType, parseParameters, readBody, reply } from './http';
import type { SimulatorState } from './state';

const API_PATH = /^\/api\/([^/]+)\/([^/]+)\/([^/?]+)$/;

export async function serveApi(
  state: SimulatorState,
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
): Promise<void> {
  const method = req.method ?? 'GET';
  const path = url.pathname;
  const fault = state.faults.next();
  const at = new Date().toISOString();
  if (fault?.drop === 'before') {
    state.logRequest({ method, path, contentType: undefined, body: {}, raw: '', at, fault: 'drop before' });
    return void req.socket.destroy();
  }
  const raw = await readBody(req);
  if (raw === undefined)
    return json(res, 413, { type: 'invalid_parameter', code: 413, error: 'Request body too large', detail: null });
  const contentType = mediaType(req);
  // The reference: JSON everywhere; the simple API takes a form too (its 2.0 path takes the advanced body).
  const body = parseParameters(method, contentType, raw, url.searchParams, path.startsWith('/api/1.0/simple/'));
  state.logRequest({
    method,
    path,
    contentType,
    body: body ?? {},
    raw,
    at,
    ...(fault && { fault: JSON.stringify(fault) }),
  });
  const delay = state.faults.delay();
  if (delay > 0) await new Promise((r) => setTimeout(r, delay));

  if (fault?.status) {
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (fault.retryAfter !== undefined) headers['retry-after'] = String(fault.retryAfter);
    return reply(
      res,
      fault.status,
      JSON.stringify({ type: 'unknown', code: fault.status, error: `Simulated HTTP ${fault.status}`, detail: null }),
      headers,
    );
  }
  if (fault?.echo) {
    // A gateway (or a proxy) that echoes what it was sent: the client must redact all of it.
    const token = String(body?.application_token ?? '');
    return json(res, 400, {
      type: token,
      code: token,
      error: `Echo of ${token}`,
      detail: `detail ${token}`,
      [token]: { nested: token },
    });
  }
  if (fault?.body === 'html')
    return reply(res, 502, '<html><body><h1>502 Bad Gateway</h1></body></html>', { 'content-type': 'text/html' });

  // The other endpoints answer errors in the {type, code, error, detail} shape (their pages).
  const endpoint = SimulatedEndpoints.byPath(path);
  const version: Version = API_PATH.exec(path)?.[1] === '2.0' || endpoint ? '2.0' : '1.0';
  let status = 200;
  let answer: Record<string, unknown>;
  try {
    answer = { data: route(state, method, version, path, endpoint, body) };
  } catch (error) {
    if (!(error instanceof ApiError)) throw error;
    status = error.status;
    answer = error.body(version);
  }
  state.notify();
  if (fault?.drop === 'after') return void req.socket.destroy();
  if (fault?.hang) {
    state.hanging.add(res);
    res.on('close', () => state.hanging.delete(res));
    return;
  }
  if (fault?.body === 'truncated') {
    const text = JSON.stringify(answer);
    return reply(res, status, text.slice(0, Math.floor(text.length / 2)));
  }
  if (fault?.body === 'empty') return reply(res, status);
  json(res, status, answer);
}

function route(
  state: SimulatorState,
  method: string,
  version: Version,
  path: string,
  endpoint: EndpointName | undefined,
  body: Record<string, unknown> | undefined,
): unknown {
  const [, v, family, action] = API_PATH.exec(path) ?? [];
  if (!endpoint) {
    if (!v) throw new ApiError(404, 'unknown_action', 'Unknown action');
    if (v !== '1.0' && v !== '2.0') throw new ApiError(400, 'unsupported_api_version', `Unsupported API version ${v}`);
    const known =
      (action === 'promotional' || action === 'transactional' || action === 'info') &&
      (family === 'advanced' || family === 'simple') &&
      !(v === '2.0' && (action === 'info' || (action === 'promotional' && family === 'simple')));
    if (!known) throw new ApiError(404, 'unknown_action', 'Unknown action');
  }
  if (method !== 'POST' && !(method === 'GET' && action === 'info' && family === 'simple'))
    throw new ApiError(405, 'method_not_allowed', 'Method not allowed');
  if (!body && endpoint) throw new ApiError(400, 'invalid_input_parameters', 'The body is not valid JSON');
  if (!body) throw new ApiError(400, 'invalid_parameter', 'The body is not valid JSON or form data');
  const account = state.accounts.get(String(body.application_id ?? ''));
  if (!account || !body.application_id || account.token !== body.application_token) {
    throw version === '2.0'
      ? new ApiError(401, 'unknown_identity', 'Unknown identity / Unauthorized / empty application_id')
      : new ApiError(401, 'authentication_failed', 'Authentication failed');
  }
  if (endpoint) return state.endpoints.answer(endpoint, account, body);
  if (action === 'info') return state.gateway.info(account);
  if (action === 'promotional') return state.gateway.promotional(account, version, family === 'simple', path, body);
  return state.gateway.transactional(account, version, path, body);
}
