import { sendOperation, type GatewayClient, type SendFields } from '../../gateway';

/** A send request checked and serialised as the nodes prepare one: the operation decided, then the fields. */
export function prepare(
  client: GatewayClient,
  kind: 'promotional' | 'transactional',
  fields: SendFields,
  options?: Parameters<typeof sendOperation>[1],
) {
  return client.prepareOperation(sendOperation(kind, options), fields);
}
