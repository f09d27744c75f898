/**
 * The events node's bound on reports waiting to be emitted, without Node-RED: a call waits at the
 * gate while the bound is reached, goes in oldest first as reports are emitted, and is refused
 * (counted) when it waited too long; a closed node lets everything in.
 */
import assert from 'node:assert/strict';
import FakeTimers from '@sinonjs/fake-timers';
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
  it('a call let in whose reports are not read yet holds the room: the next waiting call goes in only once that count is known', async () => {
    const gate = new ReportGate(10, 10_000);
    const entered: string[] = [];
    await gate.enter(); // A: in, its body not read yet
    await gate.enter(); // C
    gate.taken(10); // C's ten reports: the room is full
    const d = gate.enter().then(() => entered.push('D'));
    const e = gate.enter().then(() => entered.push('E'));
    const turn = () => new Promise((r) => setImmediate(r));
    gate.emitted(0);
    await turn();
    assert.deepEqual(entered, [], 'exactly at the bound: no room');
    gate.emitted(10);
    await turn();
    assert.deepEqual(entered, [], "A's reports are not counted yet");
    gate.left(); // A ends without reports
    await d;
    gate.emitted(0);
    await turn();
    assert.deepEqual(entered, ['D'], 'one at a time: E waits for D to be read');
    gate.taken(3);
    await e;
    assert.deepEqual(entered, ['D', 'E']);
    assert.equal(gate.pending, 3);
  });

  it('a call that went in is never refused later; the refusal says why; reading never counts below nothing', async () => {
    // The gate's 30 ms wait runs on a fake clock: the test moves it past the wait at once.
    const clock = FakeTimers.install({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      const gate = new ReportGate(1, 30);
      gate.taken(1);
      const waiting = gate.enter();
      gate.emitted(1);
      await waiting;
      clock.tick(60);
      assert.equal(gate.refused, 0, 'its timer was stopped when it went in');
      gate.left();
      gate.left();
      gate.taken(1);
      const refused = assert.rejects(gate.enter(), /^Error: no room for more reports$/);
      clock.tick(30);
      await refused;
      gate.emitted(5);
      assert.equal(gate.pending, 0, 'never below nothing');
    } finally {
      clock.uninstall();
    }
  });
  it('exactly at the bound there is no room: a waiting call goes in once one report leaves', async () => {
    const gate = new ReportGate(10, 10_000);
    gate.taken(10);
    let entered = false;
    const waiting = gate.enter().then(() => (entered = true));
    gate.emitted(0);
    await new Promise((r) => setImmediate(r));
    assert.equal(entered, false);
    gate.emitted(1);
    await waiting;
    assert.equal(gate.pending, 9);
  });
});
