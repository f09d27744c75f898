/**
 * The channel cascade editor (2.0): a drag-sortable list, stored as `channel: [{type, ...}]`, sent as the ordered
 * `channel` object.
 */
import { isAbsent } from '../../gateway/prepared';
import {
  CHANNELS,
  CHAT_EXPIRATION_DEFAULT,
  CHAT_TEXT_LIMITS,
  OTP_CHANNELS,
  VIBER_EXPIRATION_DEFAULT,
} from '../../gateway/channels';
import { PROFILE_ID_CHOICE, SENDER_TYPES } from '../../gateway/senders';
import { describeText, renderCounter, textFits } from './counter';
import { fillSenderSelect, senderValueKind, senderValueText } from './senders';
import { t } from './i18n';
import type { UnicodeMode } from '../../gateway/text';

export interface ChannelSetting {
  type: string;
  text?: string;
  sender?: string;
  expiration?: number | string;
  button?: { caption?: string; url?: string };
  sender_id?: string;
  sender_id_value?: string;
  unicode?: string;
  /** WhatsApp and RCS: a text message, or (WhatsApp) an approved template, as the wire takes them. */
  message?: { text?: string; preview_url?: boolean; suggestions?: unknown[] };
  template?: { template?: string; language?: string; body?: unknown; header?: unknown; buttons?: unknown[] };
}

export interface PanelNode {
  channel?: ChannelSetting[];
  [key: string]: unknown;
}

type Kind = 'promotional' | 'transactional' | 'otp';

/** The settings each channel type takes (the reference's channel objects). */
const CHANNEL_KEYS: Record<string, (keyof ChannelSetting)[]> = {
  viber: ['type', 'text', 'sender', 'expiration', 'button'],
  whatsapp: ['type', 'sender', 'expiration', 'message', 'template'],
  rcs: ['type', 'sender', 'expiration', 'message'],
  sms: ['type', 'text', 'sender_id', 'sender_id_value', 'unicode'],
};
/** What a one-time password's channels do not take: the gateway writes its text. */
const NOT_OTP: (keyof ChannelSetting)[] = ['text', 'button', 'unicode'];

const channelsFor = (kind: Kind): readonly string[] => (kind === 'otp' ? OTP_CHANNELS : CHANNELS);

/** A WhatsApp or RCS text's length as the platforms count it (characters, not UTF-16 units). */
const chatLength = (text: string): number => [...text].length;

// What is wrong with each channel, as the inputs to mark: for the node's validation and the panel.
// A channel after SMS is wrong: SMS always delivers, so nothing after it is ever tried.
function channelProblems(kind: Kind, channels: ChannelSetting[]): string[][] {
  const seen = new Set<string>();
  const smsAt = channels.findIndex((c) => c?.type === 'sms');
  return channels.map((c, index) => {
    const wrong: `bulkgate-${string}`[] = [];
    if (!c || typeof c !== 'object') return ['bulkgate-channel-type'];
    if (!channelsFor(kind).includes(c.type) || seen.has(c.type) || (smsAt >= 0 && index > smsAt))
      wrong.push('bulkgate-channel-type');
    seen.add(c.type);
    if (c.type === 'viber') {
      if (!c.sender) wrong.push('bulkgate-viber-sender');
      if (kind === 'promotional' && !c.button?.caption) wrong.push('bulkgate-viber-caption');
      if (kind === 'promotional' && !c.button?.url) wrong.push('bulkgate-viber-url');
      if (c.expiration !== undefined && !(Number(c.expiration) >= 1)) wrong.push('bulkgate-viber-expiration');
      if (kind !== 'otp' && !textFits(c.text, 'auto')) wrong.push('bulkgate-channel-text');
    } else if (c.type === 'whatsapp' || c.type === 'rcs') {
      if (!c.sender) wrong.push('bulkgate-chat-sender');
      if (c.expiration !== undefined && !(Number(c.expiration) >= 1)) wrong.push('bulkgate-chat-expiration');
      if (c.type === 'whatsapp' && c.template) {
        if (!c.template.template) wrong.push('bulkgate-chat-template');
        const { header, buttons } = c.template;
        if (header !== undefined && (typeof header !== 'object' || header === null || Array.isArray(header)))
          wrong.push('bulkgate-chat-header');
        if (buttons !== undefined && !Array.isArray(buttons)) wrong.push('bulkgate-chat-buttons');
      } else {
        const text = c.message?.text ?? '';
        if (!text || chatLength(text) > CHAT_TEXT_LIMITS[c.type]) wrong.push('bulkgate-chat-text');
      }
      if (c.message?.suggestions !== undefined && !Array.isArray(c.message.suggestions))
        wrong.push('bulkgate-chat-suggestions');
    } else if (c.type === 'sms') {
      if (c.sender_id && !SENDER_TYPES['2.0'].includes(c.sender_id) && c.sender_id !== PROFILE_ID_CHOICE)
        wrong.push('bulkgate-sms-sender');
      if (senderValueKind(c.sender_id ?? '') && !c.sender_id_value) wrong.push('bulkgate-sms-sender-value');
      if (kind !== 'otp' && !textFits(c.text, (c.unicode as UnicodeMode) || 'auto'))
        wrong.push('bulkgate-channel-text');
    }
    return wrong;
  });
}

