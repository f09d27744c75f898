/**
 * How the simulated gateway counts a text, independently of the client's `gateway/text.ts`: with
 * a segment library (sms-segments-calculator), so that a counting mistake in the client shows up
 * as a disagreement with the simulator. The library is slow on long texts, so the simulator
 * refuses anything far over the limit before it counts.
 */
import { SegmentedMessage } from 'sms-segments-calculator';

export const LIMIT_GSM7 = 612;
export const LIMIT_UNICODE = 268;
/** Texts longer than this (UTF-16 units) are not counted: the answer is "too long" regardless. */
const UNCOUNTED_ABOVE = 4 * LIMIT_GSM7;

export interface SimulatedCount {
  characters: number;
  parts: number;
  unicode: boolean;
  limit: number;
}

/** Counts a text as sent with `unicode` on, off, or (Viber) decided by the text itself. */
export function countText(text: string, unicode: boolean | 'auto'): SimulatedCount {
  if (text.length > UNCOUNTED_ABOVE) return { characters: text.length, parts: Math.ceil(text.length / 67), unicode: unicode === true, limit: unicode === true ? LIMIT_UNICODE : LIMIT_GSM7 };
  const auto = new SegmentedMessage(text, 'auto');
  const ucs2 = unicode === true || (unicode === 'auto' && auto.encodingName === 'UCS-2');
  if (ucs2) {
    const message = new SegmentedMessage(text, 'UCS-2');
    return { characters: message.messageSize / 16, parts: text ? message.segmentsCount : 0, unicode: true, limit: LIMIT_UNICODE };
  }
  // Unicode off: the gateway sends each character GSM-7 cannot carry as one replacement character.
  let gsm = text;
  if (auto.encodingName === 'UCS-2') for (const c of auto.getNonGsmCharacters()) gsm = gsm.split(c).join('?');
  const message = new SegmentedMessage(gsm, 'GSM-7');
  return { characters: message.messageSize / 7, parts: gsm ? message.segmentsCount : 0, unicode: false, limit: LIMIT_GSM7 };
}
