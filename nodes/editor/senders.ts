/** The sender picker: the types of the chosen version, and a value field labelled for the type. */
import { PROFILE_ID_CHOICE, SENDER_TYPES, SENDER_VALUE_KIND } from '../../gateway/senders';
import type { ApiVersion } from '../../gateway/operations';
import { t } from './i18n';

export const senderValueKind = (senderId: string): string | undefined =>
  senderId === PROFILE_ID_CHOICE ? 'profile_id' : SENDER_VALUE_KIND[senderId];

export function fillSenderSelect(select: HTMLSelectElement, version: ApiVersion, value: string): void {
  select.textContent = '';
  select.add(new Option(t('send.sender.default'), ''));
  // A colon, not a spaced dash: a one-time password's narrow sender field shows "gPush: Mobile Connect Push" whole.
  for (const type of SENDER_TYPES[version]) select.add(new Option(`${type}: ${t(`send.sender.${type}`)}`, type));
  select.add(new Option(t('send.sender.profile_id'), PROFILE_ID_CHOICE));
  // A type of the other version (after switching version) falls back to the default.
  select.value = [...select.options].some((o) => o.value === value) ? value : '';
}

export function senderValueText(senderId: string): { label: string; placeholder: string } | undefined {
  const kind = senderValueKind(senderId);
  return kind
    ? { label: t(`send.senderValue.${kind}`), placeholder: t(`send.senderValuePlaceholder.${kind}`) }
    : undefined;
}
