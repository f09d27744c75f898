/** What each endpoint node does with a msg: OTP, number check, blacklist, address book. */
import { isPhoneNumber, isPlainObject, normalizeNumber, type EndpointName } from '../../gateway';
import {
  numbersOf,
  oneNumber,
  takenBy,
  type EndpointContext,
  type EndpointHandler,
  type EndpointOutcome,
} from './endpoint-node';
import { mapInSteps, type Msg } from '../plumbing/runtime';
import { nodeInvalid } from '../plumbing/wording';

/** An action setting: the node's, or the default when a flow file has none. */
function actionOf<T extends string>(ctx: EndpointContext, actions: readonly T[]): T {
  const action = ctx.config.action;
  if (action === undefined || action === '') return actions[0] as T;
  if (!(actions as readonly string[]).includes(String(action)))
    throw nodeInvalid('action-unknown', { actions: actions.join(', '), action: String(action) });
  return action as T;
}

/** A setting read from the msg whose value is an object (msg.payload by default) is not that field. */
const scalar = (v: unknown): unknown => (isPlainObject(v) ? undefined : v);

const OTP_SEND_SETTINGS = [
  'language',
  'code_type',
  'code_length',
  'expiration',
  'request_quota_number',
  'trials_available_resend',
  'trials_available_verification',
  'daily_limit',
];
/**
 * The OTP's security settings: only the panel sets them, never a msg (a caller could loosen them). Its own list, so a
 * setting that stops being copied from the panel stays locked.
 */
const OTP_LOCKED = [
  'code_type',
  'code_length',
  'expiration',
  'request_quota_number',
  'request_quota_identification',
  'trials_available_resend',
  'trials_available_verification',
  'daily_limit',
] as const;

type OtpSent = { id?: unknown };

export const otp: EndpointHandler = async (ctx) => {
  const action = actionOf(ctx, ['send', 'resend', 'verify'] as const);
  const { msg } = ctx;
  if (action === 'send') {
    const fields: Record<string, unknown> = {
      number: scalar(await ctx.read('number')),
      country: await ctx.read('country'),
    };
    for (const key of OTP_SEND_SETTINGS) fields[key] = ctx.config[key];
    // Who asks, for the gateway's per-minute quota: an http in node's requester, else this node.
    const req = msg.req as { ip?: unknown } | undefined;
    fields.request_quota_identification =
      (await ctx.read('request_quota_identification')) ??
      (typeof req?.ip === 'string' && req.ip ? req.ip : ctx.node.id);
    if (Array.isArray(ctx.config.channel) && ctx.config.channel.length) fields.channel = ctx.config.channel;
    const panel = takenBy('otp send', fields);
    const data = (await ctx.call('otp send', { ...panel, ...ctx.overrides('otp send', panel, OTP_LOCKED) })) as OtpSent;
    msg.otpId = data.id;
    msg.payload = data;
    return { outputs: [msg, null], status: { key: 'otp-sent' } };
  }
  const id = scalar(await ctx.read('otpId'));
  if (action === 'resend') {
    // The id comes only from its own setting: an empty flow.otpId is not filled from a msg.
    const data = (await ctx.call('otp resend', { ...ctx.overrides('otp resend', { id }, ['id']), id })) as OtpSent;
    msg.otpId = data.id ?? id;
    msg.payload = data;
    return { outputs: [msg, null], status: { key: 'otp-sent' } };
  }
  // The id and the code come only from their own settings (a msg cannot point a code at another OTP).
  const code = await ctx.read('code');
  const fields = {
    ...ctx.overrides('otp verify', { id, code }, ['id', 'code']),
    id,
    code: typeof code === 'number' ? String(code) : scalar(code),
  };
  const data = (await ctx.call('otp verify', fields)) as { verified?: unknown };
  msg.otpId = fields.id;
  msg.payload = data;
  const right = data.verified === true;
  return {
    outputs: right ? [msg, null] : [null, msg],
    status: right ? { key: 'otp-right' } : { key: 'otp-wrong', fill: 'yellow' },
  };
};

/**
 * One msg per record, on port 1 where `first` holds, else port 2; the status counts both, yellow when `warnOn` has any.
 */
async function split<T>(
  ctx: EndpointContext,
  records: T[],
  first: (record: T) => boolean,
  key: string,
  warnOn: 'port 1' | 'port 2',
): Promise<EndpointOutcome> {
  const ports: [Msg[], Msg[]] = [[], []];
  (await ctx.parts(records)).forEach((out, index) => ports[first(records[index] as T) ? 0 : 1].push(out));
  const [one, two] = ports;
  return {
    outputs: [one.length ? one : null, two.length ? two : null],
    status: {
      key,
      fill: ports[warnOn === 'port 1' ? 0 : 1].length ? 'yellow' : 'green',
      params: { sent: one.length, rejected: two.length },
    },
  };
}

/** The numbers a call takes: the payload's own, else the panel's; one at least. */
function requiredNumbers(own: Record<string, unknown>, panel: unknown): string[] {
  const numbers = own.numbers !== undefined ? numbersOf(own.numbers, 'numbers') : numbersOf(panel);
  if (numbers.length === 0) throw nodeInvalid('number-required', undefined, { key: 'no-recipient' });
  return numbers;
}

