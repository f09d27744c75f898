/**
 * Delivery tracking's memory (unit): bounded in number and age, and empty while no events node
 * listens.
 */
import assert from 'node:assert/strict';
import { DeliveryTracker } from '../../nodes/account/tracking';

describe("delivery tracking: the account's memory is bounded", () => {
  const sent = (i: number) => ({ topic: `t${i}`, payload: i, node: 'n' });

  it('the 10,001st message forgets the first (its report and replies no longer match); the second is still known', () => {
    const tracker = new DeliveryTracker();
    tracker.listen({}, 0, () => undefined);
    for (let i = 0; i < 10_001; i++) tracker.track(`id-${i}`, `420777${String(i).padStart(6, '0')}`, sent(i));
    assert.equal(tracker.size, 10_000);
    assert.equal(tracker.report('id-0', 'delivered'), undefined);
    assert.equal(tracker.lastTo('420777000000'), undefined);
    assert.deepEqual(tracker.report('id-1', 'delivered')?.sent, sent(1));
    assert.equal(tracker.lastTo('+420 777 000 001')?.smsId, 'id-1');
  });

  it('a message older than 24 hours is forgotten', () => {
    let now = Date.parse('2026-11-22T10:00:00Z');
    const tracker = new DeliveryTracker(undefined, () => now);
    tracker.listen({}, 0, () => undefined);
    tracker.track('old', '420777000001', sent(1));
    now += 23 * 3600 * 1000;
    tracker.track('new', '420777000002', sent(2));
    assert.ok(tracker.report('old', 'buffered'));
    now += 3600 * 1000 + 1;
    assert.equal(tracker.report('old', 'delivered'), undefined);
    assert.equal(tracker.lastTo('420777000001'), undefined);
    assert.ok(tracker.report('new', 'delivered'));
  });

  it('nothing is remembered while no events node listens', () => {
    const tracker = new DeliveryTracker();
    tracker.track('x', '420777000001', sent(1));
    assert.equal(tracker.size, 0);
  });
});
