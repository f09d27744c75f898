/**
 * The package's one FIFO: oldest first, whatever was taken out before, however long it ran.
 */
import assert from 'node:assert/strict';
import { Fifo } from '../../gateway/fifo';

describe('the FIFO', () => {
  it('oldest first; empty gives undefined, and stays usable after', () => {
    const queue = new Fifo<number>();
    assert.equal(queue.shift(), undefined);
    assert.equal(queue.shift(), undefined);
    assert.equal(queue.size, 0);
    queue.push(1);
    queue.push(2);
    assert.equal(queue.size, 2);
    assert.equal(queue.peek(), 1);
    assert.equal(queue.shift(), 1);
    assert.equal(queue.shift(), 2);
    assert.equal(queue.shift(), undefined);
    assert.equal(queue.size, 0);
  });

  it('in order through many pushes and shifts (past the point where the spent part is cut off)', () => {
    const queue = new Fifo<number>();
    const taken: number[] = [];
    for (let i = 0; i < 5000; i++) {
      queue.push(i);
      if (i % 3 !== 0) taken.push(queue.shift() as number);
    }
    assert.equal(queue.size, 5000 - taken.length);
    assert.deepEqual(
      [...queue],
      Array.from({ length: queue.size }, (_, i) => taken.length + i),
    );
    while (queue.size) taken.push(queue.shift() as number);
    assert.deepEqual(
      taken,
      Array.from({ length: 5000 }, (_, i) => i),
    );
  });

  it('remove: from the head, from the middle, and one that is not there (false, nothing changed)', () => {
    const queue = new Fifo<string>();
    for (const item of ['a', 'b', 'c', 'd']) queue.push(item);
    assert.equal(queue.remove('a'), true);
    assert.equal(queue.remove('c'), true);
    assert.equal(queue.remove('x'), false);
    assert.equal(queue.remove('a'), false, 'already out');
    assert.deepEqual([...queue], ['b', 'd']);
    assert.equal(queue.size, 2);
    assert.equal(queue.shift(), 'b');
    assert.equal(queue.shift(), 'd');
  });

  it('clear: empty, and usable after', () => {
    const queue = new Fifo<number>();
    for (let i = 0; i < 10; i++) queue.push(i);
    queue.shift();
    queue.clear();
    assert.equal(queue.size, 0);
    assert.deepEqual([...queue], []);
    assert.equal(queue.shift(), undefined);
    queue.push(7);
    assert.deepEqual([...queue], [7]);
  });
});