/** None saved (an imported or older flow): the runtime sends a plain SMS. */
export function validCascade(kind: Kind, value: unknown): boolean {
  return (
    isAbsent(value) ||
    (Array.isArray(value) && channelProblems(kind, value as ChannelSetting[]).every((wrong) => wrong.length === 0))
  );
}

const rowsOf = (list: HTMLElement): HTMLElement[] =>
  ($(list).editableList('items').toArray() as unknown[]).map((r) => $(r)[0] as HTMLElement);

/** Marks each wrong input the way Node-RED's own panels do (`input-error`). */
function markProblems(list: HTMLElement, kind: Kind): void {
  const problems = channelProblems(kind, readCascade(list));
  rowsOf(list).forEach((row, i) => {
    const wrong = new Set<string>(problems[i]);
    for (const el of row.querySelectorAll<HTMLElement>('input, select, textarea')) {
      const name = [...el.classList].find((c) => c.startsWith('bulkgate-'));
      if (name) el.classList.toggle('input-error', wrong.has(name));
    }
  });
}

const create = <K extends keyof HTMLElementTagNameMap>(
  tag: K,
  props: Partial<HTMLElementTagNameMap[K]> = {},
): HTMLElementTagNameMap[K] => Object.assign(document.createElement(tag), props);

function field(label: string, input: HTMLElement): HTMLElement {
  const row = create('div', { className: 'bulkgate-channel-field' });
  row.append(create('label', { textContent: label }), input);
  return row;
}

const input = (value: string | number | undefined, props: Partial<HTMLInputElement> = {}) =>
  create('input', { type: 'text', value: value === undefined ? '' : String(value), ...props });

const textarea = (className: string, value: string, placeholder = '') =>
  create('textarea', { rows: 2, className, value, placeholder });

const jsonText = (value: unknown): string => (value === undefined ? '' : JSON.stringify(value));

export function setupCascade(
  list: HTMLElement,
  kind: Kind,
  saved: unknown,
  fallback: HTMLElement | null,
  onChange?: () => void,
): void {
  let loading = true;
  const changed = () => {
    if (loading) return;
    markProblems(list, kind);
    if (fallback) fallback.textContent = fallbackText(readCascade(list));
    onChange?.();
  };
  $(list).editableList({
    addButton: t('send.cascade.add'),
    sortable: true,
    removable: true,
    height: 'auto',
    addItem: (row: unknown, _index: number, data: ChannelSetting) => {
      const container = $(row)[0] as HTMLElement;
      const added = !loading && !data.type;
      // "+ channel": a channel SMS does not already cover, placed above SMS (nothing after SMS is tried).
      if (added)
        data.type =
          channelsFor(kind).find((name) => name !== 'sms' && !readCascade(list).some((c) => c.type === name)) ?? 'sms';
      renderChannel(container, kind, data, changed);
      const smsRow = added && rowsOf(list).find((r) => ($(r).data('data') as ChannelSetting)?.type === 'sms');
      const item = container.closest('li');
      if (item && smsRow && smsRow !== container) smsRow.closest('li')?.before(item);
      changed();
    },
    removeItem: () => changed(),
    sortItems: () => changed(),
  });
  const channels = Array.isArray(saved) && saved.length ? (saved as ChannelSetting[]) : [{ type: 'sms' }];
  for (const channel of channels) $(list).editableList('addItem', { ...channel });
  loading = false;
  changed();
}

