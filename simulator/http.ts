/** HTTP plumbing of the simulator: JSON answers, bounded bodies, the API's parameters. */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { isObject } from './gateway';

/** Larger request bodies are answered 413 (100,000 recipients with their own texts fit). */
const MAX_BODY = 32 * 1024 * 1024;

export function json(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  reply(res, status, text, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(text)) });
}

/** An answer as a fault shapes it: no content-length, the body as given (none for an empty one). */
export function reply(
  res: ServerResponse,
  status: number,
  body?: string,
  headers: Record<string, string> = { 'content-type': 'application/json' },
): void {
  res.writeHead(status, headers);
  res.end(body);
}

export const mediaType = (req: IncomingMessage): string | undefined =>
  req.headers['content-type']?.split(';')[0]?.trim();

/** Reads a body up to MAX_BODY; undefined when larger (the rest is drained, to answer 413). */
export function readBody(req: IncomingMessage): Promise<string | undefined> {
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

export function parseParameters(
  method: string,
  contentType: string | undefined,
  raw: string,
  query: URLSearchParams,
  takesForm: boolean,
): Record<string, unknown> | undefined {
  if (method === 'GET') return Object.fromEntries(query);
  if (contentType === 'application/json') return parseObject(raw);
  // The gateway takes JSON, and a form where `takesForm`; any other body is no parameters at all.
  if (contentType !== 'application/x-www-form-urlencoded' || !takesForm) return undefined;
  const form: Record<string, unknown> = Object.fromEntries(new URLSearchParams(raw));
  // Form bodies carry booleans as yes/no.
  for (const key of ['unicode', 'flash'])
    if (key in form) form[key] = form[key] === 'yes' || form[key] === '1' || form[key] === 'true';
  return form;
}

export function parseObject(raw: string): Record<string, unknown> | undefined {
  try {
    const parsed: unknown = JSON.parse(raw);
    return isObject(parsed) ? parsed : undefined;
  } catch {
    return undefined;
  }
}
