/** The JSON schema of every wire body (the editor reads it too); a `rule` is a failure's sentence. */
import { SENDER_TYPES, SENDER_VALUE_KIND } from './senders';
import type { ApiFamily, ApiVersion, OperationKind } from './operations';
import { PHONE_DIGITS } from './recipients';
import { CHAT_CONTENTS, CHAT_TEXT_LIMITS } from './channels';

type Schema = Record<string, unknown>;

const PHONE_RULE = 'must be a phone number: 3 to 20 digits once spaces, dashes, dots, brackets and a leading + or 00 are removed';
const phone: Schema = { type: 'string', pattern: PHONE_DIGITS, rule: PHONE_RULE };
const text: Schema = { type: 'string', minLength: 1, rule: 'must be a non-empty string' };
const anyString: Schema = { type: 'string', rule: 'must be a string' };
const variables: Schema = {
  type: 'object',
  additionalProperties: { type: ['string', 'number'], rule: 'must be a string or a number' },
  rule: 'must be an object of names to strings or numbers',
};
const listOf = (items: Schema, rule: string): Schema => ({ type: 'array', minItems: 1, items, rule });
const ids = listOf({ type: 'integer', minimum: 0, rule: 'must be an integer id' }, 'must be a list of integer ids');
const country: Schema = { type: 'string', pattern: '^[A-Za-z]{2}$', rule: 'must be a two-letter ISO 3166-1 country code such as CZ or GB' };
const schedule: Schema = { type: 'string', minLength: 1, rule: 'must be a unix timestamp or an ISO 8601 date-time' };
const flag: Schema = { type: 'boolean', rule: 'must be true or false' };
const onOff: Schema = { enum: ['on', 'off'], rule: 'must be on or off' };
const seconds: Schema = { type: 'integer', minimum: 1, rule: 'must be a whole number of seconds, at least 1' };
const credentials: Schema = {
  application_id: { type: 'string', minLength: 1, rule: 'is required (set it in the account)' },
  application_token: { type: 'string', minLength: 1, rule: 'is required (set it in the account)' },
  application_product: { type: 'string' },
};

function objectOf(properties: Schema, required: string[] = [], extra: Schema = {}): Schema {
  return { type: 'object', ...(required.length ? { required } : {}), additionalProperties: false, properties, ...extra };
}

function body(properties: Schema, required: string[] = [], extra: Schema = {}): Schema {
  return objectOf({ ...credentials, ...properties }, ['application_id', 'application_token', ...required], extra);
}

function sender(version: ApiVersion): Schema {
  return {
    sender_id: {
      anyOf: [{ enum: SENDER_TYPES[version] }, { type: 'integer', minimum: 0 }],
      rule: `must be one of ${SENDER_TYPES[version].join(', ')} or a sender profile id (integer) in version ${version}`,
    },
    sender_id_value: text,
  };
}

function senderValueRequired(version: ApiVersion): Schema {
  const types = SENDER_TYPES[version].filter((type) => type in SENDER_VALUE_KIND);
  return {
    if: { properties: { sender_id: { enum: types } }, required: ['sender_id'] },
    then: { required: ['sender_id_value'] },
  };
}

function chatText(name: 'whatsapp' | 'rcs'): Schema {
  const limit = CHAT_TEXT_LIMITS[name];
  return { type: 'string', minLength: 1, maxLength: limit, rule: `must be a text of 1 to ${limit} characters` };
}

function chat(name: 'whatsapp' | 'rcs', contents: Record<string, Schema>): Schema {
  const kinds = CHAT_CONTENTS[name];
  const sender = { type: 'string', minLength: 1, rule: `must be the name of a registered ${name === 'rcs' ? 'RCS' : 'WhatsApp'} sender` };
  return objectOf({ sender, expiration: seconds, ...contents }, ['sender'], {
    oneOf: kinds.map((kind) => ({ required: [kind] })),
    rule: `must hold exactly one of ${kinds.join(', ')}`,
  });
}