function renderChannel(container: HTMLElement, kind: Kind, data: ChannelSetting, onChange: () => void): void {
  if (!data.type) data.type = 'sms';
  container.classList.add('bulkgate-channel');
  const type = create('select', { className: 'bulkgate-channel-type' });
  for (const name of channelsFor(kind)) type.add(new Option(t(`send.cascade.${name}`), name));
  type.value = data.type;
  const body = create('div', { className: 'bulkgate-channel-body' });
  container.append(type, body);
  const draw = () => {
    // Each channel type has its own default expiration (Viber 120 s, WhatsApp and RCS 3600 s).
    if (data.type !== type.value) delete data.expiration;
    data.type = type.value;
    // A channel switched to the other type keeps its text only.
    const keys = (CHANNEL_KEYS[data.type] ?? []).filter((key) => kind !== 'otp' || !NOT_OTP.includes(key));
    for (const key of Object.keys(data) as (keyof ChannelSetting)[]) if (!keys.includes(key)) delete data[key];
    body.textContent = '';
    if (data.type === 'whatsapp' || data.type === 'rcs') return renderChat(body, data, onChange);
    const text = textarea('bulkgate-channel-text', data.text ?? '', t('send.cascade.textPlaceholder'));
    const counter = document.createElement('div');
    const count = () => {
      data.text = text.value;
      const mode = (data.type === 'sms' ? (data.unicode as UnicodeMode) : 'auto') || 'auto';
      if (text.value) renderCounter(counter, describeText(text.value, mode));
      else counter.textContent = '';
      onChange();
    };
    text.addEventListener('input', count);
    if (kind !== 'otp') body.append(field(t('send.cascade.text'), text), counter);
    if (data.type === 'viber') renderViber(body, kind, data, onChange);
    else renderSms(body, kind, data, count);
    count();
  };
  type.addEventListener('change', draw);
  draw();
}

function senderFields(body: HTMLElement, prefix: 'viber' | 'chat', data: ChannelSetting, expirationDefault: number) {
  const sender = input(data.sender, {
    className: `bulkgate-${prefix}-sender`,
    placeholder: t('send.cascade.senderPlaceholder'),
  });
  const expiration = input(data.expiration ?? expirationDefault, {
    className: `bulkgate-${prefix}-expiration`,
    type: 'number',
    min: '1',
  });
  body.append(field(t('send.cascade.sender'), sender), field(t('send.cascade.expiration'), expiration));
  const sync = () => {
    data.sender = sender.value;
    data.expiration = expiration.value === '' ? undefined : Number(expiration.value);
  };
  return { inputs: [sender, expiration], sync };
}

function renderViber(body: HTMLElement, kind: Kind, data: ChannelSetting, onChange: () => void): void {
  const common = senderFields(body, 'viber', data, VIBER_EXPIRATION_DEFAULT);
  const caption = input(data.button?.caption, { className: 'bulkgate-viber-caption', placeholder: 'OK' });
  const url = input(data.button?.url, { className: 'bulkgate-viber-url', placeholder: 'https://' });
  const sync = () => {
    common.sync();
    if (kind !== 'otp')
      data.button = caption.value || url.value ? { caption: caption.value, url: url.value } : undefined;
    onChange();
  };
  for (const el of [...common.inputs, caption, url]) el.addEventListener('input', sync);
  if (kind !== 'otp')
    body.append(
      field(t(kind === 'promotional' ? 'send.cascade.buttonRequired' : 'send.cascade.button'), caption),
      field(t('send.cascade.url'), url),
    );
  sync();
}

function renderSms(body: HTMLElement, kind: Kind, data: ChannelSetting, count: () => void): void {
  const senderId = create('select', { className: 'bulkgate-sms-sender' });
  fillSenderSelect(senderId, '2.0', data.sender_id ?? '');
  const value = input(data.sender_id_value, { className: 'bulkgate-sms-sender-value' });
  const valueRow = field('', value);
  const unicode = create('select', { className: 'bulkgate-sms-unicode' });
  for (const mode of ['auto', 'on', 'off']) unicode.add(new Option(t(`send.unicode.${mode}`), mode));
  unicode.value = data.unicode || 'auto';
  const sync = () => {
    data.sender_id = senderId.value;
    data.sender_id_value = value.value;
    if (kind !== 'otp') data.unicode = unicode.value;
    const labels = senderValueText(senderId.value);
    valueRow.style.display = labels ? '' : 'none';
    if (labels) {
      (valueRow.firstChild as HTMLElement).textContent = labels.label;
      value.placeholder = labels.placeholder;
    }
    count();
  };
  for (const select of [senderId, unicode]) select.addEventListener('change', sync);
  value.addEventListener('input', sync);
  body.append(field(t('send.label.sender_id'), senderId), valueRow);
  if (kind !== 'otp') body.append(field(t('send.label.unicode'), unicode));
  sync();
}

