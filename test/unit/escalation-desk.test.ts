/**
 * The desk's close waits for the writes already started: the texted number recorded in the
 * background (not awaited by anyone) is on disk before close resolves, so a test that removes the
 * user directory after it, or a process that exits after it, finds no write still landing.
 */
import assert from 'node:assert/strict';
import { EscalationDesk } from '../../nodes/account/escalation-desk';
import type { StoredBook } from '../../nodes/account/escalation';
import type { EscalationState } from '../../nodes/account/escalation-store';

describe('escalation desk: close', function () {
  it('resolves only after a background write (a texted number) has landed', async () => {
    const landed: StoredBook[] = [];
    const slow: EscalationState = {
      where: 'slow',
      read: async () => undefined,
      write: (book) => new Promise((r) => setTimeout(() => r(void landed.push(book)), 50)),
    };
    const desk = new EscalationDesk(slow);
    await desk.ready;
    const policy = {
      steps: [{ numbers: ['420777100001'], wait: 60 }],
      repeat: 1,
      text: '',
      ackWords: ['OK'],
      sender_id: 'gSystem',
      sender_id_value: '',
    };
    const incident = await desk.raise('n1', 'door', policy, { payload: 'Door' });
    assert.ok(incident);
    const before = landed.length;
    desk.texted(incident.key, '420777100001');
    await desk.close();
    assert.equal(landed.length, before + 1, 'the background write landed before close resolved');
  });
});
