/** A send request's fields (the reference's names) into an operation's wire body, normalised and checked. */
import { CHANNELS } from './channels';
import { bodyShape, operationPath, operationProblem, type Operation } from './operations';
import {
  credentialsBody,
  impossibleNumber,
  isAbsent,
  isPlainObject,
  type AccountIdentity,
  type PreparedRequest,
  type RejectedRecipient,
} from './prepared';
import { invalidRequest, type GatewayError } from './errors';
import { wording } from './wording';
import { isPhoneNumber, normalizeNumber, normalizeSchedule, phoneNumber, scheduleMs, splitNumbers } from './recipients';
import { schemaKey } from './schemas';
import { atOnce, eachInSteps, inTurns, LIST_STEP, type Steps } from './steps';
import { isValidBody, validateBody } from './validate';
import { PROFILE_ID_CHOICE } from './senders';
import {
  measureText,
  needsUnicode,
  resolveUnicode,
  TEXT_COUNT_BOUND,
  TEXT_LIMIT_GSM7,
  TEXT_LIMIT_UNICODE,
  type UnicodeMode,
} from './text';

/** The request fields a node or `msg.payload` may set, in the reference's names and order. */
export const SEND_FIELDS = [
  'number',
  'groups',
  'admins',
  'admin',
  'text',
  'variables',
  'channel',
  'unicode',
  'flash',
  'sender_id',
  'sender_id_value',
  'country',
  'schedule',
  'duplicates_check',
] as const;
export type SendField = (typeof SEND_FIELDS)[number];
export type SendFields = Partial<Record<SendField, unknown>>;

function parseBoolean(field: string, value: unknown): boolean {
  if (value === true || value === 1 || value === 'true' || value === 'yes' || value === '1' || value === 'on')
    return true;
  if (value === false || value === 0 || value === 'false' || value === 'no' || value === '0' || value === 'off')
    return false;
  throw invalidRequest(wording('not-boolean', { field }));
}

function parseUnicode(field: string, value: unknown): UnicodeMode {
  if (isAbsent(value) || value === 'auto') return 'auto';
  return parseBoolean(field, value) ? 'on' : 'off';
}

function parseText(field: string, value: unknown): string | undefined {
  if (isAbsent(value)) return undefined;
  const text =
    typeof value === 'string' ? value : typeof value === 'number' && Number.isFinite(value) ? String(value) : undefined;
  if (text === undefined) throw invalidRequest(wording('not-string', { field }));
  // Refused before anything counts it: no text that cannot fit costs more than this comparison.
  if (text.length > TEXT_COUNT_BOUND) throw textTooLong(field, { characters: text.length });
  return text;
}

function parseIds(value: unknown): unknown {
  if (isAbsent(value)) return undefined;
  const list =
    typeof value === 'string' ? value.split(/[;,\s]+/).filter(Boolean) : Array.isArray(value) ? value : [value];
  if (list.length === 0) return undefined;
  return list.map((id) => (typeof id === 'string' && /^\d+$/.test(id.trim()) ? Number(id.trim()) : id));
}

const digitsAsNumber = (value: unknown): unknown =>
  typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : value;

/** The sender as the wire takes it: the editor's profile-id choice resolved, an id an integer. */
function wireSender(senderId: unknown, value: unknown): { id: unknown; value: unknown } {
  let id = senderId;
  if (senderId === PROFILE_ID_CHOICE) {
    id = (typeof value === 'string' && /^\d+$/.test(value.trim()) ? Number(value) : value) ?? senderId;
    value = undefined;
  }
  return {
    id: isAbsent(id) ? undefined : digitsAsNumber(id),
    value: typeof value === 'number' ? String(value) : value,
  };
}

/** Sets `key`, or deletes it when `value` is undefined (an existing key keeps its place). */
export function setOrDelete(obj: Record<string, unknown>, key: string, value: unknown): void {
  if (value === undefined) delete obj[key];
  else obj[key] = value;
}

interface Recipients {
  wire: unknown;
  entries: { variables?: Record<string, unknown>; text?: string }[];
  rejected: RejectedRecipient[];
}