// A WhatsApp template's body parameters one per line; JSON in the API's names for the rest.
// Other content kinds than a text or a template come from msg.payload.
function renderChat(body: HTMLElement, data: ChannelSetting, onChange: () => void): void {
  const name = data.type as 'whatsapp' | 'rcs';
  const limit = CHAT_TEXT_LIMITS[name];
  const common = senderFields(body, 'chat', data, CHAT_EXPIRATION_DEFAULT);
  const content = create('select', { className: 'bulkgate-chat-content' });
  for (const option of ['message', 'template']) content.add(new Option(t(`send.cascade.${option}`), option));
  content.value = name === 'whatsapp' && data.template ? 'template' : 'message';
  const text = textarea('bulkgate-chat-text', data.message?.text ?? '');
  const counter = document.createElement('div');
  const preview = input(undefined, {
    className: 'bulkgate-chat-preview',
    type: 'checkbox',
    checked: data.message?.preview_url === true,
  });
  const suggestions = textarea(
    'bulkgate-chat-suggestions',
    jsonText(data.message?.suggestions),
    '[{"type": "reply", ...}]',
  );
  const header = textarea('bulkgate-chat-header', jsonText(data.template?.header), '{"type": "text", "text": ...}');
  const buttons = textarea('bulkgate-chat-buttons', jsonText(data.template?.buttons), '[{...}]');
  const template = input(data.template?.template, { className: 'bulkgate-chat-template' });
  const language = input(data.template?.language, { className: 'bulkgate-chat-language', placeholder: 'en' });
  const bodyParameters = Array.isArray(data.template?.body) ? (data.template?.body as { text?: unknown }[]) : [];
  const parameters = textarea(
    'bulkgate-chat-parameters',
    bodyParameters.map((p) => String(p?.text ?? '')).join('\n'),
    t('send.cascade.parametersPlaceholder'),
  );
  const extra =
    name === 'whatsapp' ? field(t('send.cascade.preview'), preview) : field(t('send.cascade.suggestions'), suggestions);
  const messageRows = [field(t('send.cascade.text'), text), counter, extra];
  const templateRows = Object.entries({ template, language, header, parameters, buttons }).map(([key, el]) =>
    field(t(`send.cascade.${key}`), el),
  );
  if (name === 'whatsapp') body.append(field(t('send.cascade.content'), content));
  body.append(...messageRows, ...templateRows);
  const sync = () => {
    common.sync();
    const useTemplate = content.value === 'template';
    for (const row of messageRows) row.style.display = useTemplate ? 'none' : '';
    for (const row of templateRows) row.style.display = useTemplate ? '' : 'none';
    if (useTemplate) {
      delete data.message;
      const lines = parameters.value.split('\n').filter((line) => line.trim() !== '');
      data.template = { template: template.value };
      if (language.value) data.template.language = language.value;
      if (lines.length) data.template.body = lines.map((line) => ({ type: 'text', text: line }));
      const headerValue = readJson(header);
      if (headerValue !== undefined) data.template.header = headerValue;
      const buttonsValue = readJson(buttons);
      if (buttonsValue !== undefined) data.template.buttons = buttonsValue as unknown[];
    } else {
      delete data.template;
      data.message = { text: text.value };
      if (name === 'whatsapp' && preview.checked) data.message.preview_url = true;
      if (name === 'rcs' && suggestions.value.trim()) data.message.suggestions = readJson(suggestions) as unknown[];
      // No SMS parts here: a WhatsApp or RCS message is one message, up to the platform's limit.
      const characters = chatLength(text.value);
      renderCounter(counter, {
        level: characters > limit ? 'error' : 'ok',
        text: text.value ? t('send.counter.chat', { characters, limit }) : '',
      });
    }
    onChange();
  };
  for (const el of [...common.inputs, text, suggestions, template, language, header, parameters, buttons])
    el.addEventListener('input', sync);
  for (const el of [content, preview]) el.addEventListener('change', sync);
  sync();
}

/** The JSON a textarea holds; undefined when empty, the text itself when it is not JSON (the check marks it). */
function readJson(area: HTMLTextAreaElement): unknown {
  if (!area.value.trim()) return undefined;
  try {
    return JSON.parse(area.value);
  } catch {
    return area.value;
  }
}

export function readCascade(list: HTMLElement): ChannelSetting[] {
  return rowsOf(list).map((row) => {
    const data = { ...($(row).data('data') as ChannelSetting) };
    for (const key of Object.keys(data) as (keyof ChannelSetting)[])
      if (data[key] === '' || data[key] === undefined) delete data[key];
    return data;
  });
}

/** The line under the list: what happens when no listed channel delivers. */
function fallbackText(channels: ChannelSetting[]): string {
  const last = channels[channels.length - 1];
  if (!last) return t('send.cascade.empty');
  const smsAt = channels.findIndex((c) => c.type === 'sms');
  if (smsAt >= 0 && smsAt < channels.length - 1) return t('send.cascade.afterSms');
  return last.type === 'sms' ? t('send.cascade.endsWithSms') : t('send.cascade.fallsBack');
}
