/** Delivery reports and incoming messages a webhook gets (the gateway's webhook documentation). */
import { isPlainObject } from './prepared';

const EVENT_STATUS: Readonly<Record<number, string>> = {
  1: 'delivered',
  2: 'buffered',
  3: 'not_delivered',
  10: 'incoming',
  13: 'seen',
};

export const INCOMING = 10;

export interface EventPayload {
  status: string;
  statusCode: number;
  smsID?: string;
  to?: string;
  from?: string;
  message?: string;
  price?: number | string;
  channel?: string;
  date?: string;
  [key: string]: unknown;
}

export function readEvent(raw: unknown): EventPayload | undefined {
  if (!isPlainObject(raw)) return undefined;
  const code = Number(raw.status);
  if (!Number.isInteger(code)) return undefined;
  const event: Record<string, unknown> = {};
  // Own keys only, copied as data: a report cannot reach a prototype.
  for (const key of Object.keys(raw))
    if (key !== '__proto__' && key !== 'constructor' && key !== 'prototype') event[key] = raw[key];
  return { ...event, status: EVENT_STATUS[code] ?? 'unknown', statusCode: code };
}
