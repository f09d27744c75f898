// The events panel: a generated secret (a password credential: once deployed, the editor never gets
// it back), and the webhook URL to paste into the portal, shown while the secret is known here.
import { t } from './i18n';
import { byId } from './panel-fields';

/** What Node-RED puts in a password credential's field when one is stored. */
const STORED = '__PWRD__';

const randomSecret = () =>
  Array.from(crypto.getRandomValues(new Uint8Array(24)), (b) => b.toString(16).padStart(2, '0')).join('');

export function eventsPanel(): void {
  const secret = byId<HTMLInputElement>('node-input-secret');
  const path = byId<HTMLInputElement>('node-input-path');
  const url = byId('bulkgate-events-url');
  const copy = byId<HTMLButtonElement>('bulkgate-events-copy');
  const reveal = byId<HTMLButtonElement>('bulkgate-events-reveal');
  if (!secret.value) secret.value = randomSecret();
  const refresh = () => {
    // Node-RED serves http-in routes under httpNodeRoot, at the editor's host.
    const root = (RED.settings.httpNodeRoot || '/').replace(/\/$/, '');
    // An empty path is served at the default, which the field shows as its placeholder.
    const value = path.value || path.placeholder;
    const p = value.startsWith('/') ? value : `/${value}`;
    const known = secret.value !== STORED;
    url.textContent = known
      ? `${location.origin}${root}${p}?token=${encodeURIComponent(secret.value)}`
      : t('url-hidden');
    for (const button of [copy, reveal]) button.disabled = !known;
  };
  document.getElementById('bulkgate-events-generate')?.addEventListener('click', () => {
    secret.value = randomSecret();
    refresh();
  });
  copy.addEventListener('click', () => void navigator.clipboard?.writeText(url.textContent ?? ''));
  reveal.addEventListener('click', () => (secret.type = secret.type === 'password' ? 'text' : 'password'));
  for (const field of [secret, path]) field.addEventListener('input', refresh);
  refresh();
  // The report timeout means something only for a tracked account: shown with one chosen.
  const showTimeout = () => {
    const value = String($('#node-input-account').val() ?? '');
    $('#bulkgate-events-timeout-row').toggle(value !== '' && value !== '_ADD_');
  };
  $('#node-input-account').on('change', showTimeout);
  showTimeout();
}
