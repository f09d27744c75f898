// The store's own RESP2 connection (TCP or TLS), for a cap on a reply no client library offers: a
// hostile 1 GB reply took Node-RED to 2.2 GB with `@redis/client`. No offline queue, no timeout per
// command (script-batch.ts times each batch).
import { connect as tcp, isIP, type Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { Fifo } from '../../gateway/fifo';

/** The most a reply may hold: the biggest is an adoption, ended once past 4 MB (lua/adopt.lua); a batch holds at most 64 calls. */
const MAX_REPLY_BYTES = 64 * 1024 * 1024;

/** How long connecting and the handshake may take (Test connection's wait too). */
export const CONNECT_TIMEOUT_MS = 5000;

type Reply = string | number | null | Reply[];

export class ReplyError extends Error {}

interface ConnectionSettings {
  url: string;
  password: string | undefined;
  /** The ms before the next try after try `retries` failed; false: no next try. */
  reconnect: false | ((retries: number) => number);
  connectTimeoutMs: number;
}

export class RedisConnection {
  readonly #settings: ConnectionSettings;
  #socket: Socket | undefined;
  #ready = false;
  #closed = false;
  #retries = 0;
  #retry: NodeJS.Timeout | undefined;
  #connecting: NodeJS.Timeout | undefined;
  readonly #waiting = new Fifo<{ resolve(reply: Reply): void; reject(error: Error): void }>();
  /** Told when nothing waits for an answer any more (a graceful close). */
  #idle: (() => void) | undefined;
  #closing: Promise<void> | undefined;

  constructor(
    settings: ConnectionSettings,
    // Callbacks, not an EventEmitter: an 'error' event nobody listened to would take Node-RED down.
    // `failed`: a try failed or the connection went (a next try follows if `reconnect` allows).
    private readonly events: { ready(): void; failed(error: Error): void },
  ) {
    this.#settings = settings;
  }

  get isReady(): boolean {
    return this.#ready;
  }

  command(args: readonly string[]): Promise<Reply> {
    if (!this.#ready) return Promise.reject(new Error('The store is not connected'));
    return this.#send(args);
  }

  eval(script: string, options: { keys: string[]; arguments: string[] }): Promise<Reply> {
    return this.command(['EVAL', script, String(options.keys.length), ...options.keys, ...options.arguments]);
  }

  evalSha(sha: string, options: { keys: string[]; arguments: string[] }): Promise<Reply> {
    return this.command(['EVALSHA', sha, String(options.keys.length), ...options.keys, ...options.arguments]);
  }

  /** Stops, once what was sent is answered (the caller bounds the wait: a hung server never answers). */
  close(): Promise<void> {
    // One close for all who ask: a second would take the first's turn to be told, and leave it waiting forever.
    return (this.#closing ??= this.#close());
  }

  async #close(): Promise<void> {
    this.#closed = true;
    this.#ready = false;
    clearTimeout(this.#retry);
    if (this.#waiting.size) await new Promise<void>((resolve) => (this.#idle = resolve));
    this.destroy();
  }

  destroy(): void {
    this.#closed = true;
    clearTimeout(this.#retry);
    if (this.#socket) this.#lost(this.#socket, new Error('The store connection was closed'));
  }

  connect(): void {
    if (this.#closed || this.#socket) return;
    const url = new URL(this.#settings.url);
    const host = url.hostname.replace(/^\[|\]$/g, '');
    const tls = url.protocol === 'rediss:';
    const port = Number(url.port) || 6379;
    const socket = tls ? tlsConnect({ host, port, ...(isIP(host) ? {} : { servername: host }) }) : tcp({ host, port });
    this.#socket = socket;
    socket.setNoDelay(true);
    socket.setKeepAlive(true);
    // A timer, not the socket's idle timeout: a server that sends a byte now and then would put that off forever.
    this.#connecting = setTimeout(
      () => socket.destroy(new Error(`timeout: the store did not answer within ${this.#settings.connectTimeoutMs / 1000} s of connecting`)),
      this.#settings.connectTimeoutMs,
    ).unref();
    const reader = new ReplyReader(MAX_REPLY_BYTES);
    socket.on('data', (chunk: Buffer) => {
      try {
        for (const reply of reader.read(chunk)) {
          const waiter = this.#waiting.shift();
          // An answer nothing asked for: every later answer would go to the wrong caller.
          if (!waiter) throw new Error('The store answered what was not asked');
          if (reply instanceof ReplyError) waiter.reject(this.#redacted(reply));
          else {
            waiter.resolve(reply);
            // Answering, not only connected: the next loss starts the pause between tries anew.
            if (this.#ready) this.#retries = 0;
          }
        }
        if (!this.#waiting.size) this.#idle?.();
      } catch (error) {
        socket.destroy(error as Error);
      }
    });
    socket.on('error', (error) => this.#lost(socket, error));
    socket.on('close', () => this.#lost(socket, new Error('The store closed the connection')));
    socket.once(tls ? 'secureConnect' : 'connect', () => void this.#handshake(socket, url));
  }

  /** AUTH, SELECT and a PING: a server that answers it speaks RESP. */
  async #handshake(socket: Socket, url: URL): Promise<void> {
    try {
      const user = decodeURIComponent(url.username);
      const db = Number(url.pathname.slice(1) || 0);
      const steps: Promise<Reply>[] = [];
      if (this.#settings.password !== undefined || user)
        steps.push(this.#send(user ? ['AUTH', user, this.#settings.password ?? ''] : ['AUTH', this.#settings.password ?? '']));
      if (db) steps.push(this.#send(['SELECT', String(db)]));
      steps.push(this.#send(['PING']));
      const answers = await Promise.all(steps);
      if (answers.at(-1) !== 'PONG') throw new Error('The store answered PING with something else than PONG');
    } catch (error) {
      socket.destroy(error as Error);
      return;
    }
    if (socket !== this.#socket) return;
    clearTimeout(this.#connecting);
    this.#ready = true;
    this.#tell(() => this.events.ready());
  }

  /** A listener that throws must not escape a socket's handler, where it would take Node-RED down. */
  #tell(told: () => void): void {
    try {
      told();
    } catch {
      // The listener's own failure; the connection goes on.
    }
  }

  /** A hostile or odd server may echo the password: the error is told in states and logs. */
  #redacted(error: ReplyError): ReplyError {
    const { password } = this.#settings;
    return password && error.message.includes(password) ? new ReplyError(error.message.replaceAll(password, '***')) : error;
  }

  #send(args: readonly string[]): Promise<Reply> {
    const socket = this.#socket;
    if (!socket?.writable) return Promise.reject(new Error('The store is not connected'));
    let command = `*${args.length}\r\n`;
    for (const arg of args) command += `$${Buffer.byteLength(arg)}\r\n${arg}\r\n`;
    socket.write(command);
    return new Promise((resolve, reject) => this.#waiting.push({ resolve, reject }));
  }

  #lost(socket: Socket, error: Error): void {
    if (socket !== this.#socket) return;
    this.#socket = undefined;
    this.#ready = false;
    clearTimeout(this.#connecting);
    socket.destroy();
    for (let waiter = this.#waiting.shift(); waiter; waiter = this.#waiting.shift()) waiter.reject(error);
    this.#idle?.();
    if (this.#closed) return;
    this.#tell(() => this.events.failed(error));
    const { reconnect } = this.#settings;
    if (reconnect === false) this.#closed = true;
    else this.#retry = setTimeout(() => this.connect(), reconnect(this.#retries++)).unref();
  }
}

/** A connection at `url` once it is ready, tried once; rejects with why not (Test connection). */
export function openConnection(url: string, password: string | undefined, connectTimeoutMs = CONNECT_TIMEOUT_MS): Promise<RedisConnection> {
  return new Promise((resolve, reject) => {
    const connection: RedisConnection = new RedisConnection(
      { url, password, reconnect: false, connectTimeoutMs },
      { ready: () => resolve(connection), failed: reject },
    );
    connection.connect();
  });
}

// An array's item and a waiting chunk in memory beside their bytes (measured: about 85 and 200),
// counted against the cap: a reply of tiny items, or one sent a byte at a time, stays bounded.
const ITEM_COST = 80;
const CHUNK_COST = 256;

// RESP2's replies from chunks, each item read once (a reply cut across chunks costs its bytes, not
// its bytes times its chunks). Throws once a reply holds more than `maxBytes`, or on non-RESP.
export class ReplyReader {
  #chunks: Buffer[] = [];
  #pending = 0;
  #need = 0;
  /** What the reply read so far into open arrays holds: its bytes and each item's cost. */
  #held = 0;
  /** The next item stopped in its line: nothing more can be read before a chunk brings a "\r\n". */
  #inLine = false;
  readonly #open: { items: Reply[]; left: number }[] = [];

  constructor(private readonly maxBytes: number) {}

  read(chunk: Buffer): (Reply | ReplyError)[] {
    this.#chunks.push(chunk);
    this.#pending += chunk.length;
    if (this.#held + this.#pending + this.#chunks.length * CHUNK_COST > this.maxBytes) throw this.#tooBig();
    if (this.#pending < this.#need) return [];
    // A line cut across chunks is joined and looked through once a chunk brings its end (a "\r\n", or
    // the "\n" after a "\r"), not once per chunk (a hostile 64 MB line in 64 kB chunks cost 17 s of CPU).
    if (this.#inLine && !chunk.includes('\r\n') && !(this.#chunks.at(-2)?.at(-1) === 0x0d && chunk[0] === 0x0a)) return [];
    const buffer = this.#chunks.length === 1 ? (this.#chunks[0] as Buffer) : Buffer.concat(this.#chunks);
    const replies: (Reply | ReplyError)[] = [];
    let at = 0;
    for (;;) {
      const item = this.#item(buffer, at);
      if (!item) break;
      if (this.#open.length) this.#held += item.next - at + ITEM_COST;
      at = item.next;
      if (item.opens) {
        this.#open.push({ items: [], left: item.opens });
        continue;
      }
      let value = item.value;
      // An item ends its array, which may end the one it is in.
      for (let top = this.#open.at(-1); top; top = this.#open.at(-1)) {
        top.items.push(value as Reply);
        if (--top.left > 0) break;
        this.#open.pop();
        value = top.items;
      }
      if (!this.#open.length) {
        replies.push(value as Reply | ReplyError);
        this.#held = 0;
      }
    }
    const rest = buffer.subarray(at);
    this.#chunks = rest.length ? [rest] : [];
    this.#pending = rest.length;
    return replies;
  }

  #tooBig(): Error {
    return new Error(`The store sent a reply of more than ${this.maxBytes / 1024 / 1024} MB: not read (a hostile or broken server)`);
  }

  /** One item at `at` (or an array's start: `opens` items follow), where the next begins; undefined when its bytes have not all come. */
  #item(buffer: Buffer, at: number): { value: Reply | ReplyError; opens?: number; next: number } | undefined {
    const end = buffer.indexOf('\r\n', at);
    this.#inLine = end < 0;
    if (end < 0) {
      this.#need = buffer.length - at + 1;
      return undefined;
    }
    const line = buffer.toString('utf8', at + 1, end);
    switch (String.fromCharCode(buffer[at] as number)) {
      case '+':
        return { value: line, next: end + 2 };
      case '-':
        return { value: new ReplyError(line), next: end + 2 };
      case ':':
        return { value: integer(line), next: end + 2 };
      case '$': {
        const length = lengthOf(line);
        if (length < 0) return { value: null, next: end + 2 };
        // Refused now, not after waiting for bytes a hostile server may never send.
        if (length > this.maxBytes) throw this.#tooBig();
        const stop = end + 2 + length;
        if (buffer.length < stop + 2) {
          this.#need = stop + 2 - at;
          return undefined;
        }
        if (buffer[stop] !== 0x0d || buffer[stop + 1] !== 0x0a) throw new Error('The store answered something that is not RESP');
        return { value: buffer.toString('utf8', end + 2, stop), next: stop + 2 };
      }
      case '*': {
        const length = lengthOf(line);
        if (length * ITEM_COST > this.maxBytes) throw this.#tooBig();
        return { value: length < 0 ? null : [], opens: Math.max(length, 0), next: end + 2 };
      }
      default:
        throw new Error('The store answered something that is not RESP');
    }
  }
}

/** A bulk string's or an array's length: -1 is nil, no other negative is RESP. */
function lengthOf(text: string): number {
  const length = integer(text);
  if (length < -1) throw new Error('The store answered something that is not RESP');
  return length;
}

/** Digits, with a minus sign perhaps ("1e3", " 5" or "" are not one). */
function integer(text: string): number {
  if (!/^-?\d{1,19}$/.test(text)) throw new Error('The store answered something that is not RESP');
  return Number(text);
}
