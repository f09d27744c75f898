/** The JSON schema of every wire body (the editor reads it too); a `rule` is a failure's sentence. */
import { SENDER_TYPES, SENDER_VALUE_KIND } from './senders';
import type { ApiFamily, ApiVersion, OperationKind } from './operations';
import { PHONE_DIGITS } from './recipients';
import { CHAT_CONTENTS, CHAT_TEXT_LIMITS } from './channels';
import { english, type ErrorKey, type Wording } from './wording';

type Schema = Record<string, unknown>;

/** Each rule's wording by its English sentence, for a check's error to carry. */
export const RULE_WORDING = new Map<string, Wording>();

/** A rule's English sentence, for the schema (the editor and the validators read it); its wording kept beside. */
function said(key: ErrorKey, params?: Record<string, string | number>): string {
  const wording: Wording = params ? { key, params } : { key };
  const sentence = english(wording);
  RULE_WORDING.set(sentence, wording);
  return sentence;
}

const phone: Schema = { type: 'string', pattern: PHONE_DIGITS, rule: said('rule.phone') };
const text: Schema = { type: 'string', minLength: 1, rule: said('rule.non-empty-string') };
const anyString: Schema = { type: 'string', rule: said('rule.string') };
const variables: Schema = {
  type: 'object',
  additionalProperties: { type: ['string', 'number'], rule: said('rule.string-or-number') },
  rule: said('rule.variables'),
};
const listOf = (items: Schema, rule: string): Schema => ({ type: 'array', minItems: 1, items, rule });
const ids = listOf({ type: 'integer', minimum: 0, rule: said('rule.integer-id') }, said('rule.integer-ids'));
const country: Schema = { type: 'string', pattern: '^[A-Za-z]{2}$', rule: said('rule.country') };
const schedule: Schema = { type: 'string', minLength: 1, rule: said('rule.schedule') };
const flag: Schema = { type: 'boolean', rule: said('rule.boolean') };
const onOff: Schema = { enum: ['on', 'off'], rule: said('rule.on-off') };
const seconds: Schema = { type: 'integer', minimum: 1, rule: said('rule.seconds') };
const credentials: Schema = {
  application_id: { type: 'string', minLength: 1, rule: said('rule.credential') },
  application_token: { type: 'string', minLength: 1, rule: said('rule.credential') },
  application_product: { type: 'string' },
};

function objectOf(properties: Schema, required: string[] = [], extra: Schema = {}): Schema {
  return {
    type: 'object',
    ...(required.length ? { required } : {}),
    additionalProperties: false,
    properties,
    ...extra,
  };
}

function body(properties: Schema, required: string[] = [], extra: Schema = {}): Schema {
  return objectOf({ ...credentials, ...properties }, ['application_id', 'application_token', ...required], extra);
}

