/** The editor code, bundled into the account's HTML (every node needs an account, so it is always loaded). */
import { baseUrlWording } from '../../gateway/base-url';
import { storeUrlWording } from '../plumbing/store-url';
import { accountPanel } from './account-panel';
import { balancePanel } from './balance-panel';
import { endpointPanel, endpointPanelSave } from './endpoint-panel';
import { escalationPanel, escalationPanelSave, validSteps } from './escalation-panel';
import { eventsPanel } from './events-panel';
import { sendPanel, sendPanelSave, validChannel, validNumber, validSenderValue, validText } from './send-panel';
import { t } from './i18n';
import { marked } from './style';

window.BulkGateEditor = {
  accountPanel: marked('node-config-input-name', accountPanel),
  sendPanel: marked('node-input-name', sendPanel),
  sendPanelSave,
  balancePanel: marked('node-input-name', balancePanel),
  eventsPanel: marked('node-input-name', eventsPanel),
  endpointPanel: marked('node-input-name', endpointPanel),
  endpointPanelSave,
  escalationPanel: marked('node-input-name', escalationPanel),
  escalationPanelSave,
  // Every check takes (node, kind, value), as the definitions' generated validators call it.
  validText,
  validNumber,
  validSenderValue,
  validChannel,
  validSteps,
  // The sentence shows as the field's tooltip: why a URL is refused (the token travels with every request).
  validBaseUrl: (_node: unknown, _kind: string, value: string) =>
    !value || !baseUrlWording(value) || t('invalid.baseUrl'),
  // Empty is allowed here (the file store needs none); a Redis store without one is refused at deploy.
  validStoreUrl: (_node: unknown, _kind: string, value: string) =>
    !value || !storeUrlWording(value) || t('invalid.storeUrl'),
  validCountry: (_node: unknown, _kind: string, value: string) => !value || /^[A-Za-z]{2}$/.test(value),
  validPath: (_node: unknown, _kind: string, value: string) => !value || /^\/?[\w\-/.]+$/.test(value),
};
