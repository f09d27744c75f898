// How the gateway counts a text (the simulator uses a library, so the two can disagree). One pass
// against a table: a grapheme library was slower than linear (32,000 combining marks blocked 23 s).
export const TEXT_LIMIT_GSM7 = 612;
export const TEXT_LIMIT_UNICODE = 268;
/** Fraction of the limit above which the editor warns that the text is getting long. */
export const TEXT_WARNING_RATIO = 0.9;
/** Longest text, in UTF-16 units, that is counted at all (twice the limit: room for replacements). */
export const TEXT_COUNT_BOUND = 2 * TEXT_LIMIT_GSM7;

export type UnicodeMode = 'auto' | 'on' | 'off';

export interface TextMeasure {
  characters: number;
  encoding: 'GSM-7' | 'UCS-2';
  parts: number;
  limit: number;
  /** Characters outside GSM 03.38 and its extension table (each once). */
  nonGsm: string[];
}

// GSM 03.38: the basic alphabet (one septet each) and the extension table (escape + one septet).
const GSM7_BASIC =
  '@£$¥èéùìòÇ\nØø\rÅåΔ_ΦΓΛΩΠΨΣΘΞÆæßÉ !"#¤%&\'()*+,-./0123456789:;<=>?' +
  '¡ABCDEFGHIJKLMNOPQRSTUVWXYZÄÖÑÜ§¿abcdefghijklmnopqrstuvwxyzäöñüà';
const GSM7_EXTENSION = '\f^{}\\[~]|€';

const SEPTETS = new Uint8Array(0x10000);
for (const c of GSM7_BASIC) SEPTETS[c.charCodeAt(0)] = 1;
for (const c of GSM7_EXTENSION) SEPTETS[c.charCodeAt(0)] = 2;

export function needsUnicode(text: string): boolean {
  for (let i = 0; i < text.length; i++) if (SEPTETS[text.charCodeAt(i)] === 0) return true;
  return false;
}

export function resolveUnicode(mode: UnicodeMode | boolean | undefined, texts: readonly string[]): boolean {
  if (mode === true || mode === 'on') return true;
  if (mode === false || mode === 'off') return false;
  return texts.some(needsUnicode);
}

/** Without `unicode` a non-GSM character (a surrogate pair too) counts once: the gateway replaces it. */
export function measureText(text: string, unicode: boolean): TextMeasure {
  // Single-part capacity, then per-part capacity once a header takes room (3GPP TS 23.040).
  const single = unicode ? 70 : 160;
  const perPart = unicode ? 67 : 153;
  let characters = 0;
  let parts = 1;
  let inPart = 0;
  let nonGsm: Set<string> | undefined;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    const septets = SEPTETS[code] as number;
    let size: number;
    if (septets) size = unicode ? 1 : septets;
    else {
      const pair = code >= 0xd800 && code <= 0xdbff && i + 1 < text.length;
      (nonGsm ??= new Set()).add(pair ? text.slice(i, i + 2) : (text[i] as string));
      if (pair) i++;
      size = unicode && pair ? 2 : 1;
    }
    characters += size;
    // An escape and its character, or a surrogate pair, never straddle two parts.
    if (inPart + size > perPart) {
      parts++;
      inPart = 0;
    }
    inPart += size;
  }
  if (characters <= single) parts = characters === 0 ? 0 : 1;
  return {
    characters,
    encoding: unicode ? 'UCS-2' : 'GSM-7',
    parts,
    limit: unicode ? TEXT_LIMIT_UNICODE : TEXT_LIMIT_GSM7,
    nonGsm: nonGsm ? [...nonGsm] : [],
  };
}
