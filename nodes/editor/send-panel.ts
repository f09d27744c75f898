/** The send panels: only the fields the chosen API and version take (the runtime's schemas). */
import { bodyShape, VERSIONS, type ApiFamily, type ApiVersion } from '../../gateway/operations';
import { isPhoneNumber, splitNumbers } from '../../gateway/recipients';
import { bodyFields, schemaKey } from '../../gateway/schemas';
import { PROFILE_ID_CHOICE } from '../../gateway/senders';
import type { UnicodeMode } from '../../gateway/text';
import { readCascade, setupCascade, validCascade, type ChannelSetting, type PanelNode } from './cascade';
import { byId, prepareFields } from './panel-fields';
import { describeText, renderCounter, textFits } from './counter';
import { t } from './i18n';
import { fillSenderSelect, senderValueKind, senderValueText } from './senders';

type Kind = 'promotional' | 'transactional';

const smsUnicode = (channels?: ChannelSetting[]): UnicodeMode =>
  (channels?.find((c) => c.type === 'sms')?.unicode as UnicodeMode) || 'auto';

export function sendPanel(node: PanelNode, kind: Kind): void {
  prepareFields(node, `bulkgate-${kind}`);

  const api = byId<HTMLSelectElement>('node-input-api');
  const version = byId<HTMLSelectElement>('node-input-version');
  const sender = byId<HTMLSelectElement>('node-input-sender_id');
  const duplicates = byId<HTMLSelectElement>('node-input-duplicates_check');
  const text = byId<HTMLTextAreaElement>('node-input-text');
  const unicode = byId<HTMLSelectElement>('node-input-unicode');
  const list = byId('bulkgate-channels');
  const counter = byId('bulkgate-counter');

  $('[data-only]').each((_i: number, row: HTMLElement) => $(row).toggle(row.getAttribute('data-only') === kind));
  const checks = kind === 'promotional' ? ['', 'same_text', 'same_number'] : ['', 'on'];
  for (const value of checks) duplicates.add(new Option(t(`send.duplicates.${value || 'none'}`), value));
  duplicates.value = checks.includes(String(node.duplicates_check ?? '')) ? String(node.duplicates_check ?? '') : '';

  const refreshCounter = () => {
    const mode = version.value === '1.0' ? (unicode.value as UnicodeMode) : smsUnicode(readCascade(list));
    renderCounter(counter, describeText(text.value, mode));
  };
  const refreshSender = () => {
    const labels = version.value === '1.0' ? senderValueText(sender.value) : undefined;
    $('[data-field="sender_id_value"]').toggle(Boolean(labels));
    if (labels) {
      byId('bulkgate-sender-value-label').textContent = labels.label;
      $('#node-input-sender_id_value').typedInput('width', '70%');
      // Node-RED 4 types into an input of its own beside the (hidden) original; 3.x into the original.
      $('#node-input-sender_id_value').parent().find('input').attr('placeholder', labels.placeholder);
    }
  };
  const refresh = () => {
    const family = api.value as ApiFamily;
    const offered = VERSIONS[kind][family];
    const wanted = version.value || node.version;
    const keep = (offered.find((v) => v === wanted) ?? offered[0]) as ApiVersion;
    version.textContent = '';
    for (const v of offered) version.add(new Option(v, v));
    version.value = keep;
    const shape = bodyShape({ kind, api: family, version: keep, method: 'POST', encoding: 'json' });
    const fields = new Set(bodyFields(schemaKey(kind, shape.api, shape.version)));
    $('[data-field]').each((_i: number, row: HTMLElement) => {
      const name = row.getAttribute('data-field') as string;
      if (name !== 'sender_id_value') $(row).toggle(name === 'text' || fields.has(name));
    });
    $('.bulkgate-encoding').toggle(family === 'simple' && !(kind === 'transactional' && keep === '2.0'));
    fillSenderSelect(sender, keep, sender.value || String(node.sender_id ?? ''));
    refreshSender();
    refreshCounter();
  };

  setupCascade(list, kind, node.channel, byId('bulkgate-fallback'), refreshCounter);
  for (const select of [api, version]) select.addEventListener('change', refresh);
  sender.addEventListener('change', refreshSender);
  text.addEventListener('input', refreshCounter);
  unicode.addEventListener('change', refreshCounter);
  refresh();
  // Under the recipients field, why it is marked (in the editor's language), not only in a tooltip.
  const number = $('#node-input-number');
  const why = $('<div class="form-tips bulkgate-number-invalid" style="display:none"></div>').insertAfter(
    number.closest('.form-row'),
  );
  const explain = () => {
    const answer = validNumber(node, kind, String(number.typedInput('value') ?? ''));
    why.text(answer === true ? '' : answer).toggle(answer !== true);
  };
  number.on('change', explain);
  explain();
}

export function sendPanelSave(node: PanelNode): void {
  node.channel = readCascade(byId('bulkgate-channels'));
}

export function validText(node: PanelNode, _kind: Kind, value: string): boolean {
  return textFits(value, node.version === '1.0' ? (node.unicode as UnicodeMode) || 'auto' : smsUnicode(node.channel));
}

/** While the panel is open its type picker is read (the node's setting changes only on Done). */
export function validNumber(
  node: PanelNode,
  kind: Kind | 'otp' | 'contacts' | 'number-check' | 'blacklist',
  value: string,
): true | string {
  const type = byId<HTMLInputElement | null>('node-input-numberType')?.value || node.numberType || 'msg';
  if (type !== 'str' || !value) return true;
  const numbers = splitNumbers(value);
  const one =
    kind === 'transactional' ||
    kind === 'otp' ||
    kind === 'contacts' ||
    (kind === 'blacklist' && node.action === 'remove');
  if (one && numbers.length > 1) return t('send.invalid.oneNumber');
  const wrong = numbers.find((n) => !isPhoneNumber(n));
  return wrong === undefined ? true : t('send.invalid.number', { number: wrong });
}

/** A 1.0 sender type that names a value has one. */
export function validSenderValue(node: PanelNode, _kind: Kind, value: string): boolean {
  if (
    (node.version !== '1.0' && !(node.api === 'simple' && node.version === undefined)) ||
    !senderValueKind(String(node.sender_id ?? ''))
  )
    return true;
  if (node.sender_id === PROFILE_ID_CHOICE && (node.sender_id_valueType ?? 'str') === 'str') return /^\d+$/.test(value);
  return Boolean(value);
}

/** A 2.0 cascade the gateway takes; a one-time password's only when it sends one. */
export function validChannel(node: PanelNode, kind: Kind | 'otp', value: unknown): boolean {
  if (kind === 'otp') return (node.action !== undefined && node.action !== 'send') || validCascade('otp', value);
  if (node.version === '1.0' || (kind === 'promotional' && node.api === 'simple')) return true;
  return validCascade(kind, value);
}
