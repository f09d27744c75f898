/** The gateway client, usable without Node-RED. */
export * from './abort';
export * from './base-url';
export * from './channels';
export * from './circuit';
export * from './client';
export * from './endpoints';
export * from './errors';
export * from './events';
export * from './operations';
export * from './recipients';
export * from './request';
export * from './resend';
export * from './retry-policy';
export { bodyFields, schemaKey } from './schemas';
export * from './senders';
export * from './text';
