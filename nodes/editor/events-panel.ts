/** The events panel: a generated secret, and the full webhook URL to paste into the portal. */
function randomSecret(): string {
  const bytes = new Uint8Array(24);
  crypto.getRandomValues(bytes);
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
}

export function eventsPanel(): void {
  const secret = document.getElementById('node-input-secret') as HTMLInputElement;
  const path = document.getElementById('node-input-path') as HTMLInputElement;
  const url = document.getElementById('bulkgate-events-url') as HTMLElement;
  if (!secret.value) secret.value = randomSecret();
  const refresh = () => {
    // Node-RED serves http-in routes under httpNodeRoot, at the editor's host.
    const root = (RED.settings.httpNodeRoot || '/').replace(/\/$/, '');
    const p = path.value.startsWith('/') ? path.value : `/${path.value}`;
    url.textContent = `${location.origin}${root}${p}?token=${encodeURIComponent(secret.value)}`;
  };
  document.getElementById('bulkgate-events-generate')?.addEventListener('click', () => {
    secret.value = randomSecret();
    refresh();
  });
  document.getElementById('bulkgate-events-copy')?.addEventListener('click', () => {
    void navigator.clipboard?.writeText(url.textContent ?? '');
  });
  secret.addEventListener('input', refresh);
  path.addEventListener('input', refresh);
  refresh();
}
