/** The channel cascade editor (2.0): a drag-sortable list, stored as `channel: [{type, ...}]`, sent as the ordered `channel` object. */
import { isAbsent } from '../../gateway/prepared';
import { CHANNELS, CHAT_EXPIRATION_DEFAULT, CHAT_TEXT_LIMITS, OTP_CHANNELS, VIBER_EXPIRATION_DEFAULT } from '../../gateway/channels';
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

/** The send nodes' cascades, and the one-time password's (no text of its own: the gateway writes it). */
export type Kind = 'promotional' | 'transactional' | 'otp';

/** The settings each channel type takes (the reference's Viber and SMS objects). */
const CHANNEL_KEYS: Record<string, (keyof ChannelSetting)[]> = {
  viber: ['type', 'text', 'sender', 'expiration', 'button'],
  whatsapp: ['type', 'sender', 'expiration', 'message', 'template'],
  rcs: ['type', 'sender', 'expiration', 'message'],
  sms: ['type', 'text', 'sender_id', 'sender_id_value', 'unicode'],
};
/** An OTP's Viber and SMS objects: a sender and an expiration, a sender id and value. */
const OTP_CHANNEL_KEYS: Record<string, (keyof ChannelSetting)[]> = {
  viber: ['type', 'sender', 'expiration'],
  sms: ['type', 'sender_id', 'sender_id_value'],
};

/** A setting of a channel that is wrong, by the class of its input in the panel. */
type ChannelField = `bulkgate-${string}`;

const channelsFor = (kind: Kind): readonly string[] => (kind === 'otp' ? OTP_CHANNELS : CHANNELS);

/** A WhatsApp or RCS text's length as the platforms count it (characters, not UTF-16 units). */
const chatLength = (text: string): number => [...text].length;

/**
 * What is wrong with each channel of a cascade, as the inputs to mark: the one rule set behind
 * both the node's validation (red triangle) and the panel's highlighting. A channel after SMS is
 * wrong: SMS always delivers, so nothing after it is ever tried.
 */
export function channelProblems(kind: Kind, channels: ChannelSetting[]): ChannelField[][] {
  const seen = new Set<string>();
  const smsAt = channels.findIndex((c) => c?.type === 'sms');
  return channels.map((c, index) => {
    const wrong: ChannelField[] = [];
    if (!c || typeof c !== 'object' || !channelsFor(kind).includes(c.type) || seen.has(c.type) || (smsAt >= 0 && index > smsAt))
      wrong.push('bulkgate-channel-type');
    if (!c || typeof c !== 'object') return wrong;
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
        if (header !== undefined && (typeof header !== 'object' || header === null || Array.isArray(header))) wrong.push('bulkgate-chat-header');
        if (buttons !== undefined && !Array.isArray(buttons)) wrong.push('bulkgate-chat-buttons');
      } else {
        const text = c.message?.text ?? '';
        if (!text || chatLength(text) > CHAT_TEXT_LIMITS[c.type]) wrong.push('bulkgate-chat-text');
      }
      if (c.message?.suggestions !== undefined && !Array.isArray(c.message.suggestions)) wrong.push('bulkgate-chat-suggestions');
    } else if (c.type === 'sms') {
      if (c.sender_id && !SENDER_TYPES['2.0'].includes(c.sender_id) && c.sender_id !== PROFILE_ID_CHOICE) wrong.push('bulkgate-sms-sender');
      if (senderValueKind(c.sender_id ?? '') && !c.sender_id_value) wrong.push('bulkgate-sms-sender-value');
      if (kind !== 'otp' && !textFits(c.text, (c.unicode as UnicodeMode) || 'auto')) wrong.push('bulkgate-channel-text');
    }
    return wrong;
  });
}

/** A saved cascade the gateway takes; none saved (an imported or older flow): the runtime sends a plain SMS. */
export function validCascade(kind: Kind, value: unknown): boolean {
  if (isAbsent(value)) return true;
  return Array.isArray(value) && channelProblems(kind, value as ChannelSetting[]).every((wrong) => wrong.length === 0);
}

/** The list's rows (each item's content element), in order. */
const rowsOf = (list: HTMLElement): HTMLElement[] => ($(list).editableList('items').toArray() as unknown[]).map((r) => $(r)[0] as HTMLElement);

