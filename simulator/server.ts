/** The HTTP server: Host and Origin checked, then the outbox page, the controls or the API. */
import { once } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { isLoopbackHost } from '../gateway/base-url';
import { serveApi } from './api';
import { serveControl } from './control';
import type { FaultSettings } from './faults';
import { json, reply } from './http';
import { OUTBOX_PAGE } from './page';
import { SimulatorState, type SimulatorOptions } from './state';

export type Simulator = Awaited<ReturnType<typeof startSimulator>>;

export async function startSimulator(options: SimulatorOptions = {}) {
  const state = new SimulatorState(options);
  const releaseTimer = setInterval(() => {
    if (state.gateway.releaseDue()) state.notify();
  }, 1000).unref();

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent)
        json(res, 500, { type: 'unknown', code: 500, error: String((error as Error)?.message ?? error), detail: null });
      else res.destroy();
    });
  });
  server.keepAliveTimeout = 30_000;
  let offlineTimer: NodeJS.Timeout | undefined;
  let closed = false;
  const listenAgain = () => {
    if (!server.listening && !closed) server.listen(actualPort, host);
  };
  state.faults.onRefuse = (seconds) => {
    clearTimeout(offlineTimer);
    // After the control request that asked for it has its answer.
    setTimeout(() => {
      if (server.listening) server.close();
      server.closeAllConnections();
    }, 50);
    offlineTimer = setTimeout(listenAgain, 50 + seconds * 1000);
  };

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (!trusted(req)) return json(res, 403, { error: 'Host or Origin is not this simulator' });
    const url = new URL(req.url ?? '/', 'http://simulator');
    if (url.pathname === '/' && req.method === 'GET')
      return reply(res, 200, OUTBOX_PAGE, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
    if (url.pathname.startsWith('/simulator/')) return serveControl(state, req, res, url.pathname);
    return serveApi(state, req, res, url);
  }

  // Another site's page (DNS rebinding, a cross-site fetch) must reach neither the log (tokens) nor
  // the controls: the Host must be this server (none until it listens), an Origin this page's own.
  let allowedHosts = new Set<string>();
  function trusted(req: IncomingMessage): boolean {
    const hostHeader = (req.headers.host ?? '').toLowerCase();
    // A wildcard bind answers on every address of the machine: the user chose that, with a warning.
    if (host !== '0.0.0.0' && host !== '::' && !allowedHosts.has(hostHeader)) return false;
    const origin = req.headers.origin;
    return origin === undefined || (URL.canParse(origin) && new URL(origin).host.toLowerCase() === hostHeader);
  }

  const host = options.host ?? '127.0.0.1';
  if (!isLoopbackHost(host)) {
    console.warn(
      `bulkgate-simulator: listening on ${host}, not loopback: other machines can reach it, its request log (tokens included) and its controls. It is a developer tool; use --host 127.0.0.1 unless you need this.`,
    );
  }
  server.listen(options.port ?? 0, host);
  await once(server, 'listening');
  const actualPort = (server.address() as AddressInfo).port;
  // The host as it stands in a URL (an IPv6 address in brackets).
  const hostName = host.includes(':') ? `[${host}]` : host;
  const names = isLoopbackHost(host) ? [hostName, 'localhost', '127.0.0.1', '[::1]'] : [hostName];
  allowedHosts = new Set(names.map((n) => `${n.toLowerCase()}:${actualPort}`));
  // After a `refuse` outage the port may have been taken meanwhile: an 'error' with no listener
  // would end the process (a user's demo with it), so say so once and try again every second.
  let taken = false;
  server.on('error', (error: NodeJS.ErrnoException) => {
    if (!taken)
      console.warn(
        `bulkgate-simulator: cannot listen again on port ${actualPort} of ${host} (${error.code ?? error.message}: another program may have taken it); trying every second`,
      );
    taken = true;
    clearTimeout(offlineTimer);
    offlineTimer = setTimeout(listenAgain, 1000);
  });
  server.on('listening', () => {
    if (taken) console.warn(`bulkgate-simulator: listening again on http://${hostName}:${actualPort}`);
    taken = false;
  });
  return {
    url: `http://${hostName}:${actualPort}`,
    server,
    gateway: state.gateway,
    accounts: state.accounts,
    requests: state.requests,
    setFault: (fault: FaultSettings) => state.faults.set(fault),
    close: async () => {
      closed = true;
      clearInterval(releaseTimer);
      clearTimeout(offlineTimer);
      state.close();
      server.closeAllConnections();
      if (server.listening) await new Promise((resolve) => server.close(resolve));
    },
  };
}
