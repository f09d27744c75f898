#!/usr/bin/env node
/** `bulkgate-simulator`: starts the simulated gateway and prints its base URL and demo account. */
import { parseArgs } from 'node:util';
import { DEMO_ACCOUNT, parseAccountFlag } from './accounts';
import { startSimulator } from './server';
import { isWebhookUrl } from './webhook';

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      port: { type: 'string', default: process.env.SIMULATOR_PORT ?? '0' },
      host: { type: 'string', default: '127.0.0.1' },
      account: { type: 'string', multiple: true, default: [] },
      webhook: { type: 'string', multiple: true, default: [] },
      'no-strict': { type: 'boolean', default: false },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) {
    console.log(
      'Usage: bulkgate-simulator [--port N] [--host 127.0.0.1] [--account ID:TOKEN[:CREDIT]]... [--webhook URL]... [--no-strict]',
    );
    return;
  }
  const badWebhook = values.webhook.find((url) => !isWebhookUrl(url));
  if (badWebhook !== undefined) throw new Error(`--webhook must be an http or https URL, got "${badWebhook}"`);
  const port = Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new Error(`--port must be 0 to 65535, got "${values.port}"`);
  const simulator = await startSimulator({
    port,
    host: values.host,
    accounts: values.account.map(parseAccountFlag),
    strict: !values['no-strict'],
    webhook: values.webhook,
  }).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'EADDRINUSE')
      throw new Error(`port ${port} on ${values.host} is already in use; choose another with --port`);
    throw error;
  });
  console.log(`BulkGate simulator listening on ${simulator.url}`);
  console.log(
    `Demo account: application_id ${DEMO_ACCOUNT.id}, application_token ${DEMO_ACCOUNT.token}, credit ${DEMO_ACCOUNT.credit}`,
  );
  const stop = () => {
    simulator.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

main().catch((error: Error) => {
  console.error(`bulkgate-simulator: ${error.message}`);
  process.exit(1);
});