function* promotionalRecipients(value: unknown, simple: boolean): Steps<Recipients | undefined> {
  if (isAbsent(value)) return undefined;
  const list: unknown[] = typeof value === 'string' ? splitNumbers(value) : Array.isArray(value) ? value : [value];
  const wire: unknown[] = [];
  const entries: Recipients['entries'] = [];
  const rejected: RejectedRecipient[] = [];
  // A recipient whose number cannot be one is answered here; the others still go.
  const impossible = (given: string | number) => {
    if (isPhoneNumber(given)) return false;
    rejected.push(impossibleNumber(wire.length + rejected.length, given));
    return true;
  };
  yield* eachInSteps(list, (item, i) => {
    if (typeof item === 'string' || typeof item === 'number') {
      if (isAbsent(item) || impossible(item)) return;
      wire.push(normalizeNumber(item));
      entries.push({});
      return;
    }
    if (!isPlainObject(item)) throw invalidRequest(wording('not-recipient', { field: `number[${i}]` }));
    // The reference: an entry without a number is skipped.
    if (isAbsent(item.number)) return;
    if (typeof item.number !== 'string' && typeof item.number !== 'number')
      throw invalidRequest(wording('not-phone', { field: `number[${i}].number` }));
    if (impossible(item.number)) return;
    const entry: Record<string, unknown> = {};
    // Own keys only, so `__proto__` in a msg is just a key.
    for (const [key, v] of Object.entries(item)) {
      if (key === 'number') entry.number = normalizeNumber(item.number);
      else if (key === 'text') setOrDelete(entry, 'text', parseText(`number[${i}].text`, v));
      else if (key === 'variables') setOrDelete(entry, 'variables', isAbsent(v) ? undefined : v);
      else throw invalidRequest(wording('not-recipient-field', { field: `number[${i}].${key}` }));
    }
    if (simple && (entry.text !== undefined || entry.variables !== undefined)) {
      throw invalidRequest(wording('recipient-text-advanced', { field: `number[${i}]` }));
    }
    wire.push(simple ? entry.number : entry);
    entries.push({
      text: entry.text as string | undefined,
      variables: isPlainObject(entry.variables) ? entry.variables : undefined,
    });
  });
  if (wire.length === 0 && rejected.length === 0) return undefined;
  return { wire: simple ? wire.join(';') : wire, entries, rejected };
}

function transactionalNumber(value: unknown): string | number | undefined {
  if (isAbsent(value)) return undefined;
  const list: unknown[] =
    typeof value === 'string'
      ? splitNumbers(value)
      : (Array.isArray(value) ? value : [value]).filter((n: unknown) => !isAbsent(n));
  if (list.length > 1) throw invalidRequest(wording('one-number', { numbers: list.length }));
  const only = list[0];
  if (only === undefined) return undefined;
  if (typeof only !== 'string' && typeof only !== 'number')
    throw invalidRequest(wording('not-phone', { field: 'number' }));
  return only;
}

type Body = Record<string, unknown>;
type Channel = Record<string, Record<string, unknown>>;

const isChannel = (name: unknown): name is string => (CHANNELS as readonly unknown[]).includes(name);

function cascade(value: unknown): Channel | undefined {
  if (isAbsent(value)) return undefined;
  const out: Channel = {};
  // The editor stores the cascade as an ordered list [{type, ...}]; the wire takes an ordered object.
  if (Array.isArray(value)) {
    value.forEach((item, i) => {
      if (!isPlainObject(item) || !isChannel(item.type)) {
        throw invalidRequest(wording('not-channel-entry', { field: `channel[${i}]`, channels: CHANNELS.join(', ') }));
      }
      if (item.type in out) throw invalidRequest(wording('channel-twice', { channel: item.type }));
      const { type, ...settings } = item;
      out[type as string] = settings;
    });
    return out;
  }
  if (!isPlainObject(value)) throw invalidRequest(wording('not-channel-object', { channels: CHANNELS.join(', ') }));
  for (const [name, settings] of Object.entries(value)) {
    // Checked before use as a key: "__proto__" must never reach an assignment.
    if (!isChannel(name))
      throw invalidRequest(wording('not-a-channel', { field: `channel.${name}`, channels: CHANNELS.join(', ') }));
    if (!isPlainObject(settings)) throw invalidRequest(wording('not-object', { field: `channel.${name}` }));
    out[name] = { ...settings };
  }
  return out;
}

