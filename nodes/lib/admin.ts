/**
 * The editor's "test connection" button: reads the balance through the runtime, so the browser
 * never needs the stored token. Protected by Node-RED's admin auth and permissions.
 */
import type { NodeAPI } from 'node-red';
import type { Request, Response } from 'express';
import { GatewayClient, GatewayError } from '../../gateway';
import { numberSetting, type AccountCredentials } from './account';

/** Admin apps the endpoint is on already (a runtime loads the account's module once; tests, often). */
const registered = new WeakSet<object>();

export function registerAdminEndpoints(RED: NodeAPI): void {
  if (registered.has(RED.httpAdmin)) return;
  registered.add(RED.httpAdmin);
  RED.httpAdmin.post('/bulkgate/test-connection', RED.auth.needsPermission('bulkgate-account.write'), (req: Request, res: Response) => {
    void testConnection(RED, req.body ?? {}).then(
      (answer) => res.json(answer),
      () => res.status(500).json({ ok: false, type: 'unknown', message: 'The test could not run' }),
    );
  });
}

interface TestRequest {
  id?: string;
  baseUrl?: string;
  timeout?: number | string;
  application_id?: string;
  application_token?: string;
}

async function testConnection(RED: NodeAPI, input: TestRequest): Promise<Record<string, unknown>> {
  // A field left empty in the panel means "as deployed": the stored credential is used here only.
  const stored = (input.id ? RED.nodes.getCredentials(input.id) : undefined) as AccountCredentials | undefined;
  const applicationId = input.application_id || stored?.application_id || '';
  const applicationToken = input.application_token && input.application_token !== '__PWRD__' ? input.application_token : stored?.application_token ?? '';
  let client: GatewayClient | undefined;
  try {
    client = new GatewayClient({
      baseUrl: input.baseUrl || undefined,
      applicationId,
      applicationToken,
      timeout: numberSetting(input.timeout, 15_000, 1),
      retries: 0,
    });
    const balance = await client.info();
    return { ok: true, credit: balance.credit, currency: balance.currency };
  } catch (error) {
    const e = error instanceof GatewayError ? error : new GatewayError({ type: 'unknown', message: 'The test failed' });
    return { ok: false, type: e.code, message: e.message };
  } finally {
    await client?.close(0);
  }
}