export const numberCheck: EndpointHandler = async (ctx) => {
  const panel = await ctx.read('number');
  const given = requiredNumbers(ctx.overrides('number-check', { numbers: scalar(panel) }), panel);
  const country = await ctx.read('country');
  const checked = await mapInSteps(given, (n) => isPhoneNumber(n));
  const possible = given.filter((_, i) => checked[i]);
  const numbers = possible.map((n) => (country ? { phone_number: n, country } : { phone_number: n }));
  const answer = (possible.length > 0 ? await ctx.call('number-check', { numbers }) : {}) as Record<string, unknown>;
  const records = await mapInSteps(given, (number, i) => {
    // The gateway keys its answer by the number as sent (normalised).
    const record = checked[i] ? (answer[normalizeNumber(number)] ?? answer[number]) : undefined;
    // A number the node's own checks find impossible: answered as the gateway would.
    return isPlainObject(record)
      ? record
      : { phone_number: number, valid: false, country: null, call_prefix: null, network_code: null, network_name: '' };
  });
  return split(ctx, records, (record) => record.valid === true, 'checked', 'port 2');
};

export const blacklist: EndpointHandler = async (ctx) => {
  const action = actionOf(ctx, ['check', 'add', 'remove'] as const);
  const { msg, config } = ctx;
  if (action === 'remove') {
    const own = ctx.overrides('black-list remove', { wallet: config.wallet, source_id: config.source_id });
    const source = own.source_id ?? (own.number === undefined ? config.source_id : undefined);
    const fields: Record<string, unknown> = { wallet: config.wallet, ...own };
    if (source !== undefined && source !== '') fields.source_id = source;
    else if (own.number === undefined) fields.number = oneNumber(await ctx.read('number'), 'number');
    msg.payload = await ctx.call('black-list remove', takenBy('black-list remove', fields));
    return { outputs: [msg, null], status: { key: 'removed' } };
  }
  const name: EndpointName = action === 'add' ? 'black-list add' : 'black-list check';
  const panelNumbers = await ctx.read('number');
  const reason = action === 'add' ? await ctx.read('reason') : undefined;
  const own = ctx.overrides(name, {
    numbers: scalar(panelNumbers),
    wallet: config.wallet,
    type: config.listType,
    route: config.route,
    reason,
    source_id: config.source_id,
  });
  const numbers = requiredNumbers(own, panelNumbers);
  if (action === 'add') {
    const fields = {
      wallet: config.wallet,
      type: config.listType,
      reason,
      source_id: config.source_id,
      ...own,
      numbers,
    };
    msg.payload = await ctx.call('black-list add', takenBy('black-list add', fields));
    return { outputs: [msg, null], status: { key: 'added' } };
  }
  const fields = { wallet: config.wallet, route: config.route, ...own, numbers };
  const answer = (await ctx.call('black-list check', takenBy('black-list check', fields))) as Record<string, unknown>;
  const records = await mapInSteps(numbers, (given) => {
    const number = normalizeNumber(given);
    return { number, listed: answer[number] === true || answer[given] === true };
  });
  return split(ctx, records, (record) => record.listed, 'listed', 'port 1');
};

const CONTACT_ACTIONS = [
  'get',
  'add',
  'edit',
  'import',
  'remove',
  'consent-show',
  'consent-add',
  'consent-remove',
] as const;
/** The request fields beside a contact's own, which an object msg.payload may carry too. */
const CALL_FIELDS = new Set(['phone_number', 'data', 'groups', 'group_name']);

export const contacts: EndpointHandler = async (ctx) => {
  const action = actionOf(ctx, CONTACT_ACTIONS);
  const name = `address-book ${action}` as EndpointName;
  const { msg, config } = ctx;
  const given = await ctx.read('phone_number');
  const panel: Record<string, unknown> = {
    phone_number: isPlainObject(given) || Array.isArray(given) ? undefined : oneNumber(given, 'phone_number'),
    groups: await ctx.read('groups'),
    group_name: config.group_name,
  };
  const fields: Record<string, unknown> = { ...panel, ...ctx.overrides(name, panel) };
  if (action === 'add' || action === 'edit' || action === 'import') {
    // The contact itself may be msg.payload (an array of them to import), beside or instead of `data`.
    if (fields.data === undefined && Array.isArray(msg.payload) && action === 'import') fields.data = msg.payload;
    if (fields.data === undefined && isPlainObject(msg.payload)) {
      const data = Object.fromEntries(Object.entries(msg.payload).filter(([key]) => !CALL_FIELDS.has(key)));
      if (Object.keys(data).length) fields.data = action === 'import' ? [data] : data;
    }
    if (
      action === 'add' &&
      isPlainObject(fields.data) &&
      fields.data.phone_mobile === undefined &&
      fields.phone_number !== undefined
    ) {
      fields.data = { phone_mobile: fields.phone_number, ...fields.data };
    }
    if (fields.data === undefined) throw nodeInvalid('data-required');
  }
  msg.payload = await ctx.call(name, takenBy(name, fields));
  return { outputs: [msg], status: { key: action } } satisfies EndpointOutcome;
};