function cleanChannel(channel: Channel): void {
  for (const [name, settings] of Object.entries(channel)) {
    for (const [key, v] of Object.entries(settings)) if (isAbsent(v)) delete settings[key];
    if (typeof settings.text === 'number') settings.text = String(settings.text);
    if (typeof settings.expiration === 'string') settings.expiration = digitsAsNumber(settings.expiration);
    if (name === 'viber' && isPlainObject(settings.button)) {
      if (isAbsent(settings.button.caption) && isAbsent(settings.button.url)) delete settings.button;
      else settings.button = { ...settings.button };
    }
    if (name === 'sms') {
      const sender = wireSender(settings.sender_id, settings.sender_id_value);
      setOrDelete(settings, 'sender_id', sender.id);
      setOrDelete(settings, 'sender_id_value', sender.value);
      if ('unicode' in settings) {
        const mode = parseUnicode('channel.sms.unicode', settings.unicode);
        setOrDelete(settings, 'unicode', mode === 'auto' ? undefined : mode === 'on');
      }
    }
  }
}

/** A cascade as the editor or a msg gives it (an ordered list or object), as the wire's ordered object. */
export function wireCascade(value: unknown): Channel | undefined {
  const channel = cascade(value);
  if (channel) cleanChannel(channel);
  return channel;
}

const PLACEHOLDER = /<([A-Za-z0-9_]+)>/g;

function placeholders(text: string | undefined): string[] {
  if (!text || !text.includes('<')) return [];
  return [...text.matchAll(PLACEHOLDER)].map((m) => m[1] as string);
}

interface Shape {
  v2: boolean;
  simple: boolean;
  promotional: boolean;
}

export function prepareSend(operation: Operation, fields: SendFields, account: AccountIdentity): PreparedRequest {
  return atOnce(preparing(operation, fields, account));
}

/**
 * `prepareSend`, with a list longer than LIST_STEP checked and written in steps a turn of the
 * event loop apart; a shorter one at once, as `prepareSend` (no turn).
 */
export async function prepareSendInSteps(
  operation: Operation,
  fields: SendFields,
  account: AccountIdentity,
): Promise<PreparedRequest> {
  return inTurns(preparing(operation, fields, account));
}

