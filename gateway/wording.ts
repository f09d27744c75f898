// An error's sentence as a catalog key and its parameters. The standalone client words it in English from ERRORS; the
// nodes word it in the user's language from the `errors` section of locales/<lang>/shared.json, whose en-US text is
// ERRORS word for word (a test keeps them equal).

/** A parameter is a value as it is (a field name, a number) or a sentence of its own (a schema's rule). */
export type WordingParam = string | number | Wording;

export interface Wording {
  key: string;
  params?: Record<string, WordingParam>;
}

/** The English sentences, `__name__` a parameter (Node-RED's i18next interpolation). */
export const ERRORS = {
  // Checks of a request before it is sent.
  'text-too-long': '__field__ is __characters__ characters; the limit is __limit__ (__unicodeLimit__ with Unicode)',
  'not-boolean': '__field__ must be true or false',
  'not-string': '__field__ must be a string',
  'not-recipient': '__field__ must be a phone number or an object {number, text, variables}',
  'not-phone': '__field__ must be a phone number',
  'not-recipient-field': '__field__ is not a field of a recipient entry (number, text, variables)',
  'recipient-text-advanced': '__field__ carries text or variables, which only the advanced API takes',
  'one-number': 'number must be one phone number for a transactional message (it holds __numbers__)',
  'not-channel-entry': '__field__ must be a __channels__ channel',
  'channel-twice': 'channel lists __channel__ twice',
  'not-channel-object': 'channel must be an object holding __channels__ channels',
  'not-a-channel': '__field__ is not a channel (__channels__)',
  'not-object': '__field__ must be an object',
  'not-send': 'info is not a send operation',
  'v2-only': '__field__ exists in version 2.0 only',
  'flash-v1-only': 'flash exists in version 1.0 only; version 2.0 has no flash SMS',
  'admin-v1-only': 'admin exists in version 1.0 only; version 2.0 sends to a number',
  'advanced-only': '__field__ exists in the advanced API only',
  'variables-advanced-only': 'variables exist in the advanced API only',
  'variables-per-recipient': 'variables belong to each recipient in a promotional message: number[i].variables',
  'bad-schedule': 'schedule must be a Date, a unix timestamp (seconds or milliseconds) or an ISO 8601 date-time',
  'schedule-simple': 'schedule is not taken by the simple transactional API',
  'text-required': 'text is required',
  'text-required-v2': 'text is required (or a text in every channel)',
  'text-required-promotional': 'text is required when number holds plain numbers or groups or admins are used',
  'api-unknown': 'api must be one of __apis__',
  'version-unknown': 'version __version__ does not exist for the __api__ __kind__ API (it offers __versions__)',
  'encoding-unknown':
    '__method__ with a __encoding__ body is not offered by the __api__ __kind__ API (it takes __allowed__)',
  'no-endpoint': 'there is no __name__ endpoint',
  'no-operation': 'there is no __name__ operation',
  'credential-field': '__field__ is not a field of the __name__ request (it comes from the account)',
  'base-url-not-url': 'baseUrl must be a URL such as https://portal.bulkgate.com',
  'base-url-not-https': 'baseUrl must use https:// (plain http:// only for loopback hosts such as the simulator)',
  // A wire body the schemas refuse: the field and the schema's rule.
  'request-not-valid': 'the request is not valid',
  required: '__field__ is required',
  'required-sender-value': '__field__ is required when sender_id is __types__',
  'unknown-field': '__field__ is not a field of the __name__ request',
  'field-rule': '__field__ __rule__',
  'field-not-valid': '__field__ is not valid',
  'request-rule': 'the request __rule__',
  // Each schema rule: what a field must be.
  rule: {
    phone:
      'must be a phone number: 3 to 20 digits once spaces, dashes, dots, brackets and a leading + or 00 are removed',
    'secondary-phone':
      '(the secondary number) must be a phone number: 3 to 20 digits once spaces, dashes, dots, brackets and a leading + or 00 are removed',
    'non-empty-string': 'must be a non-empty string',
    string: 'must be a string',
    'string-or-number': 'must be a string or a number',
    variables: 'must be an object of names to strings or numbers',
    'integer-id': 'must be an integer id',
    'integer-ids': 'must be a list of integer ids',
    country: 'must be a two-letter ISO 3166-1 country code such as CZ or GB',
    schedule: 'must be a unix timestamp or an ISO 8601 date-time',
    boolean: 'must be true or false',
    'on-off': 'must be on or off',
    seconds: 'must be a whole number of seconds, at least 1',
    credential: 'is required (set it in the account)',
    sender: 'must be one of __types__ or a sender profile id (integer) in version __version__',
    'chat-text': 'must be a text of 1 to __limit__ characters',
    'chat-sender': 'must be the name of a registered __platform__ sender',
    'one-content': 'must hold exactly one of __contents__',
    button: 'must be an object with caption and url',
    'whatsapp-message': 'must be an object {text, preview_url}',
    template: 'must be the name of an approved template',
    language: 'must be a language code such as en',
    'template-header': "must be the template header's object (type and its value)",
    'template-body': "must be the template body's parameters",
    'template-buttons': "must be a list of the template buttons' objects",
    'whatsapp-template': 'must be an object {template, language, header, body, buttons}',
    file: 'must be a file object',
    otp: 'must be an object {template, code, language}',
    location: 'must be a location object',
    suggestions: 'must be a list of suggestion objects',
    'rcs-message': 'must be an object {text, suggestions}',
    'rcs-file': 'must be an object {url, force_refresh, suggestions}',
    card: 'must be a card object',
    carousel: 'must be a carousel object',
    cascade: 'must hold viber, whatsapp, rcs and/or sms, in the order they are tried',
    recipient: 'must be a phone number or an object {number, text, variables}',
    'one-recipient-source': 'one of number, groups, admins is required',
    recipients: 'must be a list of recipients',
    'promotional-duplicates': 'must be same_text, same_number or null',
    'simple-numbers': 'must be phone numbers separated by ;',
    'admin-id': 'must be an integer administrator id',
    'number-or-admin': 'number or admin is required',
    wallet: 'must be a wallet id such as bg1234567891234567',
    phones: 'must be a list of phone numbers',
    'otp-id': 'must be the id the OTP send answered (msg.otpId)',
    'limit-resends': 'must be a whole number of resends, at least __minimum__ (empty: no limit)',
    'limit-verifications': 'must be a whole number of verifications, at least __minimum__ (empty: no limit)',
    'limit-daily': 'must be a whole number of requests a day, at least __minimum__ (empty: no limit)',
    'viber-sender': 'must be the name of a registered Viber sender',
    'otp-cascade': 'must hold viber and/or sms, in the order they are tried',
    'contact-type': 'must be person or company',
    gender: 'must be male, female or unknown',
    contact: 'must be an object of contact fields (phone_mobile, first_name, last_name, email, ...)',
    'otp-language': 'must be a two-letter language code such as en or cs',
    'code-type': 'must be int, string or combined',
    'code-length': 'must be a whole number from 4 to 100',
    'request-quota': 'must be a whole number of requests a minute, at least 1',
    requester: "must be a non-empty string that names who asks (the requester's IP address, say)",
    'otp-code': 'must be the code the person typed (a non-empty string)',
    route: 'must be promotional or transactional',
    'blacklist-type': 'must be black-list or opt-out',
    'number-or-source': 'give number or source_id, not both',
    contacts: 'must be a list of contacts',
  },
  // The gateway's answer: its type's sentence, the type and the HTTP status.
  answer: '__sentence__ (__type__, HTTP __status__)',
  'answer-detail': '__sentence__ (__type__, HTTP __status__): __detail__',
  type: {
    'wrong-credentials':
      'The gateway does not accept this application id and token: check them in the BulkGate account node (they come from the API application in the BulkGate portal)',
    low_credit: 'There is not enough credit on the account to send this',
    banned: 'The account or application is banned from sending',
    invalid_numeric_sender: 'The numeric sender is not valid',
    empty_message: 'The message text is empty',
    admin_not_found: 'The administrator was not found',
    no_recipients: 'The request has no recipient',
    blacklisted_number: 'The number is on the blacklist',
    method_not_allowed: 'The gateway does not allow this HTTP method here',
    unknown_action: 'The gateway does not know this endpoint',
    unsupported_api_version: 'The gateway does not support this API version',
    invalid_phone_number: 'Invalid phone number',
    invalid_id_provided:
      'The gateway knows no one-time password by this id (it has expired, or msg.otpId is not the id the send answered)',
    invalid_input_parameters: 'The gateway did not accept the fields of this request',
    invalid_wallet: "The wallet is not one of this account's wallets",
    you_must_select_wallet: 'The account has more than one wallet: set the wallet to use',
    no_valid_numbers: 'None of the numbers is a valid phone number',
    number_already_exists: 'The number is already on the list',
    missing_parameters: 'The gateway found a required field missing',
    use_number_or_source_id_not_both: 'Give number or source_id, not both',
    number_not_found: 'The number is not in the address book',
    refused: 'The gateway refused the request',
    'refused-described': 'The gateway refused the request: __described__',
  },
  // No answer, or not the documented one.
  'rate-limited': 'The gateway asked to slow down (HTTP 429)',
  timeout: 'No answer from the gateway at __url__ within __ms__ ms',
  'proxy-refused': 'The proxy would not connect to the gateway at __url__ (HTTP __status__ from the proxy)',
  'unreachable-code': 'Could not reach the gateway at __url__ (__code__)',
  broke: 'Could not reach the gateway at __url__; the connection broke before an answer',
  'broke-code': 'Could not reach the gateway at __url__ (__code__); the connection broke before an answer',
  'bad-response': 'The gateway answered HTTP __status__ with __what__, not the documented JSON',
  what: {
    'not-json': 'a body that is not JSON',
    'no-data': 'JSON without data or error',
    'too-large': 'an answer larger than 64 MB',
    'promotional-result': 'a promotional result without total and response',
    'transactional-result': 'a transactional result without a status',
    'balance-result': 'a balance without credit',
  },
  closed: 'The request was stopped because the node was closed (redeploy or shutdown)',
  withdrawn: 'Not sent: withdrawn before it reached the gateway',
} as const;

/** The dotted keys of a table of sentences. */
export type Leaves<T, P extends string = ''> = {
  [K in keyof T & string]: T[K] extends string ? `${P}${K}` : Leaves<T[K], `${P}${K}.`>;
}[keyof T & string];

/** Every key an error can carry. */
export type ErrorKey = Leaves<typeof ERRORS>;

export function wording(key: ErrorKey, params?: Record<string, WordingParam>): Wording {
  return params ? { key, params } : { key };
}

/** The English sentence of a wording (a key it does not know reads as the key). */
export function english(said: Wording): string {
  let text: unknown = ERRORS;
  for (const part of said.key.split('.')) text = (text as Record<string, unknown> | undefined)?.[part];
  if (typeof text !== 'string') return said.key;
  return fill(text, said.params, english);
}

/** A sentence's `__name__` parameters filled in, a sentence among them worded by `word`. */
export function fill(
  text: string,
  params: Record<string, WordingParam> | undefined,
  word: (said: Wording) => string,
): string {
  return text.replace(/__(\w+)__/g, (whole, name: string) => {
    const value = params?.[name];
    if (value === undefined) return whole;
    return typeof value === 'object' ? word(value) : String(value);
  });
}
