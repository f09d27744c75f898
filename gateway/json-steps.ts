/**
 * JSON.parse and JSON.stringify of a long list in steps (steps.ts): the answer to 10,000 numbers is
 * about 1 MB, parsed whole in 10 ms (its outbox line written in 7), and three at once held every
 * other flow for their sum. The result, or the refusal, is the one JSON.parse or JSON.stringify gives.
 */
import { LIST_STEP, type Steps } from './steps';

/** A text longer than this is parsed in steps: JSON.parse reads it in about half a ms. */
export const LONG_JSON = 64 * 1024;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;

/** JSON's four white-space characters (JSON.parse takes no other). */
const isSpace = (c: number) => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;

/** `JSON.parse(text)`; a text over LONG_JSON a piece of about LONG_JSON characters a step. */
export function* parseInSteps(text: string): Steps<unknown> {
  if (text.length <= LONG_JSON) return JSON.parse(text) as unknown;
  const reader = new Reader(text);
  try {
    const value = yield* reader.value();
    reader.space();
    if (reader.at === text.length) return value;
  } catch {
    // Refused below: JSON.parse says why.
  }
  return JSON.parse(text) as unknown;
}

/**
 * Reads a value: an object or an array longer than LONG_JSON opened, anything shorter given to
 * JSON.parse whole; an array's short items a run of about LONG_JSON characters at once.
 */
class Reader {
  at = 0;
  #read = 0;

  constructor(private readonly text: string) {}

  space(): void {
    const text = this.text;
    while (isSpace(text.charCodeAt(this.at))) this.at++;
  }

  *value(): Steps<unknown> {
    this.space();
    const from = this.at;
    const c = this.text.charCodeAt(from);
    const end = this.#end(from);
    if (end >= 0) return yield* this.#whole(from, end);
    return c === OPEN_OBJECT ? yield* this.#object() : yield* this.#array();
  }

  /** Where the value at `from` ends; -1 for an object or array longer than LONG_JSON (or unended). */
  #end(from: number): number {
    const text = this.text;
    const c = text.charCodeAt(from);
    if (c === QUOTE) return stringEnd(text, from);
    if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
      const stop = Math.min(text.length, from + LONG_JSON);
      let depth = 0;
      for (let i = from; i < stop; i++) {
        const d = text.charCodeAt(i);
        if (d === QUOTE) i = stringEnd(text, i) - 1;
        else if (d === OPEN_OBJECT || d === OPEN_ARRAY) depth++;
        else if ((d === CLOSE_OBJECT || d === CLOSE_ARRAY) && --depth === 0) return i + 1;
      }
      return -1;
    }
    // A number or a literal: JSON.parse judges it.
    let i = from;
    for (; i < text.length; i++) {
      const d = text.charCodeAt(i);
      if (d === COMMA || d === CLOSE_ARRAY || d === CLOSE_OBJECT || isSpace(d)) break;
    }
    if (i === from) throw new SyntaxError('a value is missing');
    return i;
  }

  *#whole(from: number, end: number): Steps<unknown> {
    const value = JSON.parse(this.text.slice(from, end)) as unknown;
    this.at = end;
    yield* this.#paced(end - from);
    return value;
  }

  /** A yield once about LONG_JSON characters were read since the last one. */
  *#paced(characters: number): Steps<void> {
    this.#read += characters;
    if (this.#read < LONG_JSON) return;
    this.#read = 0;
    yield;
  }

  *#object(): Steps<Record<string, unknown>> {
    const text = this.text;
    const object: Record<string, unknown> = {};
    this.at++;
    this.space();
    if (text.charCodeAt(this.at) === CLOSE_OBJECT) {
      this.at++;
      return object;
    }
    for (;;) {
      this.space();
      if (text.charCodeAt(this.at) !== QUOTE) throw new SyntaxError('a key is missing');
      const keyEnd = stringEnd(text, this.at);
      const key = JSON.parse(text.slice(this.at, keyEnd)) as string;
      this.at = keyEnd;
      this.space();
      if (text.charCodeAt(this.at++) !== COLON) throw new SyntaxError('a colon is missing');
      const value = yield* this.value();
      // As JSON.parse: a key `__proto__` is the object's own, not its prototype.
      if (key === '__proto__')
        Object.defineProperty(object, key, { value, writable: true, enumerable: true, configurable: true });
      else object[key] = value;
      this.space();
      const next = text.charCodeAt(this.at++);
      if (next === CLOSE_OBJECT) return object;
      if (next !== COMMA) throw new SyntaxError('a comma is missing');
    }
  }

  *#array(): Steps<unknown[]> {
    const text = this.text;
    const array: unknown[] = [];
    this.at++;
    this.space();
    if (text.charCodeAt(this.at) === CLOSE_ARRAY) {
      this.at++;
      return array;
    }
    // The items read but not yet parsed: the text from `runFrom` to `runTo`, parsed as one array.
    let runFrom = -1;
    let runTo = -1;
    const parseRun = function* (this: Reader): Steps<void> {
      if (runFrom < 0) return;
      for (const item of JSON.parse(`[${text.slice(runFrom, runTo)}]`) as unknown[]) array.push(item);
      yield* this.#paced(runTo - runFrom);
      runFrom = -1;
    };
    for (;;) {
      this.space();
      const from = this.at;
      const end = this.#end(from);
      if (end < 0) {
        yield* parseRun.call(this);
        array.push(yield* this.value());
      } else {
        if (runFrom < 0) runFrom = from;
        runTo = end;
        this.at = end;
      }
      this.space();
      const next = text.charCodeAt(this.at++);
      if (next === CLOSE_ARRAY) {
        yield* parseRun.call(this);
        return array;
      }
      if (next !== COMMA) throw new SyntaxError('a comma is missing');
      if (runFrom >= 0 && runTo - runFrom >= LONG_JSON) yield* parseRun.call(this);
    }
  }
}

