/**
 * The store's batches against pipelining, without Node-RED: what a happy send
 * asks the store (the claim of the alert, the rate window, tracking's record, one after another),
 * 16 sends at a time, through the store's batch (the calls made while one batch is at the server
 * go as one command) and through one command per call (written together in a turn of the event
 * loop: pipelining, on the store's own connection). Alternating runs; sends/s and this process's
 * CPU per send.
 */
import { AlertClaims, keyPrefix, RedisWindow, SharedTracking, STORE_SCRIPTS } from '../nodes/account/redis-store';
import { openConnection } from '../nodes/account/redis-connection';
import { ScriptBatch, type RedisLike, type ScriptClient } from '../nodes/account/script-batch';
import { startRedis } from '../test/support/redis';
import { closedLoop, inRounds, median, PLAN, round, serverProcesses, setRatio, describeRatio } from './harness';

const CONCURRENCY = 16;

function happySends(redis: RedisLike, name: string) {
  const prefix = keyPrefix(`batching-${name}`);
  const claims = new AlertClaims(redis, prefix, 'copy-a');
  const window = new RedisWindow(redis, `${prefix}window`, 1_000_000_000, 1000);
  const tracking = new SharedTracking(() => redis, prefix);
  return (i: number, done: () => void) => {
    const now = Date.now();
    claims
      .claim('t', `Door opened, bench message ${name} ${i}`)
      .then(() => window.reserveInOrder([1]))
      .then(() => tracking.record({ smsId: `${name}-${i}`, number: '420777123456', sent: { node: 't', seq: i } as never, acceptedAt: now, countsFrom: now }))
      .then(done, done);
  };
}

/** Pipelining: each call a batch of its own (its own EVALSHA), from a pool larger than the sends at a time. */
function pipelined(connection: ScriptClient): RedisLike {
  const batches = Array.from({ length: 4 * CONCURRENCY }, () => new ScriptBatch(connection, STORE_SCRIPTS));
  let next = 0;
  return { eval: (script, options) => (batches[next++ % batches.length] as ScriptBatch).eval(script, options) };
}

export async function storeBatching() {
  const redis = await startRedis();
  const child = { pid: redis.pid() } as never;
  serverProcesses.push(child);
  const [a, b] = [await openConnection(redis.url, undefined), await openConnection(redis.url, undefined)];
  try {
    const senders: Record<string, (i: number, done: () => void) => void> = {
      batches: happySends(new ScriptBatch(a, STORE_SCRIPTS), 'batches'),
      pipelining: happySends(pipelined(b), 'pipelining'),
    };
    const count = PLAN.messages[CONCURRENCY] as number;
    for (const send of Object.values(senders)) await closedLoop(count, CONCURRENCY, send); // warm-up
    const { runs, sets } = await inRounds([['batches', 'pipelining']], (name) => closedLoop(count, CONCURRENCY, senders[name] as never));
    const of = (name: string, field: 'msgsPerSec' | 'cpuUsPerMsg') => round(median((runs.get(name) ?? []).map((r) => r[field])), 1);
    const ratio = setRatio(sets, 'batches', 'pipelining');
    console.log(
      `store calls c=${CONCURRENCY}: batches ${of('batches', 'msgsPerSec')} sends/s (${of('batches', 'cpuUsPerMsg')} µs CPU each), pipelining ${of('pipelining', 'msgsPerSec')} sends/s (${of('pipelining', 'cpuUsPerMsg')} µs CPU each); batches vs pipelining, back to back ${describeRatio(ratio)}`,
    );
    return { batches: of('batches', 'msgsPerSec'), pipelining: of('pipelining', 'msgsPerSec'), ratio };
  } finally {
    for (const c of [a, b]) c.destroy();
    serverProcesses.splice(serverProcesses.indexOf(child), 1);
    await redis.stop();
  }
}
