/**
 * The minimal gateway for the benchmark: answers every request with a fixed success at once, so
 * what is measured is the client. A promotional request gets one record per recipient (it must,
 * for the per-recipient outputs), built as cheaply as possible.
 */
import { createServer } from 'node:http';

// Each answer its own sms_id (delivery tracking keys on it), built as cheaply as the fixed text was.
let nextId = 0;
const transactional = () =>
  `{"data":{"status":"accepted","sms_id":"fixed-${++nextId}","price":0.05,"credit":100,"number":"420777123456"}}`;

/** An outage for the outbox scenarios: while `down`, every API request is answered 503 and counted. */
let down = false;
let failed = 0;

const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    if (req.url?.startsWith('/control/')) {
      if (req.url === '/control/down') [down, failed] = [true, 0];
      if (req.url === '/control/up') down = false;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ down, failed }));
      return;
    }
    if (down) {
      failed++;
      res.writeHead(503, { 'content-type': 'application/json' });
      res.end('{"error":"Service unavailable","code":503,"type":"unknown"}');
      return;
    }
    let body = transactional();
    if (req.url?.endsWith('/check-phone-numbers')) {
      // The SDK's shape: one record per number, keyed by the number as sent.
      const { numbers } = JSON.parse(Buffer.concat(chunks).toString()) as { numbers: { phone_number: string }[] };
      const data: Record<string, unknown> = {};
      for (const { phone_number } of numbers)
        data[phone_number] = {
          phone_number,
          valid: true,
          country: 'cz',
          call_prefix: 420,
          network_code: '23001',
          network_name: 'T-Mobile',
        };
      body = JSON.stringify({ data });
    } else if (req.url?.endsWith('/promotional')) {
      const { number } = JSON.parse(Buffer.concat(chunks).toString()) as { number: (string | { number: string })[] };
      const response = number.map((n, i) => ({
        status: 'accepted',
        sms_id: `fixed-${i}`,
        price: 0.05,
        credit: 100,
        number: typeof n === 'string' ? n : n.number,
      }));
      body = JSON.stringify({
        data: {
          total: {
            price: 0.05 * response.length,
            status: { sent: 0, accepted: response.length, scheduled: 0, error: 0 },
          },
          response,
        },
      });
    }
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
    res.end(body);
  });
});
// Idle connections kept open for the whole benchmark: a client's pool can wait minutes between its
// runs, and a connection the server closes as the client reuses it fails the request ("socket hang
// up" from the core flow, whose client does not repeat a POST).
server.keepAliveTimeout = 3_600_000;
server.listen(0, '127.0.0.1', () => {
  const { port } = server.address() as { port: number };
  console.log(`fixed server listening on http://127.0.0.1:${port}`);
});
process.on('SIGTERM', () => process.exit(0));
