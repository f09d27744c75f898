/** The other endpoints' panels: the rows each action uses (`data-actions` in the form), and the one-time password's cascade. */
import { readCascade, setupCascade, type ChannelSetting } from './cascade';
import { prepareFields } from './panel-fields';

interface EndpointNodeDef {
  type: string;
  channel?: ChannelSetting[];
  [key: string]: unknown;
}

const byId = <T extends HTMLElement = HTMLElement>(id: string) => document.getElementById(id) as T | null;

export function endpointPanel(node: EndpointNodeDef): void {
  prepareFields(node, node.type);
  const action = byId<HTMLSelectElement>('node-input-action');
  const list = byId('bulkgate-channels');
  if (list) setupCascade(list, 'otp', node.channel, byId('bulkgate-fallback'));
  const refresh = () => {
    const chosen = action?.value ?? '';
    $('[data-actions]').each((_i: number, row: HTMLElement) => {
      $(row).toggle((row.getAttribute('data-actions') ?? '').split(' ').includes(chosen));
    });
  };
  action?.addEventListener('change', refresh);
  refresh();
}

export function endpointPanelSave(node: EndpointNodeDef): void {
  const list = byId('bulkgate-channels');
  if (list) node.channel = readCascade(list);
}
