/** The promotional, transactional and info operations of an authenticated request (the reference). */
import {
  getCountryCallingCode,
  isPossiblePhoneNumber,
  isSupportedCountry,
  type CountryCode,
} from 'libphonenumber-js/min';
import { SENDER_TYPES } from '../gateway/senders';
import { ADDRESS_BOOK, type SimulatorAccount } from './accounts';
import { countText, LIMIT_GSM7, LIMIT_UNICODE } from './counting';

export type Version = '1.0' | '2.0';

/** Prices per SMS part and per Viber, WhatsApp or RCS message, in the account's credits. */
export const PRICES = { sms: 0.05, viber: 0.03, whatsapp: 0.04, rcs: 0.02 };
/** Transactional `duplicates_check: on` window (the reference); promotional uses the same. */
const DUPLICATE_WINDOW_MS = 5 * 60 * 1000;

export interface OutboxMessage {
  sms_id: string;
  account: string;
  kind: 'promotional' | 'transactional' | 'otp';
  endpoint: string;
  number: string;
  text: string;
  channel: 'sms' | 'viber' | 'whatsapp' | 'rcs';
  sender: string;
  unicode: boolean;
  parts: number;
  price: number;
  status: 'sent' | 'scheduled';
  /** ISO time it is due (scheduled messages). */
  scheduled?: string;
  created: string;
}

interface SendRecord {
  status: 'accepted' | 'scheduled' | 'error';
  sms_id?: string;
  price?: number;
  credit?: number;
  number: string;
  code?: number;
  error?: string;
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly type: string,
    message: string,
    readonly detail: string | null = null,
  ) {
    super(message);
  }

  body(version: Version): Record<string, unknown> {
    return version === '2.0'
      ? { type: this.type, code: this.status, error: this.message, detail: this.detail }
      : { error: this.type, code: this.status };
  }
}

const invalidParameter = (message: string) => new ApiError(400, 'invalid_parameter', message);
/** Credits and prices to four decimals, as the gateway answers them. */
export const round = (n: number) => Math.round(n * 10_000) / 10_000;
export const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);
export const isAbsent = (v: unknown): boolean => v === undefined || v === null || v === '';
const asBoolean = (v: unknown) => v === true || v === 1 || v === '1' || v === 'true' || v === 'yes';

/** Refuses a send the account's credit does not cover. */
export function checkCredit(account: SimulatorAccount, cost: number): void {
  const detail = `This needs ${round(cost)} credits; ${round(account.credit)} left`;
  if (cost > account.credit + 1e-9) throw new ApiError(400, 'low_credit', 'Low credit', detail);
}

interface Recipient {
  number: string;
  text?: string;
  variables: Record<string, unknown>;
}

/** Completes a number with the country's calling code when it does not stand as international. */
export function completeNumber(number: string, country: string | undefined): string | undefined {
  const digits = number.replace(/[\s\-.()+]/g, '').replace(/^00/, '');
  if (!/^\d+$/.test(digits)) return undefined;
  if (isPossiblePhoneNumber(`+${digits}`)) return digits;
  const iso = country?.toUpperCase();
  if (iso && isSupportedCountry(iso)) {
    const completed = getCountryCallingCode(iso as CountryCode) + digits.replace(/^0/, '');
    if (isPossiblePhoneNumber(`+${completed}`)) return completed;
  }
  return undefined;
}

function substitute(text: string, variables: Record<string, unknown>): string {
  return text.replace(/<([A-Za-z0-9_]+)>/g, (whole, name: string) =>
    Object.prototype.hasOwnProperty.call(variables, name) ? String(variables[name]) : whole,
  );
}

/** Strict mode: refuse shapes the reference does not allow, so a wrong client is caught. */
function strictCheck(version: Version, body: Record<string, unknown>): void {
  if (version === '1.0' && 'channel' in body) throw invalidParameter('channel exists in version 2.0 only');
  for (const key of ['sender_id', 'sender_id_value', 'unicode', 'flash']) {
    if (version === '2.0' && key in body) throw invalidParameter(`${key} is not a top-level field in version 2.0`);
  }
  const sms = isObject(body.channel) && isObject(body.channel.sms) ? body.channel.sms : {};
  for (const sender of [body.sender_id, sms.sender_id]) {
    if (
      sender === undefined ||
      (typeof sender === 'number' && Number.isInteger(sender)) ||
      (typeof sender === 'string' && /^\d+$/.test(sender))
    )
      continue;
    if (!SENDER_TYPES[version].includes(String(sender)))
      throw invalidParameter(`unknown sender_id ${String(sender)} in version ${version}`);
  }
}

