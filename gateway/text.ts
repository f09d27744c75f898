/**
 * How the gateway counts a text: the one module that runtime, editor and simulator share.
 *
 * The limits are the reference's: 612 characters, or 268 with Unicode on. In GSM-7 a character
 * of the extension table (€ [ ] { } | ^ ~ \ and form feed) takes an escape plus the character,
 * so it counts twice. In Unicode (UCS-2) a character outside the Basic Multilingual Plane (most
 * emoji) takes two code units and counts twice as well.
 */
import { SegmentedMessage } from 'sms-segments-calculator';

export const TEXT_LIMIT_GSM7 = 612;
export const TEXT_LIMIT_UNICODE = 268;
/** Fraction of the limit above which the editor warns that the text is getting long. */
export const TEXT_WARNING_RATIO = 0.9;

export type UnicodeMode = 'auto' | 'on' | 'off';

export interface TextMeasure {
  /** Characters as the gateway counts them against the limit. */
  characters: number;
  encoding: 'GSM-7' | 'UCS-2';
  /** SMS parts the text is split into on the network. */
  parts: number;
  /** The limit that applies with this encoding. */
  limit: number;
  /** Characters of the text that are not in the GSM 03.38 alphabet or its extension table. */
  nonGsm: string[];
}

// Plain printable ASCII minus the few characters GSM-7 lacks or keeps in its extension table.
// Most texts are made of these only; they skip the grapheme segmentation of the library.
const BASIC_GSM7 = /^[A-Za-z0-9 \n\r!"#$%&'()*+,\-./:;<=>?@_]*$/;

/** Whether the text needs Unicode, i.e. holds a character outside GSM 03.38 and its extension. */
export function needsUnicode(text: string): boolean {
  if (BASIC_GSM7.test(text)) return false;
  return new SegmentedMessage(text, 'auto').encodingName === 'UCS-2';
}

/** Resolves a unicode setting (`auto`, `on`, `off`, or a boolean) against the texts it covers. */
export function resolveUnicode(mode: UnicodeMode | boolean | undefined, texts: Iterable<string>): boolean {
  if (mode === true || mode === 'on') return true;
  if (mode === false || mode === 'off') return false;
  for (const text of texts) if (needsUnicode(text)) return true;
  return false;
}

/**
 * Measures a text as it would be sent. With `unicode` false a text that holds non-GSM
 * characters is still counted as GSM-7 (the gateway replaces what it cannot encode), one each.
 */
export function measureText(text: string, unicode: boolean): TextMeasure {
  if (!unicode && BASIC_GSM7.test(text)) {
    const characters = text.length;
    return { characters, encoding: 'GSM-7', parts: gsm7Parts(characters), limit: TEXT_LIMIT_GSM7, nonGsm: [] };
  }
  const auto = new SegmentedMessage(text, 'auto');
  const nonGsm = auto.encodingName === 'UCS-2' ? auto.getNonGsmCharacters() : [];
  if (unicode) {
    const ucs2 = new SegmentedMessage(text, 'UCS-2');
    const characters = ucs2.messageSize / 16;
    return { characters, encoding: 'UCS-2', parts: ucs2Parts(characters), limit: TEXT_LIMIT_UNICODE, nonGsm };
  }
  // GSM-7 forced: characters that GSM-7 cannot carry count once each.
  const characters = auto.encodingName === 'GSM-7' ? auto.messageSize / 7 : gsm7Septets(text, new Set(nonGsm));
  return { characters, encoding: 'GSM-7', parts: gsm7Parts(characters), limit: TEXT_LIMIT_GSM7, nonGsm };
}

function gsm7Septets(text: string, nonGsm: Set<string>): number {
  let replaced = text;
  for (const c of nonGsm) replaced = replaced.split(c).join('?');
  return new SegmentedMessage(replaced, 'GSM-7').messageSize / 7;
}

function gsm7Parts(characters: number): number {
  if (characters === 0) return 0;
  return characters <= 160 ? 1 : Math.ceil(characters / 153);
}

function ucs2Parts(characters: number): number {
  if (characters === 0) return 0;
  return characters <= 70 ? 1 : Math.ceil(characters / 67);
}

/** The sentence a failed length check reports, naming the field. */
export function textLimitMessage(field: string, measure: TextMeasure): string {
  return `${field} is ${measure.characters} characters; the limit is ${TEXT_LIMIT_GSM7} (${TEXT_LIMIT_UNICODE} with Unicode)`;
}