function* preparing(operation: Operation, fields: SendFields, account: AccountIdentity): Steps<PreparedRequest> {
  checkOperation(operation);
  if (operation.kind === 'info') throw invalidRequest(wording('not-send'));
  const { api, version } = bodyShape(operation);
  const shape: Shape = {
    v2: version === '2.0',
    simple: api === 'simple',
    promotional: operation.kind === 'promotional',
  };

  const f: SendFields = {};
  for (const key of SEND_FIELDS) if (Object.hasOwn(fields, key) && !isAbsent(fields[key])) f[key] = fields[key];

  let channel = channelOf(shape, f);
  const text = parseText('text', f.text);
  const body: Body = credentialsBody(account);
  // A list of recipients is worked in steps (generators); an alert's one number at once, with no generator a msg.
  const { recipients, rejected, transactionalVariables } = shape.promotional
    ? yield* addPromotionalRecipients(shape, f, body)
    : addTransactionalRecipient(shape, f, body);
  if (text !== undefined) body.text = text;
  if (f.variables !== undefined) body.variables = f.variables;

  // Which texts the SMS carries, for the unicode decision and the length checks.
  const smsTexts: { field: string; text: string }[] = [];
  const channelSmsText = parseText('channel.sms.text', channel?.sms?.text);
  if (channelSmsText !== undefined) smsTexts.push({ field: 'channel.sms.text', text: channelSmsText });
  if (text !== undefined) smsTexts.push({ field: 'text', text });
  // Only the recipients with a text of their own: a list of 10,000 plain numbers adds nothing.
  if (recipients)
    for (const [i, e] of recipients.entries.entries())
      if (e.text !== undefined) smsTexts.push({ field: `number[${i}].text`, text: e.text });
  const unicode = resolveUnicode(
    parseUnicode(shape.v2 ? 'channel.sms.unicode' : 'unicode', shape.v2 ? channel?.sms?.unicode : f.unicode),
    smsTexts.map((t) => t.text),
  );
  channel = addSmsSettings(shape, f, body, channel, unicode);
  addDelivery(shape, f, body, account);
  requireText(shape, text, channel, body, recipients);

  const checkSms = ({ field, text: t }: { field: string; text: string }) => checkLength(field, t, unicode);
  if (recipients) yield* eachInSteps(smsTexts, checkSms);
  else smsTexts.forEach(checkSms);
  const viberText = parseText('channel.viber.text', channel?.viber?.text);
  if (viberText !== undefined) checkLength('channel.viber.text', viberText, needsUnicode(viberText));

  // With every number rejected and no group or admin, nothing is sent, but the rest is still checked.
  const nothingToSend =
    rejected.length > 0 &&
    body.number === undefined &&
    body.groups === undefined &&
    body.admins === undefined &&
    body.admin === undefined;
  const placeholder = shape.simple || !shape.promotional ? PLACEHOLDER_NUMBER : [PLACEHOLDER_NUMBER];
  const checked = nothingToSend ? { ...body, number: placeholder } : body;
  const schema = schemaKey(operation.kind, api, version);
  if (recipients) yield* validateInSteps(schema, checked);
  else validateBody(schema, checked);

  const sharedNames = sharedPlaceholders(text, channel);
  const missingVariables = recipients
    ? yield* listMissingVariables(sharedNames, recipients)
    : [...new Set(unfilled(sharedNames, transactionalVariables))];
  const scheduled = scheduleMs(body.schedule);
  // A minute of grace: a schedule of "now" computed a moment ago is not a mistake.
  const pastSchedule =
    scheduled !== undefined && scheduled < Date.now() - 60_000 ? new Date(scheduled).toISOString() : undefined;
  // A group or an admin list entry counts once: the gateway alone knows how many it reaches.
  const listed =
    (Array.isArray(body.groups) ? body.groups.length : 0) + (Array.isArray(body.admins) ? body.admins.length : 0);
  const numbers = recipients?.entries.length ?? (body.number !== undefined || body.admin !== undefined ? 1 : 0);
  const wire = recipients ? yield* serialiseInSteps(operation, body) : serialise(operation, body);
  // Each field named, not spread: a spread in an object literal costs tens of times the named fields to build.
  const prepared: PreparedRequest = {
    operation,
    method: 'POST',
    path: operationPath(operation),
    contentType: wire.contentType,
    payload: wire.payload,
    messages: nothingToSend ? 0 : Math.max(1, numbers + listed),
    duplicatesChecked:
      body.duplicates_check === 'on' ||
      body.duplicates_check === 'same_text' ||
      body.duplicates_check === 'same_number',
    missingVariables,
    rejected,
    nothingToSend,
  };
  if (pastSchedule) prepared.pastSchedule = pastSchedule;
  return prepared;
}

/** The 2.0 cascade, with 1.0's top-level SMS settings moved into channel.sms. */
function channelOf(shape: Shape, f: SendFields): Channel | undefined {
  if (!shape.v2) {
    if (f.channel !== undefined) throw invalidRequest(wording('v2-only', { field: 'channel' }));
    return undefined;
  }
  let channel = cascade(f.channel);
  if (f.flash !== undefined && parseBoolean('flash', f.flash)) throw invalidRequest(wording('flash-v1-only'));
  if (f.admin !== undefined) throw invalidRequest(wording('admin-v1-only'));
  const moved: Record<string, unknown> = {};
  for (const key of ['sender_id', 'sender_id_value', 'unicode'] as const) if (f[key] !== undefined) moved[key] = f[key];
  if (Object.keys(moved).length) {
    channel ??= {};
    channel.sms = { ...moved, ...channel.sms };
  }
  if (channel) cleanChannel(channel);
  return channel;
}

function* addPromotionalRecipients(
  shape: Shape,
  f: SendFields,
  body: Body,
): Steps<{ recipients?: Recipients; rejected: RejectedRecipient[]; transactionalVariables?: undefined }> {
  const recipients = yield* promotionalRecipients(f.number, shape.simple);
  if (recipients?.entries.length) body.number = recipients.wire;
  for (const key of ['groups', 'admins'] as const) {
    if (shape.simple && f[key] !== undefined) throw invalidRequest(wording('advanced-only', { field: key }));
    const ids = parseIds(f[key]);
    if (ids !== undefined) body[key] = ids;
  }
  if (f.variables !== undefined) throw invalidRequest(wording('variables-per-recipient'));
  return { recipients, rejected: recipients?.rejected ?? [] };
}

