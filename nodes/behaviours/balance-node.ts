/** The `bulkgate-balance` node: reads the credit; port 2 fires when it is below the threshold. */
import type { Node, NodeAPI, NodeDef } from 'node-red';
import type { ApiFamily, HttpMethod } from '../../gateway';
import { answerInputs, NO_ACCOUNT, nodeCatalog, StatusThrottle } from '../plumbing/runtime';
import { accountOf } from './deployed-account';
import { nodeInvalid } from '../plumbing/wording';

export function balanceNode(RED: NodeAPI) {
  const texts = nodeCatalog(RED, 'bulkgate-balance');
  return function BulkgateBalance(
    this: Node,
    config: NodeDef & { account?: string; api?: string; method?: string; threshold?: number | string },
  ) {
    RED.nodes.createNode(this, config);
    const node = this;
    const account = accountOf(RED, config.account);
    const api: ApiFamily = config.api === 'simple' ? 'simple' : 'advanced';
    const method: HttpMethod = api === 'simple' && config.method === 'GET' ? 'GET' : 'POST';
    const threshold = config.threshold === undefined || config.threshold === '' ? undefined : Number(config.threshold);
    const stop = new AbortController();
    const status = new StatusThrottle(node);

    answerInputs(node, texts, status, stop, async (msg, send, done) => {
      if (!account) throw NO_ACCOUNT();
      if (threshold !== undefined && !Number.isFinite(threshold))
        throw nodeInvalid('threshold-not-number', { value: String(config.threshold) });
      status.show(() => ({ fill: 'blue', shape: 'dot', text: texts('status.reading') }));
      const balance = await account
        .gateway()
        .info({ api, method, encoding: method === 'GET' ? 'query' : 'json', signal: stop.signal });
      msg.payload = balance;
      const low = threshold !== undefined && balance.credit < threshold;
      status.show(() => ({
        fill: low ? 'yellow' : 'green',
        shape: 'dot',
        text: texts(low ? 'status.credit-low' : 'status.credit', {
          credit: balance.credit,
          currency: balance.currency,
        }),
      }));
      send([msg, low ? RED.util.cloneMessage(msg) : null]);
      done();
    });
  };
}
