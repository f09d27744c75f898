/** The other endpoints (the number check as the vendor's SDK reads it): state per account, bounded. */
import { randomBytes, randomInt } from 'node:crypto';
import {
  getCountryCallingCode,
  isSupportedCountry,
  parsePhoneNumberFromString,
  type CountryCode,
} from 'libphonenumber-js/min';
import { ENDPOINTS, type EndpointName } from '../gateway/operations';
import type { SimulatorAccount } from './accounts';
import {
  ApiError,
  checkCredit,
  completeNumber,
  isAbsent,
  isObject,
  PRICES,
  round,
  smsSender,
  type OutboxMessage,
  type SimulatedGateway,
} from './gateway';

/** Entries kept per account and kind (OTPs, blacklist, contacts): the oldest go first. */
const MAX_ENTRIES = 10_000;

interface Otp {
  id: string;
  account: string;
  number: string;
  code: string;
  channel: 'sms' | 'viber';
  sender: string;
  language: string;
  expires: number;
  verificationsLeft: number | null;
  resendsLeft: number | null;
}

type ContactRecord = Record<string, string | null>;

/** Every field of a contact as the address book's get answers it. */
const CONTACT_FIELDS = [
  'phone_mobile',
  'phone',
  'phone_number_iso',
  'email',
  'url',
  'first_name',
  'last_name',
  'title_before',
  'title_after',
  'gender',
  'type',
  'street1',
  'street2',
  'city',
  'zip',
  'state',
  'country',
  'company_name',
  'company_number',
  'company_vat',
  'note',
  ...Array.from({ length: 10 }, (_, i) => `custom_field_${i}`),
];

/** The text of an OTP message per language (the gateway writes it; `en` when it has no other). */
const OTP_TEXTS: Record<string, string> = {
  en: 'Your verification code is {code}',
  cs: 'Váš ověřovací kód je {code}',
  de: 'Ihr Bestätigungscode lautet {code}',
};

const invalidInput = () => new ApiError(400, 'invalid_input_parameters', 'Invalid input parameters');
const numberNotFound = () => new ApiError(400, 'number_not_found', 'Number not found');

/** Puts a value in a map, forgetting the oldest entry past the bound. */
function bounded<K, V>(map: Map<K, V>, key: K, value: V): void {
  map.delete(key);
  map.set(key, value);
  if (map.size > MAX_ENTRIES) map.delete(map.keys().next().value as K);
}

function ofAccount<V>(maps: Map<string, Map<string, V>>, account: SimulatorAccount): Map<string, V> {
  let map = maps.get(account.id);
  if (!map) maps.set(account.id, (map = new Map()));
  return map;
}

function limitOf(value: unknown): number | null {
  if (isAbsent(value)) return null;
  const n = Number(value);
  return Number.isInteger(n) && n >= 0 ? n : null;
}

export class SimulatedEndpoints {
  readonly otps = new Map<string, Otp>();
  /** Per account: number -> what the answers read of its entry (not the reason or date given). */
  readonly blacklists = new Map<string, Map<string, { type: 'black-list' | 'opt-out'; source_id: string }>>();
  /** Per account: number -> contact, and the date of its opt-in consent. */
  readonly contacts = new Map<string, Map<string, { contact: ContactRecord; agreement: string | null }>>();

  constructor(private readonly gateway: SimulatedGateway) {}

  reset(): void {
    this.otps.clear();
    this.blacklists.clear();
    this.contacts.clear();
  }

  static byPath(path: string): EndpointName | undefined {
    return (Object.keys(ENDPOINTS) as EndpointName[]).find((name) => ENDPOINTS[name].path === path);
  }

  answer(name: EndpointName, account: SimulatorAccount, body: Record<string, unknown>): unknown {
    const answer = this.#answers[name];
    return answer ? answer(account, body) : this.#addressBook(name, account, body);
  }

