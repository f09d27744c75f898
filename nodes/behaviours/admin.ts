/**
 * The editor's admin endpoints (admin auth and permissions apply). "Test connection" uses the stored token only with
 * the deployed base URL (a cross-site form could send it anywhere else); each endpoint refuses a request a page of
 * another site sent (`fromAnotherSite`); answers in the client's own words, each sentence with its wording (a key of
 * the catalogs' `errors` and its parameters), so the panel shows it in the editor's language.
 */
import type { NodeAPI } from 'node-red';
import type { NextFunction, Request, Response } from 'express';
import type { GatewayClient } from '../../gateway';
import type { Wording } from '../../gateway/wording';
import { DEFAULT_TIMEOUT } from '../../gateway/defaults';
import type { AccountCredentials } from '../account/account';
import { numberSetting, proxySettings } from '../plumbing/settings';
import { storeUrlProblem, storeUrlWording } from '../plumbing/store-url';
import { accountOf } from './deployed-account';

// The gateway's code loads with the first test, the store's with the first test of a Redis store.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const gateway = () => require('../../gateway') as typeof import('../../gateway');
// The nodes' sentences load with the gateway's (they word its errors).
// eslint-disable-next-line @typescript-eslint/no-require-imports
const words = () => require('../plumbing/wording') as typeof import('../plumbing/wording');

/** Admin apps the endpoint is on already (a runtime loads the account's module once; tests, often). */
const registered = new WeakSet<object>();
/** What Node-RED puts in a password field when a value is stored. */
const STORED_PLACEHOLDER = '__PWRD__';

/**
 * Whether a web page of another site sent this request: Node-RED's admin app answers CORS with `*` and echoes any
 * preflight header, so without adminAuth nothing else keeps such a page out. `Sec-Fetch-Site` (every current browser)
 * decides: only the editor's pages (`same-origin`) and a typed address (`none`) pass, not another port of the host
 * (`same-site`); it compares the page's origin with the address the browser asked, so a proxy that rewrites Host (Home
 * Assistant's ingress) changes nothing. Without it (an older browser), `Origin` against Host (X-Forwarded-Host is not
 * trusted: a page could set it); without Origin too, no page's cross-origin request (curl, a script, an older
 * browser's same-origin GET).
 */
export function fromAnotherSite(req: Request): boolean {
  const site = req.get('sec-fetch-site');
  if (site !== undefined) return site !== 'same-origin' && site !== 'none';
  const origin = req.get('origin');
  if (origin === undefined) return false;
  try {
    return new URL(origin).host !== req.get('host');
  } catch {
    // `null` (a sandboxed frame, a file) or anything unreadable.
    return true;
  }
}

export function registerAdminEndpoints(RED: NodeAPI): void {
  if (registered.has(RED.httpAdmin)) return;
  registered.add(RED.httpAdmin);
  // Before the permission check: refused with adminAuth or without (a page holds no editor token, but need not try).
  const sameSiteOnly = (req: Request, res: Response, next: NextFunction) => {
    if (!fromAnotherSite(req)) return next();
    res.status(403).json({ ok: false, type: 'cross_site', message: RED._('bulkgate-account.admin.cross-site') });
  };
  // The outbox of a deployed account: how many wait, how many ended unconfirmed, and emptying it (each msg to Catch).
  RED.httpAdmin.get(
    '/bulkgate/outbox/:id',
    sameSiteOnly,
    RED.auth.needsPermission('bulkgate-account.read'),
    (req: Request, res: Response) => {
      const account = accountOf(RED, String(req.params.id));
      // While the gateway is marked unreachable: the last failure (the client's sentence, its wording) and since when.
      const cause = account?.circuit.cause;
      const store = account?.storeTrouble;
      res.json({
        waiting: account?.outbox?.waiting ?? 0,
        unconfirmed: account?.outbox?.unconfirmed ?? 0,
        persistent: account?.outbox?.persistent ?? false,
        outage: cause ? { reason: cause.reason, wording: words().causeOf(cause.failure), since: cause.since } : null,
        // The store's reason names what failed and the client's message: worded by that failure's code.
        store: store ? { ...store, wording: words().causeOf(store.reason) } : null,
      });
    },
  );
  RED.httpAdmin.post(
    '/bulkgate/outbox/:id/empty',
    sameSiteOnly,
    RED.auth.needsPermission('bulkgate-account.write'),
    (req: Request, res: Response) => {
      if (!req.is('application/json'))
        return res.status(415).json({ ok: false, message: 'This endpoint takes application/json only' });
      const account = accountOf(RED, String(req.params.id));
      if (!account) return res.status(404).json({ ok: false, message: 'No deployed BulkGate account has this id' });
      void account.emptyOutbox().then(
        (emptied) => res.json({ ok: true, emptied }),
        () => res.status(500).json({ ok: false, message: 'The outbox could not be emptied' }),
      );
    },
  );
  RED.httpAdmin.post(
    '/bulkgate/test-connection',
    sameSiteOnly,
    RED.auth.needsPermission('bulkgate-account.write'),
    (req: Request, res: Response) => {
      if (!req.is('application/json'))
        return res
          .status(415)
          .json({ ok: false, type: 'invalid_request', message: 'This endpoint takes application/json only' });
      const input = (req.body ?? {}) as TestRequest;
      void Promise.all([
        testGateway(RED, input),
        text(input.store) === 'redis' ? testStore(RED, input) : undefined,
      ]).then(
        ([answer, store]) => res.json(store ? { ...answer, store } : answer),
        () => res.status(500).json({ ok: false, type: 'unknown', message: 'The test could not run' }),
      );
    },
  );
}