/** The key of the duplicate check's index: an account's number. */
const recipientKey = (account: string, number: string) => `${account}\u0000${number}`;

/**
 * The outbox keeps the newest this many messages, scheduled ones too: a load test or a demo left running for weeks
 * must not grow the simulator without end (nor the page's JSON, nor the scan for due messages). A list of 100,000
 * recipients still fits whole.
 */
export const OUTBOX_MAX = 100_000;

export class SimulatedGateway {
  readonly state = { outbox: [] as OutboxMessage[], nextId: 1 };
  /** The outbox by account and number, oldest first, for the duplicate check (a scan stalled a list at 60,000). */
  #byRecipient = new Map<string, OutboxMessage[]>();
  /** How many in the outbox wait for their schedule: none, and the second's look for due ones reads nothing. */
  #scheduled = 0;
  /** Told of each message when it goes out (at once, or when its schedule comes): for delivery reports. */
  onSent: (message: OutboxMessage) => void = () => undefined;
  constructor(
    private readonly strict: boolean,
    private readonly outboxMax = OUTBOX_MAX,
  ) {}

  reset(): void {
    this.state.outbox = [];
    this.#byRecipient.clear();
    this.#scheduled = 0;
    this.state.nextId = 1;
  }

  /** Puts a message in the outbox; one not scheduled goes out now, and is reported. */
  record(
    fields: Omit<OutboxMessage, 'sms_id' | 'status' | 'scheduled' | 'created'>,
    scheduled?: number,
    now = Date.now(),
  ): OutboxMessage {
    const message: OutboxMessage = {
      sms_id: `sim-${String(this.state.nextId++).padStart(8, '0')}`,
      ...fields,
      status: scheduled === undefined ? 'sent' : 'scheduled',
      scheduled: scheduled === undefined ? undefined : new Date(scheduled).toISOString(),
      created: new Date(now).toISOString(),
    };
    this.state.outbox.push(message);
    const key = recipientKey(message.account, message.number);
    const same = this.#byRecipient.get(key);
    if (same) same.push(message);
    else this.#byRecipient.set(key, [message]);
    if (scheduled === undefined) this.onSent(message);
    else this.#scheduled++;
    while (this.state.outbox.length > this.outboxMax) this.#forget(this.state.outbox.shift() as OutboxMessage);
    return message;
  }

