/**
 * Why the gateway is found unreachable, in a few words a status can show (`1 waiting: connection
 * refused`, `3 waiting: HTTP 503`): a catalog key under `cause.` and its parameters, read from the
 * failure the client reported (its HTTP status, or the transport's error code in its cause).
 */
import { GatewayError } from '../../gateway';

export interface ShortCause {
  key: string;
  params?: Record<string, string | number>;
}

const CODES: Record<string, string> = {
  ECONNREFUSED: 'refused',
  ENOTFOUND: 'not-found',
  EAI_AGAIN: 'not-found',
  ECONNRESET: 'reset',
  EPIPE: 'reset',
  UND_ERR_SOCKET: 'reset',
  UND_ERR_CLOSED: 'reset',
  EHOSTUNREACH: 'no-route',
  ENETUNREACH: 'no-route',
  UND_ERR_CONNECT_TIMEOUT: 'timeout',
  UND_ERR_HEADERS_TIMEOUT: 'timeout',
  UND_ERR_BODY_TIMEOUT: 'timeout',
};

export function shortCause(error: unknown): ShortCause {
  if (!(error instanceof GatewayError)) return { key: 'network' };
  if (error.status !== undefined) return { key: 'http', params: { status: error.status } };
  if (error.code === 'timeout') return { key: 'timeout' };
  if (error.code === 'closed') return { key: 'closing' };
  if (/^The proxy would not connect/.test(error.message)) return { key: 'proxy' };
  const code = /\b(E[A-Z]{3,}|UND_ERR_[A-Z_]+)\b/.exec(`${error.message} ${String(error.cause ?? '')}`)?.[1];
  return { key: (code && CODES[code]) || 'network' };
}

export function sameCause(a: ShortCause, b: ShortCause): boolean {
  return a.key === b.key && a.params?.status === b.params?.status;
}
