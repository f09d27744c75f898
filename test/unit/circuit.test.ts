/**
 * The circuit (unit): it opens once and closes once, telling its watcher of each change only;
 * what waits on it stops when it opens; a request it held never reached the gateway and is worth
 * another attempt.
 */
import assert from 'node:assert/strict';
import { heldError, isHeld } from '../../gateway';
import { Circuit } from '../../nodes/account/circuit';

describe('circuit (unit)', () => {
  it('trip and reset each tell the watcher once, however often they are called', () => {
    const circuit = new Circuit();
    const changes: boolean[] = [];
    circuit.onChange = () => changes.push(circuit.open);
    circuit.reset();
    assert.deepEqual(changes, [], 'closed already');
    const before = circuit.signal;
    circuit.trip('HTTP 503');
    circuit.trip('HTTP 503');
    assert.deepEqual(changes, [true]);
    assert.equal(before.aborted, true, 'what waited stops');
    assert.equal(circuit.signal, before, 'while open, waits stop at once');
    assert.equal(circuit.cause?.reason, 'HTTP 503', 'it says why it opened');
    circuit.reset();
    circuit.reset();
    assert.deepEqual(changes, [true, false]);
    assert.equal(circuit.cause, undefined);
    assert.equal(circuit.signal.aborted, false, 'a new signal once closed');
  });

  it('a held request: never reached the gateway, worth another attempt; its sentence says nothing of an outbox (the gateway client has none)', () => {
    const held = heldError();
    assert.deepEqual([held.code, held.retryable, held.mayHaveReached, isHeld(held)], ['network', true, false, true]);
    assert.equal(held.message, 'Not sent: held back before it reached the gateway');
    assert.equal(isHeld('held'), false);
  });
});