  /** The oldest message goes: from the duplicate check's index too (where it is the oldest of its number, if there). */
  #forget(oldest: OutboxMessage): void {
    if (oldest.status === 'scheduled') this.#scheduled--;
    const key = recipientKey(oldest.account, oldest.number);
    const same = this.#byRecipient.get(key);
    if (same?.[0] === oldest) same.shift();
    if (same?.length === 0) this.#byRecipient.delete(key);
  }

  releaseDue(): boolean {
    if (this.#scheduled === 0) return false;
    const now = Date.now();
    const due = this.state.outbox.filter(
      (m) => m.status === 'scheduled' && m.scheduled && Date.parse(m.scheduled) <= now,
    );
    for (const m of due) {
      m.status = 'sent';
      this.#scheduled--;
      this.onSent(m);
    }
    return due.length > 0;
  }

  info(account: SimulatorAccount): Record<string, unknown> {
    return {
      wallet: `sim-wallet-${account.id}`,
      credit: round(account.credit),
      currency: account.currency,
      free_messages: 0,
      datetime: new Date().toISOString().replace('Z', '+00:00'),
    };
  }

  promotional(
    account: SimulatorAccount,
    version: Version,
    simple: boolean,
    endpoint: string,
    body: Record<string, unknown>,
  ): Record<string, unknown> {
    if (this.strict) strictCheck(version, body);
    const recipients: Recipient[] = [];
    if (simple) {
      for (const number of String(body.number ?? '').split(';')) if (number) recipients.push({ number, variables: {} });
    } else {
      if (body.number !== undefined && !Array.isArray(body.number)) throw invalidParameter('number must be an array');
      for (const entry of (body.number as unknown[] | undefined) ?? []) {
        if (typeof entry === 'string' || typeof entry === 'number')
          recipients.push({ number: String(entry), variables: {} });
        else if (isObject(entry) && entry.number) {
          recipients.push({
            number: String(entry.number),
            text: typeof entry.text === 'string' ? entry.text : undefined,
            variables: isObject(entry.variables) ? entry.variables : {},
          });
        }
        // The reference: an entry without a number is skipped.
      }
      for (const group of (body.groups as unknown[] | undefined) ?? []) {
        for (const contact of ADDRESS_BOOK.groups[Number(group)] ?? [])
          recipients.push({ number: contact.number, variables: { ...contact } });
      }
      for (const admin of (body.admins as unknown[] | undefined) ?? []) {
        const contact = ADDRESS_BOOK.admins[Number(admin)];
        if (!contact) throw new ApiError(400, 'admin_not_found', `Administrator ${String(admin)} not found`);
        recipients.push({ number: contact.number, variables: { ...contact } });
      }
    }
    if (recipients.length === 0) throw new ApiError(400, 'no_recipients', 'No recipients');
    const planned = recipients.map((r) => this.#plan(account, version, body, r));
    const records = this.#commit(
      account,
      'promotional',
      endpoint,
      body.schedule,
      planned,
      body.duplicates_check as string | undefined,
    );
    const counters = { sent: 0, accepted: 0, scheduled: 0, error: 0 };
    for (const r of records) counters[r.status]++;
    return {
      total: { price: round(records.reduce((sum, r) => sum + (r.price ?? 0), 0)), status: counters },
      response: records,
    };
  }

  transactional(account: SimulatorAccount, version: Version, endpoint: string, body: Record<string, unknown>): unknown {
    if (this.strict) strictCheck(version, body);
    const variables = isObject(body.variables) ? body.variables : {};
    let recipient: Recipient = { number: String(body.number), variables };
    if (body.number === undefined || body.number === '') {
      if (version !== '1.0' || body.admin === undefined) throw new ApiError(400, 'no_recipients', 'No recipients');
      const contact = ADDRESS_BOOK.admins[Number(body.admin)];
      if (!contact) throw new ApiError(400, 'admin_not_found', `Administrator ${String(body.admin)} not found`);
      recipient = { number: contact.number, variables: { ...contact, ...variables } };
    }
    if (
      version === '2.0' &&
      body.country !== undefined &&
      !(typeof body.country === 'string' && isSupportedCountry(body.country.toUpperCase()))
    ) {
      throw invalidParameter('country must be an ISO 3166-1 alpha-2 code');
    }
    const plan = this.#plan(account, version, body, recipient);
    if (plan.invalid && version === '2.0') throw new ApiError(400, 'invalid_phone_number', 'Invalid phone number');
    // `schedule` is held on the simple path too: the reference shows it in promotional examples only
    // and says nothing of a gateway that refuses or ignores it; BulkGate's own table lists it here.
    return this.#commit(
      account,
      'transactional',
      endpoint,
      body.schedule,
      [plan],
      body.duplicates_check === 'on' ? 'same_text' : undefined,
    )[0];
  }

  #plan(account: SimulatorAccount, version: Version, body: Record<string, unknown>, recipient: Recipient): Plan {
    const country = typeof body.country === 'string' && body.country ? body.country : account.country;
    const number = completeNumber(recipient.number, country);
    if (!number) return { invalid: true, number: recipient.number };
    const channels = version === '2.0' && isObject(body.channel) ? body.channel : {};
    const topText = typeof body.text === 'string' ? body.text : undefined;
    // The cascade: the first listed channel that can deliver; SMS when none can.
    let delivery: Delivery | undefined;
    for (const [name, settings] of Object.entries(channels)) {
      if (!isObject(settings)) continue;
      if (name === 'sms') break;
      if ((name === 'viber' || name === 'whatsapp' || name === 'rcs') && account[name].has(number)) {
        const text = name === 'viber' ? String(settings.text ?? recipient.text ?? topText ?? '') : chatText(settings);
        delivery = { text, channel: name, sender: String(settings.sender ?? ''), unicode: false };
        break;
      }
    }
    if (!delivery) {
      // Version 1.0 has no channels: its sender and unicode are top-level.
      const settings = isObject(channels.sms) ? channels.sms : {};
      const sender = version === '2.0' ? settings : body;
      const text = String(settings.text ?? recipient.text ?? topText ?? '');
      delivery = { text, channel: 'sms', sender: smsSender(sender), unicode: asBoolean(sender.unicode) };
    }
    delivery.text = substitute(delivery.text, recipient.variables);
    if (!delivery.text) throw new ApiError(400, 'empty_message', 'Empty message');
    const measure = countText(delivery.text, delivery.channel === 'sms' ? delivery.unicode : 'auto');
    // SMS limits and parts apply to SMS only (WhatsApp and RCS are checked by the client's schema).
    if (this.strict && delivery.channel === 'sms' && measure.characters > measure.limit) {
      throw invalidParameter(
        `text is ${measure.characters} characters; the limit is ${LIMIT_GSM7} (${LIMIT_UNICODE} with Unicode)`,
      );
    }
    const parts = delivery.channel === 'sms' ? Math.max(1, measure.parts) : 1;
    const price = delivery.channel === 'sms' ? round(parts * PRICES.sms) : PRICES[delivery.channel];
    return { invalid: false, number, delivery, parts, price };
  }

  #commit(
    account: SimulatorAccount,
    kind: OutboxMessage['kind'],
    endpoint: string,
    schedule: unknown,
    plans: Plan[],
    duplicates?: string,
  ): SendRecord[] {
    const scheduleAt = parseSchedule(schedule);
    if (schedule !== undefined && scheduleAt === undefined)
      throw invalidParameter('schedule must be a unix timestamp or an ISO 8601 date-time');
    const now = Date.now();
    const due = scheduleAt !== undefined && scheduleAt > now;
    // Duplicates: a copy of a recent message is not sent again; its original record is answered.
    const duplicateOf = (plan: Plan & { invalid: false }): OutboxMessage | undefined => {
      if (!duplicates) return undefined;
      const same = this.#byRecipient.get(recipientKey(account.id, plan.number));
      // Those past the window are never a duplicate again: dropped from the index, oldest first.
      while (same?.[0] && now - Date.parse(same[0].created) >= DUPLICATE_WINDOW_MS) same.shift();
      return same?.find((m) => duplicates === 'same_number' || m.text === plan.delivery.text);
    };
    // The up-front check charges what will be charged: a copy of an earlier entry of this list is
    // answered as that entry's duplicate at price 0, as one of an earlier request is.
    const earlier = new Map<string, Set<string>>();
    const charged = (plan: Plan): plan is Plan & { invalid: false } => {
      if (plan.invalid || duplicateOf(plan)) return false;
      if (!duplicates) return true;
      const texts = earlier.get(plan.number) ?? new Set<string>();
      if (texts.size > 0 && (duplicates === 'same_number' || texts.has(plan.delivery.text))) return false;
      earlier.set(plan.number, texts.add(plan.delivery.text));
      return true;
    };
    const cost = plans.filter(charged).reduce((sum, p) => sum + p.price, 0);
    checkCredit(account, cost);
    return plans.map((plan): SendRecord => {
      if (plan.invalid) return { status: 'error', code: 9, error: 'Invalid phone number', number: plan.number };
      const original = duplicateOf(plan);
      if (original) {
        const status = original.status === 'scheduled' ? 'scheduled' : 'accepted';
        return { status, sms_id: original.sms_id, price: 0, credit: round(account.credit), number: plan.number };
      }
      account.credit = round(account.credit - plan.price);
      const fields = {
        account: account.id,
        kind,
        endpoint,
        number: plan.number,
        ...plan.delivery,
        parts: plan.parts,
        price: plan.price,
      };
      const message = this.record(fields, due ? scheduleAt : undefined, now);
      return {
        status: due ? 'scheduled' : 'accepted',
        sms_id: message.sms_id,
        price: plan.price,
        credit: account.credit,
        number: plan.number,
      };
    });
  }
}

type Delivery = Pick<OutboxMessage, 'text' | 'channel' | 'sender' | 'unicode'>;

type Plan =
  | { invalid: true; number: string }
  | { invalid: false; number: string; delivery: Delivery; parts: number; price: number };

/** How the outbox page names an SMS sender: its type, and its value when it has one (`gText:Shop`). */
export function smsSender(settings: Record<string, unknown>): string {
  const type = String(settings.sender_id ?? 'gSystem');
  return settings.sender_id_value !== undefined ? `${type}:${String(settings.sender_id_value)}` : type;
}

/** What a WhatsApp or RCS message shows: its text, or what else it carries (a template by name). */
function chatText(settings: Record<string, unknown>): string {
  if (isObject(settings.message) && typeof settings.message.text === 'string') return settings.message.text;
  if (isObject(settings.template)) return `[template ${String(settings.template.template ?? '')}]`;
  const kind = ['file', 'otp', 'location', 'card', 'carousel'].find((k) => k in settings);
  return kind ? `[${kind}]` : '';
}

function parseSchedule(value: unknown): number | undefined {
  if (isAbsent(value)) return undefined;
  const text = String(value);
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  const ms = Date.parse(text);
  return Number.isNaN(ms) ? undefined : ms;
}
