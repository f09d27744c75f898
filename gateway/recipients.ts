/** Recipient numbers and schedules as a user gives them, turned into what the gateway takes. */
import { isAbsent } from './prepared';

export function normalizeNumber(raw: string | number): string {
  const digits = String(raw).replace(/[\s\-.()[\]/]/g, '');
  if (digits.startsWith('+')) return digits.slice(1);
  if (digits.startsWith('00')) return digits.slice(2);
  return digits;
}

/** A number as the gateway takes it, once normalized: 3 to 20 digits (the schemas' one rule). */
export const PHONE_DIGITS = '^[0-9]{3,20}$';

/** No `g` flag, so `test` keeps no state between numbers. */
const PHONE = new RegExp(PHONE_DIGITS);

export function isPhoneNumber(raw: string | number): boolean {
  return phoneNumber(raw) !== undefined;
}

/** The number as the gateway takes it, or undefined when it cannot be one. */
export function phoneNumber(raw: string | number): string | undefined {
  const number = normalizeNumber(raw);
  return PHONE.test(number) ? number : undefined;
}

export function splitNumbers(text: string): string[] {
  const numbers: string[] = [];
  for (const part of text.split(/[;,]/)) {
    const number = part.trim();
    if (number !== '') numbers.push(number);
  }
  return numbers;
}

const LAST_DATE_MS = 8.64e15;

/** A wire schedule (unix seconds or ISO 8601) in ms since the epoch. */
export function scheduleMs(schedule: unknown): number | undefined {
  if (isAbsent(schedule)) return undefined;
  const text = String(schedule);
  const ms = /^\d+$/.test(text) ? Number(text) * 1000 : Date.parse(text);
  return Number.isFinite(ms) ? ms : undefined;
}

/** A schedule as the reference shows it: unix seconds, or ISO 8601 as written (its offset kept). */
export function normalizeSchedule(value: unknown): string | undefined {
  if (value instanceof Date) {
    const ms = value.getTime();
    // Before 1970 there is no unix timestamp to send.
    return Number.isFinite(ms) && ms >= 0 ? String(Math.floor(ms / 1000)) : undefined;
  }
  if (typeof value === 'number') {
    if (!Number.isFinite(value) || value < 0) return undefined;
    // Seconds reach 1e12 only in the year 33658; anything that large is milliseconds.
    const seconds = Math.floor(value >= 1e12 ? value / 1000 : value);
    // Past the last instant a Date can hold, String() would write an exponent ("1e+297"): no timestamp.
    return seconds * 1000 <= LAST_DATE_MS ? String(seconds) : undefined;
  }
  if (typeof value === 'string') {
    const trimmed = value.trim();
    if (/^\d+$/.test(trimmed)) return normalizeSchedule(Number(trimmed));
    if (
      /^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?$/.test(trimmed) &&
      !Number.isNaN(Date.parse(trimmed))
    ) {
      return trimmed;
    }
  }
  return undefined;
}
