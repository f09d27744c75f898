/** The gateway client, usable without Node-RED: what the nodes (and a program of its own) take from it. */

export { GatewayClient } from './client';
export type {
  BalanceRecord,
  GatewayClientOptions,
  GiveUp,
  PromotionalResult,
  SendOptions,
  SendPolicy,
  SendRecord,
  TransactionalResult,
} from './client';
export { DEFAULT_BASE_URL, DEFAULT_RETRIES, DEFAULT_TIMEOUT } from './defaults';
export { baseUrlProblem, baseUrlWording } from './base-url';
export { bypassesProxy, DEFAULT_CONNECTIONS, type ProxySettings } from './transport';

export { after, MAX_TIMER_MS, monotonicAt, monotonicNow, timerDelay } from './clock';
export { onStop, settledWithin } from './abort';
export { withdrawnError, isWithdrawn } from './withdrawn';

export { briefOf, GatewayError, invalidRequest, typeWording } from './errors';

export {
  bodyShape,
  sendOperation,
  VERSIONS,
  type ApiFamily,
  type ApiVersion,
  type EndpointName,
  type HttpMethod,
  type Operation,
} from './operations';
export { isAbsent, isPlainObject, type PreparedRequest, type RejectedRecipient } from './prepared';
export { SEND_FIELDS, type SendField, type SendFields } from './request';
export { DUPLICATE_WINDOW_MS, resendable, storableBody, storableBodyInSteps } from './resend';
export { bodyFields, schemaKey } from './schemas';

export { isPhoneNumber, normalizeNumber, scheduleMs, splitNumbers } from './recipients';
export { measureText, needsUnicode, TEXT_COUNT_BOUND } from './text';

export { INCOMING, readEvent, type EventPayload } from './events';
