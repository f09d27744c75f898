/** The balance panel: the advanced API reads with POST only; the simple one with GET or POST. */
import { byId } from './panel-fields';

export function balancePanel(): void {
  const api = byId<HTMLSelectElement>('node-input-api');
  const method = byId<HTMLSelectElement>('node-input-method');
  const refresh = () => {
    const simple = api.value === 'simple';
    (method.querySelector('option[value="GET"]') as HTMLOptionElement).disabled = !simple;
    if (!simple) method.value = 'POST';
  };
  api.addEventListener('change', refresh);
  refresh();
}
