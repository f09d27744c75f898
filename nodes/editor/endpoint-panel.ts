/**
 * The other endpoints' panels: the rows each action uses (`data-actions` in the form), and the one-time password's
 * cascade.
 */
import { readCascade, setupCascade, type PanelNode } from './cascade';
import { byId, prepareFields } from './panel-fields';

export function endpointPanel(node: PanelNode): void {
  prepareFields(node, node.type as string);
  const action = byId<HTMLSelectElement | null>('node-input-action');
  const list = byId<HTMLElement | null>('bulkgate-channels');
  if (list) setupCascade(list, 'otp', node.channel, byId('bulkgate-fallback'));
  const refresh = () => {
    const chosen = action?.value ?? '';
    $('[data-actions]').each((_i: number, row: HTMLElement) =>
      $(row).toggle((row.getAttribute('data-actions') ?? '').split(' ').includes(chosen)),
    );
  };
  action?.addEventListener('change', refresh);
  refresh();
}

export function endpointPanelSave(node: PanelNode): void {
  const list = byId<HTMLElement | null>('bulkgate-channels');
  if (list) node.channel = readCascade(list);
}