/** Just past the closing quote of the string that starts at `from`. */
function stringEnd(text: string, from: number): number {
  for (let i = from + 1; ;) {
    const quote = text.indexOf('"', i);
    if (quote < 0) throw new SyntaxError('a string is not closed');
    let escapes = 0;
    while (text.charCodeAt(quote - 1 - escapes) === BACKSLASH) escapes++;
    if (escapes % 2 === 0) return quote + 1;
    i = quote + 1;
  }
}

type Replacer = (this: unknown, key: string, value: unknown) => unknown;

/**
 * Whether `value` holds an array longer than LIST_STEP, in itself or an object's field (to `depth`
 * objects down; items of arrays are not searched): what is worth writing in steps.
 */
export function holdsLongList(value: unknown, depth = 4): boolean {
  if (Array.isArray(value)) return value.length > LIST_STEP;
  if (typeof value !== 'object' || value === null || depth === 0) return false;
  for (const key in value)
    if (Object.hasOwn(value, key) && holdsLongList((value as Record<string, unknown>)[key], depth - 1)) return true;
  return false;
}

/**
 * `JSON.stringify(value, replacer)`, the same characters, an array longer than LIST_STEP written LIST_STEP items a
 * step. The objects around a long array are written field by field (each as JSON.stringify writes it, toJSON and the
 * replacer called with its holder and key as there); anything else is given to JSON.stringify whole.
 */
export function* stringifyInSteps(value: unknown, replacer?: Replacer): Steps<string | undefined> {
  return yield* new Writer(replacer).property({ '': value }, '', value);
}

class Writer {
  /** The objects and arrays being written, outermost first: one met again is a circle. */
  readonly #open = new Set<object>();
  #written = 0;

  constructor(private readonly replacer: Replacer | undefined) {}

  /** SerializeJSONProperty: `holder[key]`, whose value is `raw`. */
  *property(holder: object, key: string, raw: unknown): Steps<string | undefined> {
    let value = raw;
    if ((typeof value === 'object' && value !== null) || typeof value === 'bigint') {
      const toJSON = (value as { toJSON?: unknown }).toJSON;
      if (typeof toJSON === 'function') value = (toJSON as (key: string) => unknown).call(value, key);
    }
    if (this.replacer) value = this.replacer.call(holder, key, value);
    if (typeof value !== 'object' || value === null) return JSON.stringify(value);
    if (value instanceof Number || value instanceof String || value instanceof Boolean || value instanceof BigInt)
      return JSON.stringify(value.valueOf());
    // toJSON was called for this place: JSON.stringify would call a toJSON the result has again.
    const whole = typeof (value as { toJSON?: unknown }).toJSON !== 'function' && !holdsLongList(value, 1);
    if (whole && (Array.isArray(value) || !holdsObjects(value))) return JSON.stringify(value, this.#below());
    if (this.#open.has(value)) throw new TypeError('Converting circular structure to JSON');
    this.#open.add(value);
    const written = Array.isArray(value) ? yield* this.#array(value) : yield* this.#object(value);
    this.#open.delete(value);
    return written;
  }

  /** The replacer for a value given to JSON.stringify whole: its own place was replaced already. */
  #below(): Replacer | undefined {
    const replacer = this.replacer;
    if (!replacer) return undefined;
    let first = true;
    return function (this: unknown, key, value) {
      if (!first) return replacer.call(this, key, value);
      first = false;
      return value;
    };
  }

  *#paced(): Steps<void> {
    if (++this.#written % LIST_STEP === 0) yield;
  }

  *#array(array: unknown[]): Steps<string> {
    const items: string[] = [];
    for (let i = 0; i < array.length; i++) {
      items.push((yield* this.property(array, String(i), array[i])) ?? 'null');
      yield* this.#paced();
    }
    return `[${items.join(',')}]`;
  }

  *#object(object: object): Steps<string> {
    const fields: string[] = [];
    for (const key of Object.keys(object)) {
      const field = yield* this.property(object, key, (object as Record<string, unknown>)[key]);
      if (field !== undefined) fields.push(`${JSON.stringify(key)}:${field}`);
      yield* this.#paced();
    }
    return `{${fields.join(',')}}`;
  }
}

/** Whether an object has an object among its fields (one that might hold a long list below). */
function holdsObjects(value: object): boolean {
  return Object.values(value).some((field) => typeof field === 'object' && field !== null);
}