/** Marks each wrong input the way Node-RED's own panels do (`input-error`). */
function markProblems(list: HTMLElement, kind: Kind): void {
  const problems = channelProblems(kind, readCascade(list));
  rowsOf(list).forEach((row, i) => {
    const wrong = new Set(problems[i] ?? []);
    for (const el of row.querySelectorAll<HTMLElement>('input, select, textarea')) {
      const name = [...el.classList].find((c) => c.startsWith('bulkgate-'));
      if (name) el.classList.toggle('input-error', wrong.has(name as ChannelField));
    }
  });
}

function field(label: string, input: HTMLElement): HTMLElement {
  const row = document.createElement('div');
  row.className = 'bulkgate-channel-field';
  const l = document.createElement('label');
  l.textContent = label;
  row.append(l, input);
  return row;
}

function input(value: string | number | undefined, attrs: Record<string, string> = {}): HTMLInputElement {
  const el = document.createElement('input');
  el.type = 'text';
  el.value = value === undefined ? '' : String(value);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, v);
  return el;
}

function textarea(className: string, value: string, placeholder?: string): HTMLTextAreaElement {
  const area = document.createElement('textarea');
  area.rows = 2;
  area.className = className;
  area.value = value;
  if (placeholder) area.placeholder = placeholder;
  return area;
}

/** A value in the API's own JSON (RCS suggestions, a WhatsApp template's header and buttons), as a textarea shows it. */
const jsonText = (value: unknown): string => (value === undefined ? '' : JSON.stringify(value));

