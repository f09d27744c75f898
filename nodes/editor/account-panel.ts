/** The account panel: the "test connection" button (the runtime reads the balance), and the outbox: how many wait, and emptying it. */
import { t } from './i18n';

interface AccountNodeDef {
  id: string;
  /** Node-RED tells the editor whether a password credential is stored, never its value. */
  credentials?: { has_application_token?: boolean };
}

export function accountPanel(node: AccountNodeDef): void {
  // "Leave it to keep the stored one" only where one is stored: not on a new account.
  (document.getElementById('bulkgate-token-stored') as HTMLElement).style.display = node.credentials?.has_application_token ? '' : 'none';
  const button = document.getElementById('bulkgate-test-connection') as HTMLButtonElement;
  const result = document.getElementById('bulkgate-test-result') as HTMLElement;
  const storeResult = document.getElementById('bulkgate-test-store') as HTMLElement;
  const fields = (...ids: string[]) =>
    Object.fromEntries(ids.map((id) => [id, (document.getElementById(`node-config-input-${id}`) as HTMLInputElement).value]));
  showOutbox(node.id);
  // The Redis store's URL and password show only when that store is chosen.
  const store = document.getElementById('node-config-input-store') as HTMLSelectElement;
  if (!store.value) store.value = 'file';
  const showStore = () =>
    document.querySelectorAll<HTMLElement>('.bulkgate-store-redis').forEach((row) => (row.style.display = store.value === 'redis' ? '' : 'none'));
  store.addEventListener('change', showStore);
  showStore();
  button.addEventListener('click', () => {
    result.className = 'bulkgate-test-result';
    result.textContent = t('test.running');
    storeResult.style.display = 'none';
    button.disabled = true;
    // The token field holds a placeholder when a token is stored; the runtime then uses the stored one.
    $.ajax({
      url: 'bulkgate/test-connection',
      type: 'POST',
      contentType: 'application/json',
      // With the Redis store the test asks the store too (a stored password only with the deployed URL).
      data: JSON.stringify({
        id: node.id,
        ...fields('baseUrl', 'timeout', 'application_id', 'application_token', 'proxy'),
        store: store.value,
        ...fields('storeUrl', 'storePassword'),
      }),
    })
      .done((answer: { ok: boolean; credit?: number; currency?: string; message?: string; store?: { ok: boolean; message?: string } }) => {
        result.className = `bulkgate-test-result ${answer.ok ? 'bulkgate-ok' : 'bulkgate-failed'}`;
        result.textContent = answer.ok
          ? t('test.ok', { credit: answer.credit ?? '', currency: answer.currency ?? '' })
          : t('test.failed', { message: answer.message ?? '' });
        if (answer.store) {
          storeResult.style.display = '';
          storeResult.className = `bulkgate-test-result ${answer.store.ok ? 'bulkgate-ok' : 'bulkgate-failed'}`;
          storeResult.textContent = answer.store.ok ? t('test.store-ok') : t('test.store-failed', { message: answer.store.message ?? '' });
        }
      })
      .fail((xhr: { status: number; statusText: string }) => {
        result.className = 'bulkgate-test-result bulkgate-failed';
        result.textContent = t('test.failed', { message: `HTTP ${xhr.status} ${xhr.statusText}` });
      })
      .always(() => {
        button.disabled = false;
      });
  });
}

/** How many messages wait in a deployed account's outbox, with a button that empties it. */
function showOutbox(id: string): void {
  const row = document.getElementById('bulkgate-outbox-row') as HTMLElement;
  const waiting = document.getElementById('bulkgate-outbox-waiting') as HTMLElement;
  const empty = document.getElementById('bulkgate-outbox-empty') as HTMLButtonElement;
  const failure = document.getElementById('bulkgate-outbox-failure') as HTMLElement;
  const storeTrouble = document.getElementById('bulkgate-store-trouble') as HTMLElement;
  type Since = { reason: string; since: number } | null;
  const show = (answer: { waiting?: number; outage?: Since; store?: Since }) => {
    const count = answer.waiting ?? 0;
    row.style.display = count > 0 ? '' : 'none';
    waiting.textContent = t('outbox.waiting', { count });
    const outage = answer.outage;
    failure.style.display = outage ? '' : 'none';
    failure.textContent = outage ? t('outbox.failure', { reason: outage.reason, since: new Date(outage.since).toLocaleString() }) : '';
    const trouble = answer.store;
    storeTrouble.style.display = trouble ? '' : 'none';
    storeTrouble.textContent = trouble ? t('outbox.store-trouble', { reason: trouble.reason, since: new Date(trouble.since).toLocaleString() }) : '';
  };
  const refresh = () => $.ajax({ url: `bulkgate/outbox/${encodeURIComponent(id)}`, type: 'GET' }).done(show);
  refresh();
  empty.addEventListener('click', () => {
    if (!window.confirm(t('outbox.confirm'))) return;
    empty.disabled = true;
    $.ajax({ url: `bulkgate/outbox/${encodeURIComponent(id)}/empty`, type: 'POST', contentType: 'application/json', data: '{}' })
      .done(refresh)
      .always(() => {
        empty.disabled = false;
      });
  });
}