function channel(kind: OperationKind): Schema {
  const button = objectOf({ caption: text, url: text }, ['caption', 'url'], { rule: 'must be an object with caption and url' });
  return objectOf(
    {
      whatsapp: chat('whatsapp', {
        message: objectOf({ text: chatText('whatsapp'), preview_url: flag }, ['text'], { rule: 'must be an object {text, preview_url}' }),
        template: objectOf(
          {
            template: { type: 'string', minLength: 1, rule: 'must be the name of an approved template' },
            language: { type: 'string', minLength: 2, rule: 'must be a language code such as en' },
            header: { type: 'object', rule: "must be the template header's object (type and its value)" },
            body: { type: ['array', 'object'], rule: "must be the template body's parameters" },
            buttons: { type: 'array', items: { type: 'object' }, rule: "must be a list of the template buttons' objects" },
          },
          ['template'],
          { rule: 'must be an object {template, language, header, body, buttons}' },
        ),
        file: { type: 'object', rule: 'must be a file object' },
        otp: {
          type: 'object',
          required: ['template', 'code'],
          properties: { template: { type: 'string', minLength: 1 }, code: { type: ['string', 'number'] }, language: { type: 'string' } },
          rule: 'must be an object {template, code, language}',
        },
        location: { type: 'object', rule: 'must be a location object' },
      }),
      rcs: chat('rcs', {
        message: objectOf(
          { text: chatText('rcs'), suggestions: { type: 'array', items: { type: 'object' }, rule: 'must be a list of suggestion objects' } },
          ['text'],
          { rule: 'must be an object {text, suggestions}' },
        ),
        file: { type: 'object', required: ['url'], rule: 'must be an object {url, force_refresh, suggestions}' },
        card: { type: 'object', rule: 'must be a card object' },
        carousel: { type: 'object', rule: 'must be a carousel object' },
      }),
      viber: objectOf({ text, sender: anyString, expiration: seconds, button }, kind === 'promotional' ? ['sender', 'button'] : ['sender']),
      sms: objectOf({ text, ...sender('2.0'), unicode: flag }, [], senderValueRequired('2.0')),
    },
    [],
    { minProperties: 1, rule: 'must hold viber, whatsapp, rcs and/or sms, in the order they are tried' },
  );
}

const recipientEntry: Schema = {
  anyOf: [phone, objectOf({ number: phone, text, variables }, ['number'])],
  rule: 'must be a phone number or an object {number, text, variables}',
};

const oneRecipientSource: Schema = {
  anyOf: [{ required: ['number'] }, { required: ['groups'] }, { required: ['admins'] }],
  rule: 'one of number, groups, admins is required',
};

const smsSettingsV1 = { unicode: flag, flash: flag, ...sender('1.0') };

/** What both advanced promotional versions take, before and after their SMS settings. */
const promotionalRecipients = {
  number: listOf(recipientEntry, 'must be a list of recipients'),
  groups: ids,
  admins: ids,
  text,
};
const promotionalDelivery = {
  country,
  schedule,
  duplicates_check: { enum: ['same_text', 'same_number', null], rule: 'must be same_text, same_number or null' },
};

export const SCHEMAS: Record<string, Schema> = {
  'promotional advanced 1.0': body(
    {
      ...promotionalRecipients,
      ...smsSettingsV1,
      ...promotionalDelivery,
    },
    [],
    { allOf: [oneRecipientSource, senderValueRequired('1.0')] },
  ),
  'promotional advanced 2.0': body(
    {
      ...promotionalRecipients,
      channel: channel('promotional'),
      ...promotionalDelivery,
    },
    [],
    { allOf: [oneRecipientSource] },
  ),
  'promotional simple 1.0': body(
    {
      number: { type: 'string', pattern: '^[0-9]{3,20}(;[0-9]{3,20})*$', rule: 'must be phone numbers separated by ;' },
      text,
      ...smsSettingsV1,
      country,
      schedule,
    },
    ['number', 'text'],
    { allOf: [senderValueRequired('1.0')] },
  ),
  'transactional advanced 1.0': body(
    {
      number: phone,
      admin: { type: 'integer', minimum: 0, rule: 'must be an integer administrator id' },
      text,
      variables,
      ...smsSettingsV1,
      country,
      schedule,
      duplicates_check: onOff,
    },
    ['text'],
    { allOf: [{ anyOf: [{ required: ['number'] }, { required: ['admin'] }], rule: 'number or admin is required' }, senderValueRequired('1.0')] },
  ),
  'transactional advanced 2.0': body(
    {
      number: phone,
      text,
      variables,
      channel: channel('transactional'),
      country,
      schedule,
      duplicates_check: onOff,
    },
    ['number'],
  ),
  'transactional simple 1.0': body(
    {
      number: phone,
      text,
      ...smsSettingsV1,
      country,
    },
    ['number', 'text'],
    { allOf: [senderValueRequired('1.0')] },
  ),
  'info advanced 1.0': body({}),
  'info simple 1.0': body({}),
};