function sender(version: ApiVersion): Schema {
  return {
    sender_id: {
      anyOf: [{ enum: SENDER_TYPES[version] }, { type: 'integer', minimum: 0 }],
      rule: said('rule.sender', { types: SENDER_TYPES[version].join(', '), version }),
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
  return { type: 'string', minLength: 1, maxLength: limit, rule: said('rule.chat-text', { limit }) };
}

function chat(name: 'whatsapp' | 'rcs', contents: Record<string, Schema>): Schema {
  const kinds = CHAT_CONTENTS[name];
  const sender = {
    type: 'string',
    minLength: 1,
    rule: said('rule.chat-sender', { platform: name === 'rcs' ? 'RCS' : 'WhatsApp' }),
  };
  return objectOf({ sender, expiration: seconds, ...contents }, ['sender'], {
    oneOf: kinds.map((kind) => ({ required: [kind] })),
    rule: said('rule.one-content', { contents: kinds.join(', ') }),
  });
}

function channel(kind: OperationKind): Schema {
  const button = objectOf({ caption: text, url: text }, ['caption', 'url'], { rule: said('rule.button') });
  return objectOf(
    {
      whatsapp: chat('whatsapp', {
        message: objectOf({ text: chatText('whatsapp'), preview_url: flag }, ['text'], {
          rule: said('rule.whatsapp-message'),
        }),
        template: objectOf(
          {
            template: { type: 'string', minLength: 1, rule: said('rule.template') },
            language: { type: 'string', minLength: 2, rule: said('rule.language') },
            header: { type: 'object', rule: said('rule.template-header') },
            body: { type: ['array', 'object'], rule: said('rule.template-body') },
            buttons: { type: 'array', items: { type: 'object' }, rule: said('rule.template-buttons') },
          },
          ['template'],
          { rule: said('rule.whatsapp-template') },
        ),
        file: { type: 'object', rule: said('rule.file') },
        otp: {
          type: 'object',
          required: ['template', 'code'],
          properties: {
            template: { type: 'string', minLength: 1 },
            code: { type: ['string', 'number'] },
            language: { type: 'string' },
          },
          rule: said('rule.otp'),
        },
        location: { type: 'object', rule: said('rule.location') },
      }),
      rcs: chat('rcs', {
        message: objectOf(
          {
            text: chatText('rcs'),
            suggestions: { type: 'array', items: { type: 'object' }, rule: said('rule.suggestions') },
          },
          ['text'],
          { rule: said('rule.rcs-message') },
        ),
        file: { type: 'object', required: ['url'], rule: said('rule.rcs-file') },
        card: { type: 'object', rule: said('rule.card') },
        carousel: { type: 'object', rule: said('rule.carousel') },
      }),
      viber: objectOf(
        { text, sender: anyString, expiration: seconds, button },
        kind === 'promotional' ? ['sender', 'button'] : ['sender'],
      ),
      sms: objectOf({ text, ...sender('2.0'), unicode: flag }, [], senderValueRequired('2.0')),
    },
    [],
    { minProperties: 1, rule: said('rule.cascade') },
  );
}

const recipientEntry: Schema = {
  anyOf: [phone, objectOf({ number: phone, text, variables }, ['number'])],
  rule: said('rule.recipient'),
};

const oneRecipientSource: Schema = {
  anyOf: [{ required: ['number'] }, { required: ['groups'] }, { required: ['admins'] }],
  rule: said('rule.one-recipient-source'),
};

const smsSettingsV1 = { unicode: flag, flash: flag, ...sender('1.0') };

/** What both advanced promotional versions take, before and after their SMS settings. */
const promotionalRecipients = {
  number: listOf(recipientEntry, said('rule.recipients')),
  groups: ids,
  admins: ids,
  text,
};
const promotionalDelivery = {
  country,
  schedule,
  duplicates_check: { enum: ['same_text', 'same_number', null], rule: said('rule.promotional-duplicates') },
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
      number: { type: 'string', pattern: '^[0-9]{3,20}(;[0-9]{3,20})*$', rule: said('rule.simple-numbers') },
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
      admin: { type: 'integer', minimum: 0, rule: said('rule.admin-id') },
      text,
      variables,
      ...smsSettingsV1,
      country,
      schedule,
      duplicates_check: onOff,
    },
    ['text'],
    {
      allOf: [
        { anyOf: [{ required: ['number'] }, { required: ['admin'] }], rule: said('rule.number-or-admin') },
        senderValueRequired('1.0'),
      ],
    },
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
const wallet: Schema = { type: 'string', minLength: 1, rule: said('rule.wallet') };
const phones = listOf(phone, said('rule.phones'));
const otpId: Schema = { type: 'string', minLength: 1, rule: said('rule.otp-id') };
const otpCode: Schema = { type: 'string', minLength: 1, rule: said('rule.otp-code') };
const limit = (what: 'resends' | 'verifications' | 'daily', minimum: number): Schema => ({
  type: ['integer', 'null'],
  minimum,
  rule: said(`rule.limit-${what}`, { minimum }),
});
const otpChannel = objectOf(
  {
    viber: objectOf(
      { sender: { type: 'string', minLength: 1, rule: said('rule.viber-sender') }, expiration: seconds },
      ['sender'],
    ),
    sms: objectOf(sender('2.0'), [], senderValueRequired('2.0')),
  },
  [],
  { minProperties: 1, rule: said('rule.otp-cascade') },
);
const contact = objectOf(
  {
    type: { enum: ['person', 'company'], rule: said('rule.contact-type') },
    phone_mobile: phone,
    phone: { ...phone, rule: said('rule.secondary-phone') },
    gender: { enum: ['male', 'female', 'unknown'], rule: said('rule.gender') },
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
  { minProperties: 1, rule: said('rule.contact') },
);
const contactGroups = { groups: ids, group_name: text };
const byPhoneNumber = (extra: Schema = {}) =>
  body({ phone_number: phone, ...extra }, ['phone_number', ...Object.keys(extra)]);

export const ENDPOINT_SCHEMAS: Record<string, Schema> = {
  'otp send': body(
    {
      number: phone,
      country,
      language: { type: 'string', pattern: '^[A-Za-z]{2}$', rule: said('rule.otp-language') },
      code_type: { enum: ['int', 'string', 'combined'], rule: said('rule.code-type') },
      code_length: { type: 'integer', minimum: 4, maximum: 100, rule: said('rule.code-length') },
      request_quota_number: { type: 'integer', minimum: 1, rule: said('rule.request-quota') },
      request_quota_identification: { type: 'string', minLength: 1, rule: said('rule.requester') },
      trials_available_resend: limit('resends', 0),
      trials_available_verification: limit('verifications', 1),
      daily_limit: limit('daily', 1),
      expiration: seconds,
      channel: otpChannel,
    },
    ['number', 'request_quota_identification'],
  ),
  'otp resend': body({ id: otpId }, ['id']),
  'otp verify': body({ id: otpId, code: otpCode }, ['id', 'code']),
  'number-check': body(
    {
      numbers: listOf(objectOf({ phone_number: phone, country }, ['phone_number']), said('rule.phones')),
    },
    ['numbers'],
  ),
  'black-list check': body(
    { numbers: phones, wallet, route: { enum: ['promotional', 'transactional'], rule: said('rule.route') } },
    ['numbers'],
  ),
  'black-list add': body(
    {
      numbers: phones,
      wallet,
      type: { enum: ['black-list', 'opt-out'], rule: said('rule.blacklist-type') },
      source_id: text,
      reason: anyString,
    },
    ['numbers'],
  ),
  'black-list remove': body({ number: phone, source_id: text, wallet }, [], {
    oneOf: [{ required: ['number'] }, { required: ['source_id'] }],
    rule: said('rule.number-or-source'),
  }),
  'address-book get': byPhoneNumber(),
  'address-book add': body({ ...contactGroups, data: contact }, ['data']),
  'address-book edit': byPhoneNumber({ data: contact }),
  'address-book import': body({ ...contactGroups, data: listOf(contact, said('rule.contacts')) }, ['data']),
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