function addTransactionalRecipient(
  shape: Shape,
  f: SendFields,
  body: Body,
): { recipients?: undefined; rejected: RejectedRecipient[]; transactionalVariables?: Record<string, unknown> } {
  const number = transactionalNumber(f.number);
  let rejected: RejectedRecipient[] = [];
  const wire = number === undefined ? undefined : phoneNumber(number);
  if (number !== undefined && wire === undefined) rejected = [impossibleNumber(0, number)];
  else if (wire !== undefined) body.number = wire;
  if (f.admin !== undefined) body.admin = digitsAsNumber(f.admin);
  if (f.variables !== undefined && shape.simple) throw invalidRequest(wording('variables-advanced-only'));
  return { rejected, transactionalVariables: isPlainObject(f.variables) ? f.variables : undefined };
}

/** Unicode, flash and the sender: in channel.sms for 2.0, at top level for 1.0. */
function addSmsSettings(
  shape: Shape,
  f: SendFields,
  body: Body,
  channel: Channel | undefined,
  unicode: boolean,
): Channel | undefined {
  if (shape.v2) {
    if (unicode && channel?.sms?.unicode === undefined) {
      channel ??= {};
      channel.sms = { ...channel.sms, unicode: true };
    }
    if (channel && Object.keys(channel).length === 1 && channel.sms && Object.keys(channel.sms).length === 0)
      channel = undefined;
    if (channel) body.channel = channel;
    return channel;
  }
  if (unicode) body.unicode = true;
  if (f.flash !== undefined && parseBoolean('flash', f.flash)) body.flash = true;
  const sender = wireSender(f.sender_id, f.sender_id_value);
  if (sender.id !== undefined) body.sender_id = sender.id;
  if (sender.value !== undefined) body.sender_id_value = sender.value;
  return channel;
}

function addDelivery(shape: Shape, f: SendFields, body: Body, account: AccountIdentity): void {
  const country = f.country ?? (account.defaultCountry || undefined);
  if (country !== undefined) body.country = typeof country === 'string' ? country.trim() : country;
  if (f.schedule !== undefined) {
    const schedule = normalizeSchedule(f.schedule);
    if (schedule === undefined) throw invalidRequest(wording('bad-schedule'));
    if (shape.simple && !shape.promotional) throw invalidRequest(wording('schedule-simple'));
    body.schedule = schedule;
  }
  const duplicates = duplicatesCheck(shape.promotional, f.duplicates_check);
  if (duplicates !== undefined) body.duplicates_check = duplicates;
}

/** A text is required where no channel's or recipient's own text supplies one. */
function requireText(
  shape: Shape,
  text: string | undefined,
  channel: Channel | undefined,
  body: Body,
  recipients: Recipients | undefined,
): void {
  const channelTexts = channel ? Object.values(channel).every((c) => !isAbsent(c.text)) : false;
  if (text !== undefined || channelTexts) return;
  if (!shape.promotional)
    throw invalidRequest(wording(shape.v2 ? 'text-required-v2' : 'text-required'), { key: 'no-text' });
  const needsTop =
    shape.simple ||
    body.groups !== undefined ||
    body.admins !== undefined ||
    recipients?.entries.some((e) => e.text === undefined);
  if (needsTop) throw invalidRequest(wording('text-required-promotional'), { key: 'no-text' });
}

/** A number the schemas take, standing in for the rejected ones while the rest is checked. */
const PLACEHOLDER_NUMBER = '000';

function duplicatesCheck(promotional: boolean, value: unknown): unknown {
  // Promotional: null, none and off all mean the default (no duplicates removed): send nothing.
  const none: unknown[] = promotional ? [false, 'none', 'off', 'null'] : [false, 'off'];
  if (none.includes(value)) return undefined;
  return value === true && !promotional ? 'on' : value;
}

function checkLength(field: string, text: string, unicode: boolean): void {
  const measure = measureText(text, unicode);
  if (measure.characters > measure.limit) throw textTooLong(field, measure);
}

/** The placeholders of the texts every recipient shares: the top text's and each channel's. */
function sharedPlaceholders(text: string | undefined, channel: Channel | undefined): string[] {
  const names = placeholders(text);
  for (const c of channel ? Object.values(channel) : [])
    if (typeof c.text === 'string') names.push(...placeholders(c.text));
  return names;
}

/** Of `names`, those `variables` has no own key for (an inherited `constructor` or `toString` is no variable). */
function unfilled(names: string[], variables: Record<string, unknown> | undefined): string[] {
  return names.filter((name) => !(variables && Object.hasOwn(variables, name)));
}