/** The cascade editor in `list`, from the node's saved channels (an SMS when none), and the line under it. */
export function setupCascade(list: HTMLElement, kind: Kind, saved: unknown, fallback: HTMLElement | null, onChange?: () => void): void {
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
      if (added) data.type = channelsFor(kind).find((name) => name !== 'sms' && !readCascade(list).some((c) => c.type === name)) ?? 'sms';
      renderChannel(container, kind, data, changed);
      if (added) {
        const item = container.closest('li');
        const smsItem = rowsOf(list)
          .find((r) => ($(r).data('data') as ChannelSetting)?.type === 'sms')
          ?.closest('li');
        if (item && smsItem && smsItem !== item) smsItem.before(item);
      }
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
  const type = document.createElement('select');
  type.className = 'bulkgate-channel-type';
  for (const name of channelsFor(kind)) type.add(new Option(t(`send.cascade.${name}`), name));
  type.value = data.type;
  const body = document.createElement('div');
  body.className = 'bulkgate-channel-body';
  container.append(type, body);
  const draw = () => {
    // Each channel type has its own default expiration (Viber 120 s, WhatsApp and RCS 3600 s).
    if (data.type !== type.value) delete data.expiration;
    data.type = type.value;
    // A channel switched to the other type keeps its text only.
    const keys = (kind === 'otp' ? OTP_CHANNEL_KEYS : CHANNEL_KEYS)[data.type] ?? [];
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

/** The sender and expiration of a Viber, WhatsApp or RCS channel, appended to `body`; `sync` copies them into `data`. */
function senderFields(body: HTMLElement, prefix: 'viber' | 'chat', data: ChannelSetting, expirationDefault: number) {
  const sender = input(data.sender, { class: `bulkgate-${prefix}-sender`, placeholder: t('send.cascade.senderPlaceholder') });
  const expiration = input(data.expiration ?? expirationDefault, { class: `bulkgate-${prefix}-expiration`, type: 'number', min: '1' });
  body.append(field(t('send.cascade.sender'), sender), field(t('send.cascade.expiration'), expiration));
  const sync = () => {
    data.sender = sender.value;
    data.expiration = expiration.value === '' ? undefined : Number(expiration.value);
  };
  return { inputs: [sender, expiration], sync };
}

/** A Viber channel's fields: its sender, expiration and (not for an OTP) its button. */
function renderViber(body: HTMLElement, kind: Kind, data: ChannelSetting, onChange: () => void): void {
  const common = senderFields(body, 'viber', data, VIBER_EXPIRATION_DEFAULT);
  const caption = input(data.button?.caption, { class: 'bulkgate-viber-caption', placeholder: 'OK' });
  const url = input(data.button?.url, { class: 'bulkgate-viber-url', placeholder: 'https://' });
  const sync = () => {
    common.sync();
    if (kind !== 'otp') data.button = caption.value || url.value ? { caption: caption.value, url: url.value } : undefined;
    onChange();
  };
  for (const el of [...common.inputs, caption, url]) el.addEventListener('input', sync);
  if (kind !== 'otp') {
    body.append(field(kind === 'promotional' ? t('send.cascade.buttonRequired') : t('send.cascade.button'), caption), field(t('send.cascade.url'), url));
  }
  sync();
}

/** An SMS channel's fields: its sender id (and the value some kinds take) and (not for an OTP) Unicode; `count` recounts the text. */
function renderSms(body: HTMLElement, kind: Kind, data: ChannelSetting, count: () => void): void {
  const senderId = document.createElement('select');
  senderId.className = 'bulkgate-sms-sender';
  fillSenderSelect(senderId, '2.0', data.sender_id ?? '');
  const value = input(data.sender_id_value, { class: 'bulkgate-sms-sender-value' });
  const valueRow = field('', value);
  const unicode = document.createElement('select');
  unicode.className = 'bulkgate-sms-unicode';
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
  senderId.addEventListener('change', sync);
  value.addEventListener('input', sync);
  unicode.addEventListener('change', sync);
  body.append(field(t('send.label.sender_id'), senderId), valueRow);
  if (kind !== 'otp') body.append(field(t('send.label.unicode'), unicode));
  sync();
}

/**
 * A WhatsApp or RCS channel: a text message or (WhatsApp) an approved template, its body parameters
 * one per line; JSON in the API's names for the rest. Other content kinds come from msg.payload.
 */
function renderChat(body: HTMLElement, data: ChannelSetting, onChange: () => void): void {
  const name = data.type as 'whatsapp' | 'rcs';
  const limit = CHAT_TEXT_LIMITS[name];
  const common = senderFields(body, 'chat', data, CHAT_EXPIRATION_DEFAULT);
  const content = document.createElement('select');
  content.className = 'bulkgate-chat-content';
  content.add(new Option(t('send.cascade.message'), 'message'));
  if (name === 'whatsapp') content.add(new Option(t('send.cascade.template'), 'template'));
  content.value = name === 'whatsapp' && data.template ? 'template' : 'message';
  const text = textarea('bulkgate-chat-text', data.message?.text ?? '');
  const counter = document.createElement('div');
  const preview = input(undefined, { class: 'bulkgate-chat-preview', type: 'checkbox' });
  preview.checked = data.message?.preview_url === true;
  const suggestions = textarea('bulkgate-chat-suggestions', jsonText(data.message?.suggestions), '[{"type": "reply", ...}]');
  const header = textarea('bulkgate-chat-header', jsonText(data.template?.header), '{"type": "text", "text": ...}');
  const buttons = textarea('bulkgate-chat-buttons', jsonText(data.template?.buttons), '[{...}]');
  const template = input(data.template?.template, { class: 'bulkgate-chat-template' });
  const language = input(data.template?.language, { class: 'bulkgate-chat-language', placeholder: 'en' });
  const bodyParameters = Array.isArray(data.template?.body) ? (data.template?.body as { text?: unknown }[]) : [];
  const parameters = textarea('bulkgate-chat-parameters', bodyParameters.map((p) => String(p?.text ?? '')).join('\n'), t('send.cascade.parametersPlaceholder'));
  const messageRows = [field(t('send.cascade.text'), text), counter];
  if (name === 'whatsapp') messageRows.push(field(t('send.cascade.preview'), preview));
  else messageRows.push(field(t('send.cascade.suggestions'), suggestions));
  const templateRows = [
    field(t('send.cascade.template'), template),
    field(t('send.cascade.language'), language),
    field(t('send.cascade.header'), header),
    field(t('send.cascade.parameters'), parameters),
    field(t('send.cascade.buttons'), buttons),
  ];
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
      if (name === 'rcs' && suggestions.value.trim()) {
        data.message.suggestions = readJson(suggestions) as unknown[];
      }
      // No SMS parts here: a WhatsApp or RCS message is one message, up to the platform's limit.
      const characters = chatLength(text.value);
      counter.textContent = text.value ? t('send.counter.chat', { characters, limit }) : '';
      counter.className = `bulkgate-counter bulkgate-counter-${characters > limit ? 'error' : 'ok'}`;
    }
    onChange();
  };
  for (const el of [...common.inputs, text, suggestions, template, language, header, parameters, buttons]) el.addEventListener('input', sync);
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
    for (const key of Object.keys(data) as (keyof ChannelSetting)[]) if (data[key] === '' || data[key] === undefined) delete data[key];
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
