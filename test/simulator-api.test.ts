/**
 * The simulator takes what the reference says each path takes: a JSON body everywhere, a form body
 * on the simple 1.0 API only (the 2.0 simple transactional path takes the advanced 2.0 body). A form
 * elsewhere is no parameters at all, so a client that sent one is caught here and not at the gateway.
 */
import assert from 'node:assert/strict';
import { ACCOUNT_ID, startTestSimulator, TOKEN, type TestSimulator } from './support/simulator';

describe('the simulator takes a form body on the simple 1.0 API only', () => {
  let sim: TestSimulator;
  before(async () => {
    sim = await startTestSimulator();
  });
  beforeEach(() => sim.reset());
  after(() => sim.close());

  const form = (path: string, fields: Record<string, string>) =>
    fetch(sim.url + path, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ application_id: ACCOUNT_ID, application_token: TOKEN, ...fields }).toString(),
    });
  const message = { number: '420777123456', text: 'Door opened' };

  it('the simple 1.0 API: a form is read, and the message is sent', async () => {
    const res = await form('/api/1.0/simple/transactional', message);
    assert.equal(res.status, 200);
    assert.equal(((await res.json()) as { data: { status: string } }).data.status, 'accepted');
    assert.equal((await sim.outbox()).messages.length, 1);
  });

  for (const path of [
    '/api/1.0/advanced/transactional',
    '/api/2.0/advanced/transactional',
    '/api/2.0/simple/transactional',
    '/api/1.0/advanced/info',
    '/api/1.0/otp/send',
  ]) {
    it(`${path}: a form is refused with 400, and nothing is sent`, async () => {
      const res = await form(path, { ...message, request_quota_identification: '203.0.113.7' });
      assert.equal(res.status, 400);
      const body = (await res.json()) as { type?: string; error?: string };
      assert.match(String(body.type ?? body.error), /^invalid_(parameter|input_parameters)$/);
      assert.equal((await sim.outbox()).messages.length, 0);
    });
  }
});