function* listMissingVariables(sharedNames: string[], recipients: Recipients): Steps<string[]> {
  const missing = new Set<string>();
  yield* eachInSteps(recipients.entries, (entry) => {
    for (const name of unfilled(entry.text !== undefined ? placeholders(entry.text) : sharedNames, entry.variables))
      missing.add(name);
  });
  return [...missing];
}

export function prepareInfo(operation: Operation, account: AccountIdentity): PreparedRequest {
  checkOperation(operation);
  // The credit's body takes no application_product.
  const body = credentialsBody(account, false);
  validateBody(schemaKey('info', operation.api, operation.version), body);
  const wire = serialise(operation, body);
  return {
    operation,
    method: operation.method,
    path: operationPath(operation) + (wire.query ?? ''),
    contentType: wire.contentType,
    payload: wire.payload,
    messages: 0,
    duplicatesChecked: true, // reading the balance twice does no harm
    missingVariables: [],
    rejected: [],
    nothingToSend: false,
  };
}

function checkOperation(operation: Operation): void {
  const problem = operationProblem(operation);
  if (problem) throw invalidRequest(problem);
}

export function serialise(
  operation: Operation,
  body: Record<string, unknown>,
): { payload?: string; contentType?: string; query?: string } {
  if (operation.encoding === 'json') return { payload: JSON.stringify(body), contentType: 'application/json' };
  const form = new URLSearchParams();
  for (const [key, value] of Object.entries(body)) {
    // Form bodies carry booleans as yes/no (the reference's simple API examples).
    form.append(key, typeof value === 'boolean' ? (value ? 'yes' : 'no') : String(value));
  }
  if (operation.encoding === 'query') return { query: `?${form.toString()}` };
  return { payload: form.toString(), contentType: 'application/x-www-form-urlencoded' };
}

/**
 * validateBody, a list of recipients longer than LIST_STEP checked a step at a time: the body with
 * each step's slice of the list in its place. The list's rules are per recipient (and at least
 * one), so a body valid at every step is valid whole; one that is not is checked whole, once, so
 * the error names the field and rule the whole body's first error does.
 */
function* validateInSteps(key: string, body: Body): Steps<void> {
  const list = body.number;
  if (!Array.isArray(list) || list.length <= LIST_STEP) return validateBody(key, body);
  for (let from = 0; from < list.length; from += LIST_STEP) {
    if (from > 0) yield;
    if (!isValidBody(key, { ...body, number: list.slice(from, from + LIST_STEP) })) return validateBody(key, body);
  }
}

/**
 * serialise, a JSON list of recipients longer than LIST_STEP written a step at a time: the same characters as
 * JSON.stringify.
 */
export function* serialiseInSteps(operation: Operation, body: Body): Steps<ReturnType<typeof serialise>> {
  const list = body.number;
  if (operation.encoding !== 'json' || !Array.isArray(list) || list.length <= LIST_STEP)
    return serialise(operation, body);
  // The fields before and after the list, in the body's order (JSON.stringify's).
  const before: Body = {};
  const after: Body = {};
  let past = false;
  for (const [key, value] of Object.entries(body)) {
    if (key === 'number') past = true;
    else (past ? after : before)[key] = value;
  }
  const steps: string[] = [];
  for (let from = 0; from < list.length; from += LIST_STEP) {
    if (from > 0) yield;
    steps.push(JSON.stringify(list.slice(from, from + LIST_STEP)).slice(1, -1));
  }
  const head = JSON.stringify(before).slice(1, -1);
  const tail = JSON.stringify(after).slice(1, -1);
  return {
    payload: `{${head ? `${head},` : ''}"number":[${steps.join(',')}]${tail ? `,${tail}` : ''}}`,
    contentType: 'application/json',
  };
}

function textTooLong(field: string, measure: { characters: number; limit?: number }): GatewayError {
  return invalidRequest(
    wording('text-too-long', {
      field,
      characters: measure.characters,
      limit: TEXT_LIMIT_GSM7,
      unicodeLimit: TEXT_LIMIT_UNICODE,
    }),
    {
      key: 'text-too-long',
      params: { characters: measure.characters, limit: measure.limit ?? TEXT_LIMIT_GSM7 },
    },
  );
}
