/** A msg's request fields: the settings and template; an object msg.payload fills what the panel leaves. */
import type { Node, NodeAPI } from 'node-red';
import {
  bodyFields,
  bodyShape,
  isPhoneNumber,
  isPlainObject,
  schemaKey,
  SEND_FIELDS,
  sendOperation,
  VERSIONS,
} from '../../gateway';
import type { ApiVersion, GatewayError, Operation, SendField, SendFields } from '../../gateway';
import { DEFINITIONS, typedSettings } from '../definitions';
import { evaluate, isEmptySetting, readSetting, settingWaits, type Msg, type TypedSetting } from '../plumbing/runtime';
import { nodeInvalid, nodeWording } from '../plumbing/wording';
import type { Wording } from '../../gateway/wording';

export type SendConfig = Record<string, unknown>;

const channelHasText = (channel: unknown) =>
  Array.isArray(channel) && channel.some((c) => isPlainObject(c) && typeof c.text === 'string' && c.text !== '');

/** Settings chosen from a list in the panel. */
const PLAIN_FIELDS: SendField[] = ['unicode', 'flash', 'sender_id', 'duplicates_check'];

export function nodeOperation(kind: 'promotional' | 'transactional', config: SendConfig): Operation {
  const api = config.api === 'simple' ? 'simple' : 'advanced';
  // A version the family does not offer (or none) takes the family's default.
  const version = (VERSIONS[kind][api] as readonly string[]).includes(String(config.version))
    ? (config.version as ApiVersion)
    : undefined;
  return sendOperation(kind, {
    api,
    version,
    encoding: api === 'simple' && config.encoding === 'form' ? 'form' : undefined,
  });
}

/** What a node's settings contribute to every msg, worked out once when the node starts. */
export interface FieldPlan {
  /** Every TypedInput setting the operation takes (where the node looks, for an error). */
  typed: [SendField, TypedSetting][];
  /** The ones that are set, in the same order (the first unreadable one is the error). */
  given: [SendField, TypedSetting][];
  plain: [SendField, unknown][];
  channel: unknown[] | undefined;
  template: string;
  /** Listed settings the user changed from their default: msg.payload does not replace them. */
  set: ReadonlySet<SendField>;
  warned: Set<string>;
}

export function fieldPlan(config: SendConfig, operation: Operation): FieldPlan {
  const shape = bodyShape(operation);
  // Only what the chosen API and version take: a setting hidden by the panel stays out.
  const taken = new Set(bodyFields(schemaKey(operation.kind, shape.api, shape.version)));
  const typed: [SendField, TypedSetting][] = [];
  for (const [field, fallback] of Object.entries(typedSettings(`bulkgate-${operation.kind}`)) as [
    SendField,
    { type: string; value: string },
  ][]) {
    // In 2.0 the sender lives in the channel cascade, so sender_id_value is not taken here.
    if (!taken.has(field)) continue;
    typed.push([
      field,
      config[field] === undefined
        ? fallback
        : { value: config[field], type: config[`${field}Type`] as string | undefined },
    ]);
  }
  const plain = PLAIN_FIELDS.map((field): [SendField, unknown] => [field, config[field]]).filter(
    ([field, value]) => taken.has(field) && value !== undefined && value !== '' && value !== false,
  );
  const defaults = DEFINITIONS[`bulkgate-${operation.kind}`]?.settings ?? {};
  const set = new Set(plain.filter(([field, value]) => value !== defaults[field]?.value).map(([field]) => field));
  const channel =
    taken.has('channel') && Array.isArray(config.channel) && config.channel.length ? config.channel : undefined;
  // A payload's channel replaces the cascade only while it is the default one (SMS, nothing set).
  if (channel && !isDefaultCascade(channel)) set.add('channel');
  const template = typeof config.text === 'string' ? config.text : '';
  if (template) set.add('text');
  return {
    typed,
    given: typed.filter(([, setting]) => !isEmptySetting(setting)),
    plain,
    channel,
    template,
    set,
    warned: new Set(),
  };
}

/** No recipient: where the node looked, and where the msg holds a number instead (payload, topic). */
export function noRecipient(plan: FieldPlan, fields: SendFields, msg: Msg): GatewayError | undefined {
  if (
    fields.number !== undefined ||
    fields.groups !== undefined ||
    fields.admins !== undefined ||
    fields.admin !== undefined
  )
    return undefined;
  const setting = plan.typed.find(([field]) => field === 'number')?.[1];
  const where = setting ? describeSetting(setting) : nodeWording('setting.nothing');
  const elsewhere = (['payload', 'topic'] as const).find(
    (key) => typeof msg[key] === 'string' && isPhoneNumber(msg[key] as string),
  );
  return elsewhere
    ? nodeInvalid('no-number-elsewhere', { where, elsewhere }, { key: 'no-recipient' })
    : nodeInvalid('no-number', { where }, { key: 'no-recipient' });
}