/** The panel's fields (`store: 'redis'`: the store at storeUrl is tested too). */
type TestRequest = Record<string, unknown>;

type StoreAnswer = { ok: true } | { ok: false; message: string; wording: Wording };
type TestAnswer = (
  { ok: true; credit: number; currency: string } | { ok: false; type: string; message: string; wording: Wording }
) & {
  store?: StoreAnswer;
};

const text = (v: unknown): string => (typeof v === 'string' ? v.trim() : '');
const sameUrl = (a: string, b: string): boolean => a.replace(/\/+$/, '') === b.replace(/\/+$/, '');
/** A sentence of the test's own (`errors.test.*`), with its English. */
const said = (key: string) => {
  const wording: Wording = { key: `test.${key}` };
  return { message: words().nodeEnglish(wording), wording };
};
const refused = (key: string): TestAnswer => ({ ok: false, type: 'invalid_request', ...said(key) });
/** A store's failure as checkStore tells it, worded by its code. */
const storeRefused = (message: string): StoreAnswer => ({ ok: false, message, wording: words().causeOf(message) });

/** The stored password goes only to the deployed store URL, as the token to the deployed base URL. */
async function testStore(RED: NodeAPI, input: TestRequest): Promise<StoreAnswer> {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { checkStore } = require('../account/redis-store') as typeof import('../account/redis-store');
  const url = text(input.storeUrl);
  const problem = storeUrlProblem(url);
  if (problem) return { ok: false, message: problem, wording: storeUrlWording(url) as Wording };
  let password: string | undefined = text(input.storePassword) || undefined;
  if (password === STORED_PLACEHOLDER) {
    const id = text(input.id);
    const stored = (id ? RED.nodes.getCredentials(id) : undefined) as AccountCredentials | undefined;
    if (!stored?.storePassword) return { ok: false, ...said('no-store-password') };
    if (url !== accountOf(RED, id)?.deployed.storeUrl) return { ok: false, ...said('store-password-again') };
    password = stored.storePassword;
  }
  const failure = await checkStore(url, password);
  return failure === undefined ? { ok: true } : storeRefused(failure);
}

async function testGateway(RED: NodeAPI, input: TestRequest): Promise<TestAnswer> {
  const typedToken = text(input.application_token);
  let baseUrl = text(input.baseUrl) || undefined;
  let timeout = numberSetting(input.timeout, DEFAULT_TIMEOUT, 1);
  let applicationId = text(input.application_id);
  let applicationToken = typedToken;
  if (typedToken === '' || typedToken === STORED_PLACEHOLDER) {
    // "As deployed": the stored token, and only with the deployed account's own address and timeout.
    const id = text(input.id);
    const deployed = accountOf(RED, id);
    const stored = (id ? RED.nodes.getCredentials(id) : undefined) as AccountCredentials | undefined;
    if (!deployed?.deployed || !stored?.application_token) return refused('no-token');
    if (baseUrl !== undefined && !sameUrl(baseUrl, deployed.deployed.baseUrl)) return refused('token-again');
    baseUrl = deployed.deployed.baseUrl;
    timeout = deployed.deployed.timeout;
    applicationId ||= stored.application_id ?? '';
    applicationToken = stored.application_token;
  }
  // "_ADD_" is the picker's "add new" entry: no proxy chosen.
  const proxyId = text(input.proxy);
  const proxy = proxySettings(RED, proxyId && proxyId !== '_ADD_' ? proxyId : undefined);
  if (proxy === null) return refused('proxy-undeployed');
  const { GatewayClient, GatewayError } = gateway();
  let client: GatewayClient | undefined;
  try {
    client = new GatewayClient({ baseUrl, applicationId, applicationToken, timeout, retries: 0, proxy });
    const balance = await client.info();
    return { ok: true, credit: balance.credit, currency: String(balance.currency ?? '') };
  } catch (error) {
    return { ok: false, type: error instanceof GatewayError ? error.code : 'unknown', ...testSentence(error) };
  } finally {
    await client?.close(0);
  }
}

/** The test's answer in the client's own words: nothing of the remote body reaches the browser. */
function testSentence(error: unknown): { message: string; wording: Wording } {
  const { GatewayError, typeWording } = gateway();
  if (!(error instanceof GatewayError)) return said('failed');
  // The client's own sentence: its check (a base URL not https), or the address and cause (ECONNREFUSED, a timeout).
  if (['invalid_request', 'timeout', 'network'].includes(error.code))
    return { message: error.message, wording: error.wording ?? words().causeOf(error) };
  const sentence = typeWording(error.code);
  const wording: Wording = error.status
    ? { key: 'answer', params: { sentence, type: error.code, status: error.status } }
    : { key: 'test.refused', params: { sentence, type: error.code } };
  return { message: words().nodeEnglish(wording), wording };
}
