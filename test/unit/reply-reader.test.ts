/**
 * The store connection's reader of RESP2 replies: what Redis answers, cut across chunks anywhere,
 * read whole and in order; a reply past the cap, or what is not RESP, is refused.
 */
import assert from 'node:assert/strict';
import { ReplyError, ReplyReader } from '../../nodes/account/redis-connection';

/** The replies of `wire`, fed in the given chunk sizes. */
function read(wire: string, sizes: number[] = [Buffer.byteLength(wire)], maxBytes = 1024 * 1024): unknown[] {
  const reader = new ReplyReader(maxBytes);
  const bytes = Buffer.from(wire);
  const replies: unknown[] = [];
  let at = 0;
  for (let i = 0; at < bytes.length; i++) {
    const size = sizes[Math.min(i, sizes.length - 1)] as number;
    replies.push(...reader.read(bytes.subarray(at, at + size)));
    at += size;
  }
  return replies.map((reply) => (reply instanceof ReplyError ? `error: ${reply.message}` : reply));
}

// What the store's batch runner answers: per call {1, value} or {0, error}, nil as null.
const WIRE =
  '+PONG\r\n' +
  ':42\r\n' +
  '$-1\r\n' +
  '$4\r\nhé!\r\n' +
  '-NOSCRIPT No matching script\r\n' +
  '*3\r\n*2\r\n:1\r\n$4\r\nsent\r\n*2\r\n:0\r\n$9\r\nWRONGTYPE\r\n*2\r\n:1\r\n*0\r\n' +
  '*-1\r\n' +
  '$0\r\n\r\n';
const REPLIES = [
  'PONG',
  42,
  null,
  'hé!',
  'error: NOSCRIPT No matching script',
  [
    [1, 'sent'],
    [0, 'WRONGTYPE'],
    [1, []],
  ],
  null,
  '',
];

describe("the store connection's reply reader", () => {
  it('reads every kind of reply the store gets, in order', () => {
    assert.deepEqual(read(WIRE), REPLIES);
  });

  it('the same, cut at every byte: one chunk of each size from 1 to the whole, and a cut at each place', () => {
    const length = Buffer.byteLength(WIRE);
    for (let size = 1; size <= length; size++) assert.deepEqual(read(WIRE, [size]), REPLIES, `chunks of ${size}`);
    for (let cut = 1; cut < length; cut++) assert.deepEqual(read(WIRE, [cut, length]), REPLIES, `cut at ${cut}`);
  });

  it('a bulk string across many chunks comes whole', () => {
    const text = 'x'.repeat(100_000);
    assert.deepEqual(read(`$${text.length}\r\n${text}\r\n:1\r\n`, [1000]), [text, 1]);
  });

  it('a reply past the cap is refused, in one chunk or spread over many; one just under it is read', () => {
    const big = (n: number) => `$${n}\r\n${'y'.repeat(n)}\r\n`;
    assert.throws(() => read(big(20_000), [50_000], 16_384), /a reply of more than/);
    assert.throws(() => read(big(20_000), [1000], 16_384), /a reply of more than/);
    assert.throws(() => read(`*100\r\n${':1\r\n'.repeat(100)}`, [50], 256), /a reply of more than/, 'counted across the items of an array');
    assert.deepEqual(read(big(10_000), [1000], 16_384), ['y'.repeat(10_000)]);
    // The cap is per reply: many small ones in a row are read.
    assert.equal(read(':1\r\n'.repeat(1000), [64], 512).length, 1000);
  });

  it('a line cut across many chunks is joined once, when its end comes (not once per chunk: its bytes squared)', () => {
    const concat = Buffer.concat;
    let joined = 0;
    Buffer.concat = (list: readonly Uint8Array[], length?: number) => {
      const buffer = concat(list, length);
      joined += buffer.length;
      return buffer;
    };
    try {
      const line = `+${'a'.repeat(1024 * 1024)}\r\n`;
      assert.deepEqual(read(line, [1024], 64 * 1024 * 1024), ['a'.repeat(1024 * 1024)]);
      assert.ok(joined <= 2 * line.length, `${Math.round(joined / 1024 / 1024)} MB joined for a line of 1 MB`);
      // Its end cut between two chunks, "\r" and "\n".
      assert.deepEqual(read('+ab\r\n:1\r\n', [4, 1, 4]), ['ab', 1]);
    } finally {
      Buffer.concat = concat;
    }
  });

  it('the cap counts what a reply costs in memory, not only its bytes: many small items, deep arrays, a trickle of tiny chunks', () => {
    const MB = 1024 * 1024;
    // 1 MB on the wire each; as JavaScript values, 11 MB (empty arrays) and 21 MB (nested ones) were held.
    assert.throws(() => read(`*262144\r\n${'*0\r\n'.repeat(262144)}`, [64 * 1024], 4 * MB), /a reply of more than/, 'empty arrays');
    assert.throws(() => read(`${'*1\r\n'.repeat(262144)}:1\r\n`, [64 * 1024], 4 * MB), /a reply of more than/, 'arrays in arrays');
    // 64 kB in chunks of one byte: each chunk held costs about 200 bytes beside its own.
    assert.throws(() => read(`$65536\r\n${'z'.repeat(65536)}\r\n`, [1], 4 * MB), /a reply of more than/, 'tiny chunks');
    // What the store gets is read: an adoption of 1,000 entries of 4 kB, in chunks of a TCP segment.
    const entries = Array.from({ length: 2000 }, () => `$4096\r\n${'e'.repeat(4096)}\r\n`).join('');
    assert.equal((read(`*2000\r\n${entries}`, [1460], 64 * MB)[0] as string[]).length, 2000);
  });

  it('a length past the cap is refused when it is read, not after waiting for bytes that may never come', () => {
    const reader = new ReplyReader(1024 * 1024);
    assert.throws(() => reader.read(Buffer.from('$99999999999\r\n')), /a reply of more than/);
    assert.throws(() => new ReplyReader(1024 * 1024).read(Buffer.from('*2000000000\r\n')), /a reply of more than/);
    assert.throws(() => new ReplyReader(1024 * 1024).read(Buffer.from('*2\r\n:1\r\n$2000000\r\n')), /a reply of more than/, 'in an array');
    assert.deepEqual(new ReplyReader(1024 * 1024).read(Buffer.from('$1000000\r\nabc')), [], 'one under the cap waits for its bytes');
  });

  it('what is not RESP is refused', () => {
    assert.throws(() => read('this is not RESP\r\n'), /not RESP/);
    assert.throws(() => read('$abc\r\n'), /not RESP/);
    assert.throws(() => read('*1.5\r\n'), /not RESP/);
    assert.throws(() => read('$3\r\nfooXY:1\r\n'), /not RESP/, 'a bulk string longer than it said');
    assert.deepEqual(read(':9223372036854775807\r\n:-42\r\n'), [Number('9223372036854775807'), -42], 'any 64-bit integer');
    for (const odd of [':abc\r\n', ':1e3\r\n', '$-5\r\n', '$ 5\r\n', '$\r\n', '*-7\r\n']) assert.throws(() => read(odd), /not RESP/, JSON.stringify(odd));
  });
});
