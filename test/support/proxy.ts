/**
 * A forward HTTP proxy on loopback, written for the tests: it tunnels CONNECT requests (what
 * undici's proxy agents send) and forwards absolute-form requests, counts what passes, can ask
 * for credentials (407 without them) and can refuse every request (403).
 */
import { createServer, request, type IncomingMessage, type Server } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';

export interface TestProxy {
  url: string;
  /** Targets (`host:port`) of the requests it let through, in order. */
  passed: string[];
  /** Proxy-Authorization headers it was sent. */
  authorizations: string[];
  refuse: boolean;
  close(): Promise<void>;
}

export async function startTestProxy(options: { username?: string; password?: string } = {}): Promise<TestProxy> {
  const expected = options.username
    ? `Basic ${Buffer.from(`${options.username}:${options.password ?? ''}`).toString('base64')}`
    : undefined;
  const sockets = new Set<Socket>();
  const proxy: Omit<TestProxy, 'url' | 'close'> = { passed: [], authorizations: [], refuse: false };
  const allowed = (req: IncomingMessage): number => {
    const auth = req.headers['proxy-authorization'];
    if (auth) proxy.authorizations.push(auth);
    if (proxy.refuse) return 403;
    if (expected && auth !== expected) return 407;
    return 200;
  };
  const server: Server = createServer((req, res) => {
    const status = allowed(req);
    if (status !== 200) {
      res.writeHead(status).end();
      return;
    }
    const target = new URL(req.url ?? '/');
    proxy.passed.push(target.host);
    const headers = { ...req.headers };
    delete headers['proxy-authorization'];
    const upstream = request(target, { method: req.method, headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    upstream.on('error', () => res.writeHead(502).end());
    req.pipe(upstream);
  });
  server.on('connect', (req: IncomingMessage, client: Socket, head: Buffer) => {
    sockets.add(client);
    client.on('close', () => sockets.delete(client));
    client.on('error', () => undefined);
    const status = allowed(req);
    if (status !== 200) {
      client.end(
        `HTTP/1.1 ${status} ${status === 407 ? 'Proxy Authentication Required' : 'Forbidden'}\r\ncontent-length: 0\r\n\r\n`,
      );
      return;
    }
    const [host, port] = (req.url ?? '').split(':');
    proxy.passed.push(req.url ?? '');
    const upstream = connect(Number(port), host as string, () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length) upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    sockets.add(upstream);
    upstream.on('close', () => sockets.delete(upstream));
    upstream.on('error', () => client.destroy());
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return Object.assign(proxy, {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  });
}
