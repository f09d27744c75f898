/** The gateway's counting, by a segment library (not the client's code, so its mistakes show). */
import { SegmentedMessage } from 'sms-segments-calculator';

export const LIMIT_GSM7 = 612;
export const LIMIT_UNICODE = 268;
/** Longer texts (UTF-16 units) are not counted (the library is slow on them): "too long" regardless. */
const UNCOUNTED_ABOVE = 4 * LIMIT_GSM7;

const gsmCache = new Map<string, boolean>();
function isGsm(codePoint: string): boolean {
  if (!gsmCache.has(codePoint))
    gsmCache.set(codePoint, new SegmentedMessage(codePoint, 'auto').encodingName === 'GSM-7');
  return gsmCache.get(codePoint) as boolean;
}

const counted = (characters: number, parts: number, unicode: boolean) => ({
  characters,
  parts,
  unicode,
  limit: unicode ? LIMIT_UNICODE : LIMIT_GSM7,
});

/** Counts a text as sent with `unicode` on, off, or (Viber) decided by the text itself. */
export function countText(text: string, unicode: boolean | 'auto') {
  if (text.length > UNCOUNTED_ABOVE) return counted(text.length, Math.ceil(text.length / 67), unicode === true);
  const auto = new SegmentedMessage(text, 'auto');
  if (unicode === true || (unicode === 'auto' && auto.encodingName === 'UCS-2')) {
    const message = new SegmentedMessage(text, 'UCS-2');
    return counted(message.messageSize / 16, text ? message.segmentsCount : 0, true);
  }
  // Unicode off: each code point GSM-7 cannot carry goes as one replacement character, judged
  // alone (the library's own list works on graphemes, which swallow a combining mark).
  const gsm = auto.encodingName === 'UCS-2' ? Array.from(text, (c) => (isGsm(c) ? c : '?')).join('') : text;
  const message = new SegmentedMessage(gsm, 'GSM-7');
  return counted(message.messageSize / 7, gsm ? message.segmentsCount : 0, false);
}
