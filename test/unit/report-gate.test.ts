/**
 * The events node's bound on reports waiting to be emitted, without Node-RED: a call waits at the
 * gate while the bound is reached, goes in oldest first as reports are emitted, and is refused
 * (counted) when it waited too long; a closed node lets everything in.
 */
import assert from 'node:assert/strict';
import { ReportGate } from '../../nodes/behaviours/report-gate';

describe('report gate (unit)', () => {
  it('calls go in at once below the bound; at it they wait, and go in oldest first as reports are emitted', async () => {
    const gate = new ReportGate(10, 10_000);
    await gate.enter();
    gate.taken(10);
    const order: string[] = [];
    const first = gate.enter().then(() => order.push('first'));
    const second = gate.enter().then(() => order.push('second'));
    await new Promise((r) => setImmediate(r));
    assert.deepEqual(order, [], 'both wait: 10 reports wait to be emitted');
    gate.emitted(1);
    await first;
    assert.deepEqual(order, ['first']);
    gate.taken(5);
    await new Promise((r) => setImmediate(r));
    assert.deepEqual(order, ['first'], 'the second waits while the first one’s reports fill the room');
    gate.emitted(14);
    await second;
    assert.deepEqual(order, ['first', 'second']);
    assert.equal(gate.pending, 0);
  });

  it('a call that waited waitMs is refused and counted; the next one waits again', async () => {
    const gate = new ReportGate(1, 30);
    gate.taken(1);
    await assert.rejects(gate.enter());
    assert.equal(gate.refused, 1);
    const later = gate.enter();
    gate.emitted(1);
    await later;
    assert.equal(gate.refused, 1);
  });

  it('a closed node lets in whatever waits', async () => {
    const gate = new ReportGate(1, 10_000);
    gate.taken(5);
    const waiting = gate.enter();
    gate.open();
    await waiting;
    assert.equal(gate.pending, 0);
  });
});