/** The other endpoints' bodies (the vendor's API pages), keyed by endpoint name. */
const wallet: Schema = { type: 'string', minLength: 1, rule: 'must be a wallet id such as bg1234567891234567' };
const phones = listOf(phone, 'must be a list of phone numbers');
const otpId: Schema = { type: 'string', minLength: 1, rule: 'must be the id the OTP send answered (msg.otpId)' };
const limit = (what: string, minimum: number): Schema => ({
  type: ['integer', 'null'],
  minimum,
  rule: `must be a whole number of ${what}, at least ${minimum} (empty: no limit)`,
});
const otpChannel = objectOf(
  {
    viber: objectOf({ sender: { type: 'string', minLength: 1, rule: 'must be the name of a registered Viber sender' }, expiration: seconds }, ['sender']),
    sms: objectOf(sender('2.0'), [], senderValueRequired('2.0')),
  },
  [],
  { minProperties: 1, rule: 'must hold viber and/or sms, in the order they are tried' },
);
const contact = objectOf(
  {
    type: { enum: ['person', 'company'], rule: 'must be person or company' },
    phone_mobile: phone,
    phone: { ...phone, rule: `(the secondary number) ${PHONE_RULE}` },
    gender: { enum: ['male', 'female', 'unknown'], rule: 'must be male, female or unknown' },
    country,
    ...Object.fromEntries(
      [
        'title_before',
        'first_name',
        'last_name',
        'title_after',
        'company_name',
        'email',
        'url',
        'street1',
        'street2',
        'city',
        'zip',
        'state',
        'company_number',
        'company_vat',
        'note',
        ...Array.from({ length: 10 }, (_, i) => `custom_field_${i}`),
      ].map((name) => [name, anyString]),
    ),
  },
  [],
  { minProperties: 1, rule: 'must be an object of contact fields (phone_mobile, first_name, last_name, email, ...)' },
);
const contactGroups = { groups: ids, group_name: text };
const byPhoneNumber = (extra: Schema = {}) => body({ phone_number: phone, ...extra }, ['phone_number', ...Object.keys(extra)]);

export const ENDPOINT_SCHEMAS: Record<string, Schema> = {
  'otp send': body(
    {
      number: phone,
      country,
      language: { type: 'string', pattern: '^[A-Za-z]{2}$', rule: 'must be a two-letter language code such as en or cs' },
      code_type: { enum: ['int', 'string', 'combined'], rule: 'must be int, string or combined' },
      code_length: { type: 'integer', minimum: 4, maximum: 100, rule: 'must be a whole number from 4 to 100' },
      request_quota_number: { type: 'integer', minimum: 1, rule: 'must be a whole number of requests a minute, at least 1' },
      request_quota_identification: {
        type: 'string',
        minLength: 1,
        rule: "must be a non-empty string that names who asks (the requester's IP address, say)",
      },
      trials_available_resend: limit('resends', 0),
      trials_available_verification: limit('verifications', 1),
      daily_limit: limit('requests a day', 1),
      expiration: seconds,
      channel: otpChannel,
    },
    ['number', 'request_quota_identification'],
  ),
  'otp resend': body({ id: otpId }, ['id']),
  'otp verify': body({ id: otpId, code: { type: 'string', minLength: 1, rule: 'must be the code the person typed (a non-empty string)' } }, ['id', 'code']),
  'number-check': body(
    {
      numbers: listOf(objectOf({ phone_number: phone, country }, ['phone_number']), 'must be a list of phone numbers'),
    },
    ['numbers'],
  ),
  'black-list check': body({ numbers: phones, wallet, route: { enum: ['promotional', 'transactional'], rule: 'must be promotional or transactional' } }, [
    'numbers',
  ]),
  'black-list add': body(
    {
      numbers: phones,
      wallet,
      type: { enum: ['black-list', 'opt-out'], rule: 'must be black-list or opt-out' },
      source_id: text,
      reason: anyString,
    },
    ['numbers'],
  ),
  'black-list remove': body({ number: phone, source_id: text, wallet }, [], {
    oneOf: [{ required: ['number'] }, { required: ['source_id'] }],
    rule: 'give number or source_id, not both',
  }),
  'address-book get': byPhoneNumber(),
  'address-book add': body({ ...contactGroups, data: contact }, ['data']),
  'address-book edit': byPhoneNumber({ data: contact }),
  'address-book import': body({ ...contactGroups, data: listOf(contact, 'must be a list of contacts') }, ['data']),
  'address-book remove': byPhoneNumber(),
  'address-book consent-show': byPhoneNumber(),
  'address-book consent-add': byPhoneNumber(),
  'address-book consent-remove': byPhoneNumber(),
};
Object.assign(SCHEMAS, ENDPOINT_SCHEMAS);

/** The request fields (not credentials) a body takes at top level. */
export function bodyFields(key: string): string[] {
  const properties = (SCHEMAS[key]?.properties ?? {}) as Record<string, unknown>;
  return Object.keys(properties).filter((name) => !(name in credentials));
}

export function schemaKey(kind: OperationKind, api: ApiFamily, version: ApiVersion): string {
  return `${kind} ${api} ${version}`;
}