  readonly #answers: Partial<
    Record<EndpointName, (account: SimulatorAccount, body: Record<string, unknown>) => unknown>
  > = {
    'otp send': (account, body) => {
      if (!body.request_quota_identification) throw invalidInput();
      const number = completeNumber(
        String(body.number ?? ''),
        typeof body.country === 'string' ? body.country : account.country,
      );
      if (!number) throw new ApiError(400, 'invalid_phone_number', 'Invalid phone number');
      const type = body.code_type === 'string' || body.code_type === 'combined' ? body.code_type : 'int';
      const length = body.code_length === undefined ? 6 : Number(body.code_length);
      if (!Number.isInteger(length) || length < 4 || length > 100) throw invalidInput();
      // The cascade: Viber when listed first and the number uses Viber, else SMS (the last resort).
      const channels = isObject(body.channel) ? body.channel : {};
      const viber =
        isObject(channels.viber) && Object.keys(channels)[0] === 'viber' && account.viber.has(number)
          ? channels.viber
          : undefined;
      const otp: Otp = {
        id: `otp-${randomBytes(7).toString('hex')}.${randomInt(10_000_000, 99_999_999)}`,
        account: account.id,
        number,
        code: makeCode(type, length),
        channel: viber ? 'viber' : 'sms',
        sender: viber ? String(viber.sender ?? '') : smsSender(isObject(channels.sms) ? channels.sms : {}),
        language: typeof body.language === 'string' && body.language ? body.language.toLowerCase() : 'en',
        expires: Date.now() + 1000 * (body.expiration === undefined ? 604_800 : Number(body.expiration)),
        verificationsLeft: limitOf(body.trials_available_verification),
        resendsLeft: limitOf(body.trials_available_resend),
      };
      this.#deliver(account, otp);
      bounded(this.otps, otp.id, otp);
      return { id: otp.id };
    },

    'otp resend': (account, body) => {
      const otp = this.#otp(account, body.id);
      if (otp.resendsLeft !== null) {
        if (otp.resendsLeft === 0) throw invalidInput();
        otp.resendsLeft--;
      }
      const message = this.#deliver(account, otp);
      return {
        id: otp.id,
        message: {
          status: 'accepted',
          message_id: message.sms_id,
          part_id: [message.sms_id],
          number: otp.number,
          channel: otp.channel,
        },
      };
    },

    'otp verify': (account, body) => {
      const otp = this.#otp(account, body.id);
      if (typeof body.code !== 'string' && typeof body.code !== 'number') throw invalidInput();
      if (otp.verificationsLeft !== null) {
        if (otp.verificationsLeft === 0) return { id: otp.id, verified: false };
        otp.verificationsLeft--;
      }
      return { id: otp.id, verified: String(body.code) === otp.code };
    },

    'number-check': (account, body) => {
      if (!Array.isArray(body.numbers) || body.numbers.length === 0) throw invalidInput();
      const out: Record<string, unknown> = {};
      for (const entry of body.numbers) {
        const given = String(isObject(entry) ? entry.phone_number : entry);
        const iso =
          isObject(entry) && typeof entry.country === 'string' && entry.country
            ? entry.country.toUpperCase()
            : account.country;
        const number = completeNumber(given, iso);
        const parsed = number ? parsePhoneNumberFromString(`+${number}`) : undefined;
        const country = parsed?.country ?? (isSupportedCountry(iso) ? iso : undefined);
        out[given] =
          number && country
            ? {
                phone_number: number,
                valid: true,
                country: country.toLowerCase(),
                call_prefix: Number(getCountryCallingCode(country as CountryCode)),
                network_code: `${getCountryCallingCode(country as CountryCode)}01`,
                network_name: 'Simulated mobile',
              }
            : {
                phone_number: given,
                valid: false,
                country: null,
                call_prefix: null,
                network_code: null,
                network_name: '',
              };
      }
      return out;
    },

    'black-list check': (account, body) => {
      this.#wallet(account, body);
      if (!Array.isArray(body.numbers)) throw new ApiError(400, 'missing_parameters', 'Missing parameters');
      const route = body.route === 'transactional' ? 'transactional' : 'promotional';
      const out: Record<string, boolean> = {};
      for (const given of body.numbers) {
        const number = completeNumber(String(given), account.country);
        const entry = number === undefined ? undefined : this.blacklists.get(account.id)?.get(number);
        // Opt-outs block promotional messages only.
        out[String(given)] = Boolean(entry && (route === 'promotional' || entry.type === 'black-list'));
      }
      return out;
    },

    'black-list add': (account, body) => {
      this.#wallet(account, body);
      if (!Array.isArray(body.numbers)) throw new ApiError(400, 'missing_parameters', 'Missing parameters');
      const numbers = body.numbers
        .map((n) => completeNumber(String(n), account.country))
        .filter((n): n is string => n !== undefined);
      if (numbers.length === 0) throw new ApiError(400, 'no_valid_numbers', 'No valid numbers');
      const list = ofAccount(this.blacklists, account);
      const fresh = numbers.filter((n) => !list.has(n));
      if (fresh.length === 0) throw new ApiError(400, 'number_already_exists', 'Number already exists');
      const type = body.type === 'opt-out' ? 'opt-out' : 'black-list';
      for (const number of fresh) bounded(list, number, { type, source_id: String(body.source_id ?? '') });
      return { message: 'contacts have been blacklisted' };
    },

    'black-list remove': (account, body) => {
      this.#wallet(account, body);
      const hasNumber = body.number !== undefined && body.number !== '';
      const hasSource = body.source_id !== undefined && body.source_id !== '';
      if (hasNumber && hasSource)
        throw new ApiError(400, 'use_number_or_source_id_not_both', 'Use number or source id not both');
      if (!hasNumber && !hasSource) throw new ApiError(400, 'missing_parameters', 'Missing parameters');
      const list = ofAccount(this.blacklists, account);
      if (hasNumber) {
        const number = completeNumber(String(body.number), account.country);
        if (!number) throw new ApiError(400, 'no_valid_numbers', 'No valid numbers');
        list.delete(number);
      } else {
        for (const [number, entry] of list) if (entry.source_id === body.source_id) list.delete(number);
      }
      return { message: 'Black list contacts have been removed' };
    },
  };

