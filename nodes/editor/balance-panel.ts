/** The balance panel: the advanced API reads with POST only; the simple one with GET or POST. */
export function balancePanel(): void {
  const api = document.getElementById('node-input-api') as HTMLSelectElement;
  const method = document.getElementById('node-input-method') as HTMLSelectElement;
  const refresh = () => {
    const simple = api.value === 'simple';
    (method.querySelector('option[value="GET"]') as HTMLOptionElement).disabled = !simple;
    if (!simple) method.value = 'POST';
  };
  api.addEventListener('change', refresh);
  refresh();
}
