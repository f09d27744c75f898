/**
 * The circuit (unit): it opens once and closes once, telling its watcher of each change only;
 * what waits on it stops when it opens; a request it held never reached the gateway and is worth
 * another attempt.
 */
import assert from 'node:assert/strict';
import { withdrawnError, isWithdrawn } from '../../gateway';
import { Circuit } from '../../nodes/account/circuit';

describe('circuit (unit)', () => {
  it('trip and reset each tell the watcher once, however often they are called', () => {
    const circuit = new Circuit();
    const changes: boolean[] = [];
    circuit.onChange = () => changes.push(circuit.open);
    circuit.reset('answered');
    assert.deepEqual(changes, [], 'closed already');
    const before = circuit.signal;
    circuit.trip('HTTP 503');
    circuit.trip('HTTP 503');
    assert.deepEqual(changes, [true]);
    assert.equal(before.aborted, true, 'what waited stops');
    assert.equal(circuit.signal, before, 'while open, waits stop at once');
    assert.equal(circuit.cause?.reason, 'HTTP 503', 'it says why it opened');
    circuit.reset('answered');
    circuit.reset('nothing-waits');
    assert.deepEqual(changes, [true, false]);
    assert.equal(circuit.cause, undefined);
    assert.equal(circuit.ended, 'answered', 'how it ended: a reset of a closed circuit changes nothing');
    circuit.trip('HTTP 503');
    circuit.reset('nothing-waits');
    assert.equal(circuit.ended, 'nothing-waits');
    assert.equal(circuit.signal.aborted, false, 'a new signal once closed');
  });

  it('a withdrawn request: never reached the gateway, worth another attempt; its sentence says nothing of an outbox (the gateway client has none)', () => {
    const withdrawn = withdrawnError();
    assert.deepEqual(
      [withdrawn.code, withdrawn.retryable, withdrawn.mayHaveReached, isWithdrawn(withdrawn)],
      ['network', true, false, true],
    );
    assert.equal(withdrawn.message, 'Not sent: withdrawn before it reached the gateway');
    assert.equal(isWithdrawn('withdrawn'), false);
  });
});