/** Where a TypedInput reads from, as a user reads it in the panel. */
function describeSetting({ type, value }: TypedSetting): string | Wording {
  if (type === 'msg' || type === 'flow' || type === 'global') return `${type}.${String(value ?? '')}`;
  if (type === 'env') return nodeWording('setting.env', { name: String(value ?? '') });
  return nodeWording(type === 'jsonata' ? 'setting.jsonata' : 'setting.empty');
}

/** The default cascade: SMS alone, with none of its settings changed. */
function isDefaultCascade(channel: unknown[]): boolean {
  const only = channel[0];
  if (channel.length !== 1 || !isPlainObject(only) || only.type !== 'sms') return false;
  return Object.entries(only).every(
    ([key, value]) => key === 'type' || ([undefined, null, '', false, 'auto'] as unknown[]).includes(value),
  );
}

export async function sendFields(
  RED: NodeAPI,
  node: Node,
  plan: FieldPlan,
  msg: Msg,
  onIgnored?: (field: string) => void,
): Promise<SendFields> {
  const fields: SendFields = {};
  // The panel's settings that gave a value, which a payload key does not replace (object payloads only).
  const fromPanel = isPlainObject(msg.payload) ? new Set<SendField>(plan.set) : undefined;

  const take = (field: SendField, value: unknown) => {
    if (value === undefined) return;
    fields[field] = value;
    fromPanel?.add(field);
  };
  // Most settings are read at once; only flow, global and JSONata ones make it wait (an await each).
  for (const [field, setting] of plan.given)
    take(
      field,
      settingWaits(setting)
        ? await evaluate(RED, node, msg, field, setting)
        : readSetting(RED, node, msg, field, setting),
    );
  for (const [field, value] of plan.plain) fields[field] = value;
  if (plan.channel) {
    // Channel texts, and a WhatsApp or RCS message's text, are templates too.
    fields.channel = plan.channel.map((c: unknown) => {
      if (!isPlainObject(c)) return c;
      let out = typeof c.text === 'string' && c.text ? { ...c, text: renderText(node, c.text, msg) } : c;
      const message = c.message;
      if (isPlainObject(message) && typeof message.text === 'string' && message.text)
        out = { ...out, message: { ...message, text: renderText(node, message.text, msg) } };
      return out;
    });
  }

  if (plan.template) fields.text = renderText(node, plan.template, msg);
  else if (typeof msg.payload === 'string') fields.text = msg.payload;
  else if (typeof msg.payload === 'number' && !channelHasText(fields.channel)) {
    // An inject node's default payload is a timestamp: sent as the text, it would be digits.
    throw nodeInvalid('timestamp-as-text', undefined, { key: 'no-text' });
  }

  if (!fromPanel || !isPlainObject(msg.payload)) return fields;
  for (const field of SEND_FIELDS) {
    if (!Object.prototype.hasOwnProperty.call(msg.payload, field)) continue;
    if (!fromPanel.has(field)) fields[field] = msg.payload[field];
    else if (!plan.warned.has(field) && msg.payload[field] !== fields[field]) {
      plan.warned.add(field);
      onIgnored?.(field);
    }
  }
  return fields;
}

let mustache: typeof import('mustache') | undefined;

/** As the core template node (`{{flow.x}}` too) but unescaped (not HTML); `<name>` reaches the gateway. */
function renderText(node: Node, template: string, msg: Msg): string {
  if (!template.includes('{{')) return template;
  const context = node.context();
  const store = (scope: 'flow' | 'global') => {
    const get = (key: string | symbol) => (typeof key === 'string' ? context[scope].get(key) : undefined);
    return new Proxy({}, { get: (_target, key) => get(key), has: (_target, key) => get(key) !== undefined });
  };
  const view = { ...msg, flow: store('flow'), global: store('global') };
  // Loaded with the first template, not with the package.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  mustache ??= require('mustache') as typeof import('mustache');
  try {
    return mustache.render(template, view, {}, { escape: (value: unknown) => String(value) });
  } catch (error) {
    throw nodeInvalid('template-unfilled', { cause: (error as Error).message });
  }
}
