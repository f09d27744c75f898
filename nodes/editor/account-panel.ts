/**
 * The account panel: the "test connection" button (the runtime reads the balance), and the outbox: how many wait, and
 * emptying it.
 */
import type { Wording } from '../../gateway/wording';
import { t, worded } from './i18n';
import { byId } from './panel-fields';

export function accountPanel(node: { id: string; credentials?: { has_application_token?: boolean } }): void {
  // "Leave it to keep the stored one" only where one is stored (Node-RED says whether, not what).
  byId('bulkgate-token-stored').style.display = node.credentials?.has_application_token ? '' : 'none';
  const button = byId<HTMLButtonElement>('bulkgate-test-connection');
  const result = byId('bulkgate-test-result');
  const storeResult = byId('bulkgate-test-store');
  const fields = (...ids: string[]) =>
    Object.fromEntries(ids.map((id) => [id, byId<HTMLInputElement>(`node-config-input-${id}`).value]));
  showOutbox(node.id);
  const store = byId<HTMLSelectElement>('node-config-input-store');
  if (!store.value) store.value = 'file';
  const showStore = () =>
    document
      .querySelectorAll<HTMLElement>('.bulkgate-store-redis')
      .forEach((row) => (row.style.display = store.value === 'redis' ? '' : 'none'));
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
      .done(
        (answer: {
          ok: boolean;
          credit?: number;
          currency?: string;
          message?: string;
          wording?: Wording;
          store?: { ok: boolean; message?: string; wording?: Wording };
        }) => {
          const text = answer.ok
            ? t('test.ok', { credit: answer.credit ?? '', currency: answer.currency ?? '' })
            : t('test.failed', { message: worded(answer.wording, answer.message ?? '') });
          report(result, answer.ok, text);
          if (answer.store)
            report(
              storeResult,
              answer.store.ok,
              answer.store.ok
                ? t('test.store-ok')
                : t('test.store-failed', { message: worded(answer.store.wording, answer.store.message ?? '') }),
            );
        },
      )
      .fail((xhr: { status: number; statusText: string }) =>
        report(result, false, t('test.failed', { message: `HTTP ${xhr.status} ${xhr.statusText}` })),
      )
      .always(() => (button.disabled = false));
  });
}

function report(element: HTMLElement, ok: boolean, text: string): void {
  element.style.display = '';
  element.className = `bulkgate-test-result ${ok ? 'bulkgate-ok' : 'bulkgate-failed'}`;
  element.textContent = text;
}

/**
 * How many messages wait in a deployed account's outbox, with a button that empties it; how many from it ended
 * unconfirmed.
 */
function showOutbox(id: string): void {
  const empty = byId<HTMLButtonElement>('bulkgate-outbox-empty');
  // The reason in the runtime's English, and its wording for the editor's language.
  type Since = { reason: string; wording?: Wording; since: number } | null;
  const showTrouble = (elementId: string, key: string, trouble: Since | undefined) => {
    const element = byId(elementId);
    element.style.display = trouble ? '' : 'none';
    element.textContent = trouble
      ? t(key, { reason: worded(trouble.wording, trouble.reason), since: new Date(trouble.since).toLocaleString() })
      : '';
  };
  const show = (answer: { waiting?: number; unconfirmed?: number; outage?: Since; store?: Since }) => {
    const count = answer.waiting ?? 0;
    byId('bulkgate-outbox-row').style.display = count > 0 ? '' : 'none';
    byId('bulkgate-outbox-waiting').textContent = t('outbox.waiting', { count });
    const unconfirmed = byId('bulkgate-outbox-unconfirmed');
    unconfirmed.style.display = answer.unconfirmed ? '' : 'none';
    unconfirmed.textContent = answer.unconfirmed ? t('outbox.unconfirmed', { count: answer.unconfirmed }) : '';
    showTrouble('bulkgate-outbox-failure', 'outbox.failure', answer.outage);
    showTrouble('bulkgate-store-trouble', 'outbox.store-trouble', answer.store);
  };
  const refresh = () => $.ajax({ url: `bulkgate/outbox/${encodeURIComponent(id)}`, type: 'GET' }).done(show);
  refresh();
  empty.addEventListener('click', () => {
    if (!window.confirm(t('outbox.confirm'))) return;
    empty.disabled = true;
    $.ajax({
      url: `bulkgate/outbox/${encodeURIComponent(id)}/empty`,
      type: 'POST',
      contentType: 'application/json',
      data: '{}',
    })
      .done(refresh)
      .always(() => (empty.disabled = false));
  });
}
