/** The live text counter: the very counting code the runtime uses (gateway/text.ts). */
import { measureText, resolveUnicode, TEXT_WARNING_RATIO, type UnicodeMode } from '../../gateway/text';
import { t } from './i18n';

export function describeText(
  text: string,
  mode: UnicodeMode,
): { level: 'empty' | 'ok' | 'warning' | 'error'; text: string } {
  if (!text) return { level: 'empty', text: t('send.counter.empty') };
  const m = measureText(text, resolveUnicode(mode, [text]));
  const parts = [
    t('send.counter.characters', { characters: m.characters, limit: m.limit }),
    m.encoding === 'UCS-2' ? t('send.counter.unicode') : t('send.counter.gsm7'),
    t('send.counter.parts', { parts: m.parts }),
  ];
  if (text.includes('{{')) parts.push(t('send.counter.template'));
  if (m.characters > m.limit)
    return { level: 'error', text: `${parts.join(' · ')} — ${t('send.counter.over', { limit: m.limit })}` };
  if (mode === 'off' && m.nonGsm.length)
    return {
      level: 'warning',
      text: `${parts.join(' · ')} — ${t('send.counter.lost', { chars: m.nonGsm.join(' ') })}`,
    };
  if (m.characters >= m.limit * TEXT_WARNING_RATIO)
    return { level: 'warning', text: `${parts.join(' · ')} — ${t('send.counter.near')}` };
  return { level: 'ok', text: parts.join(' · ') };
}

/** Measured only: it runs at each keystroke and each validation, where no sentence is shown. */
export function textFits(text: string | undefined, mode: UnicodeMode): boolean {
  if (!text) return true;
  const m = measureText(text, resolveUnicode(mode, [text]));
  return m.characters <= m.limit;
}

export function renderCounter(element: HTMLElement, state: ReturnType<typeof describeText>): void {
  element.textContent = state.text;
  element.className = `bulkgate-counter bulkgate-counter-${state.level}`;
}