  #otp(account: SimulatorAccount, id: unknown): Otp {
    const otp = typeof id === 'string' ? this.otps.get(id) : undefined;
    if (!otp || otp.account !== account.id || otp.expires < Date.now())
      throw new ApiError(400, 'invalid_id_provided', 'Invalid id provided');
    return otp;
  }

  /** The OTP's message: charged, in the outbox (where a tester reads the code), reported. */
  #deliver(account: SimulatorAccount, otp: Otp): OutboxMessage {
    const price = otp.channel === 'viber' ? PRICES.viber : PRICES.sms;
    checkCredit(account, price);
    account.credit = round(account.credit - price);
    return this.gateway.record({
      account: account.id,
      kind: 'otp',
      endpoint: ENDPOINTS['otp send'].path,
      number: otp.number,
      text: (OTP_TEXTS[otp.language] ?? (OTP_TEXTS.en as string)).replace('{code}', otp.code),
      channel: otp.channel,
      sender: otp.sender,
      unicode: false,
      parts: 1,
      price,
    });
  }

  #wallet(account: SimulatorAccount, body: Record<string, unknown>): void {
    if (body.wallet !== undefined && body.wallet !== `sim-wallet-${account.id}`)
      throw new ApiError(400, 'invalid_wallet', 'Invalid wallet');
  }

  #addressBook(name: EndpointName, account: SimulatorAccount, body: Record<string, unknown>): unknown {
    const book = ofAccount(this.contacts, account);
    const key = (raw: unknown, type = 'invalid_phone_number') => {
      const number = completeNumber(String(raw ?? ''), account.country);
      if (number) return number;
      throw new ApiError(400, type, type === 'invalid_phone_mobile' ? 'Invalid phone mobile' : 'Invalid phone number');
    };
    const find = (raw: unknown, type?: string) => {
      const entry = book.get(key(raw, type));
      if (!entry) throw numberNotFound();
      return entry;
    };
    const store = (data: unknown, existing?: ContactRecord): ContactRecord => {
      if (!isObject(data)) throw invalidInput();
      const contact: ContactRecord = existing
        ? { ...existing }
        : Object.fromEntries(CONTACT_FIELDS.map((f) => [f, f === 'phone_number_iso' ? null : '']));
      for (const field of CONTACT_FIELDS)
        if (typeof data[field] === 'string' && field !== 'phone_number_iso') contact[field] = data[field] as string;
      const number = key(contact.phone_mobile, 'invalid_phone_mobile');
      contact.phone_mobile = number;
      bounded(book, number, { contact, agreement: book.get(number)?.agreement ?? null });
      return contact;
    };
    switch (name) {
      case 'address-book get':
        return find(body.phone_number).contact;
      case 'address-book add':
        return store(body.data);
      case 'address-book edit': {
        const entry = find(body.phone_number);
        const number = entry.contact.phone_mobile as string;
        if (!isObject(body.data)) throw invalidInput();
        const contact = store({ phone_mobile: number, ...body.data }, entry.contact);
        // A new phone_mobile moves the contact.
        if (contact.phone_mobile !== number) book.delete(number);
        return contact;
      }
      case 'address-book import': {
        if (!Array.isArray(body.data) || body.data.length === 0) throw invalidInput();
        // Checked first: an import with one bad contact stores none of them.
        for (const data of body.data) if (!isObject(data)) throw invalidInput();
        for (const data of body.data) key((data as Record<string, unknown>).phone_mobile, 'invalid_phone_mobile');
        for (const data of body.data) store(data);
        return { message: 'contacts have been imported', count: body.data.length };
      }
      case 'address-book remove':
        if (!book.delete(key(body.phone_number))) throw numberNotFound();
        return { message: 'contact_has_been_removed' };
      case 'address-book consent-show':
        return {
          phone_number: body.phone_number,
          agreement: find(body.phone_number, 'invalid_phone_mobile').agreement,
        };
      case 'address-book consent-add': {
        const number = key(body.phone_number, 'invalid_phone_mobile');
        // The page: a number that is not in the address book is added.
        if (!book.has(number)) store({ phone_mobile: number });
        const entry = book.get(number) as { contact: ContactRecord; agreement: string | null };
        entry.agreement = new Date().toISOString().replace(/\.\d+Z$/, '+00:00');
        return { phone_number: body.phone_number, agreement: entry.agreement };
      }
      case 'address-book consent-remove':
        find(body.phone_number, 'invalid_phone_mobile').agreement = null;
        return { phone_number: body.phone_number, agreement: null };
      default:
        throw new ApiError(404, 'unknown_action', 'Unknown action');
    }
  }
}

function makeCode(type: 'int' | 'string' | 'combined', length: number): string {
  const alphabet =
    type === 'int' ? '0123456789' : type === 'string' ? 'ABCDEFGHJKLMNPQRSTUVWXYZ' : 'ABCDEFGHJKLMNPQRSTUVWXYZ23456789';
  return Array.from({ length }, () => alphabet[randomInt(alphabet.length)]).join('');
}
