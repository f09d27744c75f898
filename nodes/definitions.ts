/** Each node's typed definition, for its registerType block, the runtime and the panels (no Node-RED import). */
import { DEFAULT_BASE_URL, DEFAULT_RETRIES, DEFAULT_TIMEOUT } from '../gateway/defaults';

export type CredentialFields = Record<string, { type: 'text' | 'password'; required?: boolean }>;

/** An editor check by name: `BulkGateEditor[name](node, kind, value)`; `number` is Node-RED's own. */
export type Validator =
  | 'number'
  | 'validNumber'
  | 'validText'
  | 'validSenderValue'
  | 'validChannel'
  | 'validBaseUrl'
  | 'validStoreUrl'
  | 'validCountry'
  | 'validPath'
  | 'validSteps';

export interface SettingDefinition {
  value: unknown;
  /** A TypedInput: the types the panel offers (the first for a new one) and the default type. */
  typed?: { types: readonly string[]; type: string };
  required?: boolean;
  configType?: string;
  validate?: Validator;
}

export interface NodeDefinition {
  type: string;
  category: 'BulkGate' | 'config';
  inputs?: 0 | 1;
  outputs?: number;
  settings: Record<string, SettingDefinition>;
  credentials?: CredentialFields;
  /** `send` labels name the API and version (`promotional SMS 2.0`); `plain` the palette label. */
  label: 'send' | 'plain';
  /** The BulkGateEditor functions that prepare and save the panel. */
  panel: { prepare: string; save?: string };
  /**
   * Sections of locales/<lang>/shared.json this node's texts use (TOP_SECTIONS are read from the catalog's top; the
   * others are copied into its own).
   */
  shared?: readonly ('status' | 'brief' | 'warnings' | 'send' | 'storm' | 'errors' | 'tracking')[];
  /** The other endpoints' nodes: the handler endpoint-kinds.ts exports for this type. */
  endpoint?: EndpointKind;
}

type EndpointKind = 'otp' | 'numberCheck' | 'blacklist' | 'contacts';

const NAME_AND_ACCOUNT: Record<string, SettingDefinition> = {
  name: { value: '' },
  account: { value: '', configType: 'bulkgate-account', required: true },
};
/** Where a recipient, a schedule... may come from: the TypedInput types per setting. */
const IDS = ['str', 'json', 'msg', 'flow', 'global', 'env', 'jsonata'] as const;

/** A palette node: one input, its palette label. */
function paletteNode(def: Omit<NodeDefinition, 'category' | 'label'> & { label?: 'send' }): NodeDefinition {
  return { category: 'BulkGate', inputs: 1, label: 'plain', ...def };
}

const NUMBERS = ['msg', 'str', 'json', 'flow', 'global', 'env', 'jsonata'] as const;
const TEXTS = ['str', 'msg', 'flow', 'global', 'env', 'jsonata'] as const;

function sendNode(kind: 'promotional' | 'transactional', outputs: number): NodeDefinition {
  const recipients: Record<string, SettingDefinition> =
    kind === 'promotional'
      ? {
          groups: { value: '', typed: { types: IDS, type: 'str' } },
          admins: { value: '', typed: { types: IDS, type: 'str' } },
        }
      : {
          admin: { value: '', typed: { types: ['num', 'msg', 'flow', 'global', 'env', 'jsonata'], type: 'num' } },
          variables: {
            value: 'variables',
            typed: { types: ['msg', 'json', 'flow', 'global', 'jsonata'], type: 'msg' },
          },
        };
  return paletteNode({
    type: `bulkgate-${kind}`,
    outputs,
    settings: {
      ...NAME_AND_ACCOUNT,
      api: { value: 'advanced' },
      version: { value: '2.0' },
      encoding: { value: 'json' },
      number: {
        value: 'number',
        typed: { types: ['msg', 'flow', 'global', 'env', 'str', 'json', 'jsonata'], type: 'msg' },
        validate: 'validNumber',
      },
      ...recipients,
      text: { value: '', validate: 'validText' },
      unicode: { value: 'auto' },
      flash: { value: false },
      sender_id: { value: '' },
      sender_id_value: {
        value: '',
        typed: { types: ['str', 'msg', 'flow', 'global', 'env'], type: 'str' },
        validate: 'validSenderValue',
      },
      channel: { value: [{ type: 'sms' }], validate: 'validChannel' },
      country: { value: '', typed: { types: ['str', 'msg', 'flow', 'global', 'env'], type: 'str' } },
      schedule: {
        value: 'schedule',
        typed: { types: ['msg', 'flow', 'global', 'str', 'num', 'date', 'jsonata'], type: 'msg' },
      },
      duplicates_check: { value: '' },
      // Seconds from a msg's first attempt after which, still not sent, it goes to Catch (expired); empty: the
      // account's outbox time.
      giveUpAfter: { value: '', validate: 'number' },
      ...(kind === 'transactional'
        ? {
            // Storm protection: alerts per window (0 = off) and the window in seconds.
            stormLimit: { value: 0, validate: 'number' as const },
            stormWindow: { value: 60, validate: 'number' as const },
          }
        : {}),
    },
    label: 'send',
    panel: { prepare: 'sendPanel', save: 'sendPanelSave' },
    shared: [
      'status',
      'brief',
      'warnings',
      'send',
      'errors',
      ...(kind === 'transactional' ? (['storm'] as const) : []),
    ],
  });
}

function endpointNode(
  type: string,
  endpoint: EndpointKind,
  outputs: number,
  settings: Record<string, SettingDefinition>,
): NodeDefinition {
  return paletteNode({
    type,
    endpoint,
    outputs,
    settings: { ...NAME_AND_ACCOUNT, ...settings },
    panel: { prepare: 'endpointPanel', save: 'endpointPanelSave' },
    shared: ['status', 'brief', 'warnings', 'errors'],
  });
}

export const DEFINITIONS: Record<string, NodeDefinition> = {
  'bulkgate-account': {
    type: 'bulkgate-account',
    category: 'config',
    settings: {
      name: { value: '' },
      // Optional settings: missing or empty, the runtime uses the default the field shows as its placeholder.
      baseUrl: { value: DEFAULT_BASE_URL, validate: 'validBaseUrl' },
      application_product: { value: '' },
      country: { value: '', validate: 'validCountry' },
      timeout: { value: DEFAULT_TIMEOUT, validate: 'number' },
      retries: { value: DEFAULT_RETRIES, validate: 'number' },
      rateLimit: { value: 0, validate: 'number' },
      rateWindow: { value: 60, validate: 'number' },
      queueSize: { value: 100, validate: 'number' },
      // Minutes a message the gateway could not be reached for is kept and sent again (0 = off).
      outboxMinutes: { value: 60, validate: 'number' },
      // The most messages the outbox keeps; over it, a message goes to Catch with outbox_full.
      outboxSize: { value: 10000, validate: 'number' },
      // A core http proxy config node; none: the HTTP_PROXY / HTTPS_PROXY / NO_PROXY variables.
      proxy: { value: '', configType: 'http proxy', required: false },
      // Where the account keeps its state: 'file' (this Node-RED's user directory) or 'redis' (shared by several
      // copies).
      store: { value: 'file' },
      storeUrl: { value: '', validate: 'validStoreUrl' },
    },
    credentials: {
      application_id: { type: 'text', required: true },
      application_token: { type: 'password', required: true },
      // The Redis store's password: with the credentials, never in storeUrl (the flows file).
      storePassword: { type: 'password' },
    },
    label: 'plain',
    panel: { prepare: 'accountPanel' },
    shared: ['errors', 'tracking'],
  },
  'bulkgate-promotional': sendNode('promotional', 3),
  'bulkgate-transactional': sendNode('transactional', 2),
  'bulkgate-balance': paletteNode({
    type: 'bulkgate-balance',
    outputs: 2,
    settings: {
      ...NAME_AND_ACCOUNT,
      api: { value: 'advanced' },
      method: { value: 'POST' },
      threshold: { value: '', validate: 'number' },
    },
    panel: { prepare: 'balancePanel' },
    shared: ['status', 'brief', 'errors'],
  }),
  'bulkgate-events': paletteNode({
    type: 'bulkgate-events',
    inputs: 0,
    outputs: 3,
    settings: {
      name: { value: '' },
      // Missing or empty, the runtime serves /bulkgate/events (the placeholder).
      path: { value: '/bulkgate/events', validate: 'validPath' },
      // Delivery tracking: reports and replies matched to what this account's nodes sent.
      account: { value: '', configType: 'bulkgate-account', required: false },
      // Seconds to wait for a tracked message's final report before output 3 (0 = off).
      reportTimeout: { value: 0, validate: 'number' },
    },
    credentials: { secret: { type: 'password', required: true } },
    panel: { prepare: 'eventsPanel' },
    shared: ['status', 'brief', 'warnings', 'errors', 'tracking'],
  }),
  'bulkgate-escalation': paletteNode({
    type: 'bulkgate-escalation',
    outputs: 3,
    settings: {
      ...NAME_AND_ACCOUNT,
      // 1 to 10 steps: `numbers` as the Recipients field takes them, `wait` seconds before the next step.
      steps: { value: [{ numbers: '', wait: 300 }], validate: 'validSteps' },
      repeat: { value: 1, validate: 'number' },
      text: { value: '' },
      ackWords: { value: 'OK, ACK' },
      sender_id: { value: 'gSystem' },
      sender_id_value: { value: '' },
    },
    panel: { prepare: 'escalationPanel', save: 'escalationPanelSave' },
    shared: ['status', 'brief', 'warnings', 'errors'],
  }),
  'bulkgate-otp': endpointNode('bulkgate-otp', 'otp', 2, {
    action: { value: 'send' },
    number: { value: 'number', typed: { types: NUMBERS, type: 'msg' }, validate: 'validNumber' },
    country: { value: '', typed: { types: TEXTS, type: 'str' } },
    language: { value: '' },
    code_type: { value: '' },
    code_length: { value: '', validate: 'number' },
    expiration: { value: '', validate: 'number' },
    request_quota_number: { value: '', validate: 'number' },
    trials_available_resend: { value: '', validate: 'number' },
    trials_available_verification: { value: '', validate: 'number' },
    daily_limit: { value: '', validate: 'number' },
    // Empty: the requester's IP when the msg came from an http in node, else this node's id.
    request_quota_identification: { value: '', typed: { types: TEXTS, type: 'str' } },
    channel: { value: [{ type: 'sms' }], validate: 'validChannel' },
    otpId: { value: 'otpId', typed: { types: ['msg', 'flow', 'global', 'str'], type: 'msg' } },
    code: { value: 'payload', typed: { types: ['msg', 'flow', 'global', 'str', 'jsonata'], type: 'msg' } },
  }),
  'bulkgate-number-check': endpointNode('bulkgate-number-check', 'numberCheck', 2, {
    number: { value: 'payload', typed: { types: NUMBERS, type: 'msg' }, validate: 'validNumber' },
    country: { value: '', typed: { types: TEXTS, type: 'str' } },
  }),
  'bulkgate-blacklist': endpointNode('bulkgate-blacklist', 'blacklist', 2, {
    action: { value: 'check' },
    number: { value: 'payload', typed: { types: NUMBERS, type: 'msg' }, validate: 'validNumber' },
    wallet: { value: '' },
    route: { value: 'promotional' },
    // The list an added number goes on (the wire's `type`; a node's own `type` is its node type).
    listType: { value: 'black-list' },
    reason: { value: '', typed: { types: TEXTS, type: 'str' } },
    source_id: { value: '' },
  }),
  'bulkgate-contacts': endpointNode('bulkgate-contacts', 'contacts', 1, {
    action: { value: 'get' },
    phone_number: { value: 'payload', typed: { types: NUMBERS, type: 'msg' }, validate: 'validNumber' },
    groups: { value: '', typed: { types: IDS, type: 'str' } },
    group_name: { value: '' },
  }),
};

/** The one node set (package.json `node-red.nodes`): Node-RED's start costs about 7 ms of CPU per set. */
export const NODE_SET = 'bulkgate';

/**
 * The sections of shared.json no node has entries of its own in: the built catalog holds each once,
 * at its top (`errors.no-number`), not under every node that uses it. Node-RED reads the catalog at
 * every start and the editor loads it whole; copied into ten nodes it was three times the size.
 * The others (`status`, `warnings`) are copied into each node that names them, beside its own.
 */
export const TOP_SECTIONS: ReadonlySet<string> = new Set(['brief', 'send', 'storm', 'errors', 'tracking']);

/** A key of a node's texts as its catalog holds it: under the node's type, or at the top for TOP_SECTIONS. */
export function catalogKey(type: string, key: string): string {
  return TOP_SECTIONS.has(key.slice(0, key.indexOf('.'))) ? key : `${type}.${key}`;
}

export function typedSettings(type: string): Record<string, { types: readonly string[]; type: string; value: string }> {
  const typed = Object.entries(DEFINITIONS[type]?.settings ?? {}).filter(([, setting]) => setting.typed);
  return Object.fromEntries(
    typed.map(([name, setting]) => [name, { ...setting.typed!, value: String(setting.value ?? '') }]),
  );
}

/** The JavaScript of a node's `RED.nodes.registerType` call, written into its HTML at build time. */
export function registerTypeSource(def: NodeDefinition): string {
  const kind = def.type.replace(/^bulkgate-/, '');
  const js = (v: unknown) => JSON.stringify(v).replace(/</g, '\\u003c');
  const check = (name: Validator) =>
    name === 'number'
      ? 'RED.validators.number(true)'
      : // Two parameters: Node-RED then shows a returned sentence as the field's tooltip.
        `function (v, opt) { return BulkGateEditor.${name}(this, ${js(kind)}, v); }`;
  const defaults: string[] = [];
  for (const [name, s] of Object.entries(def.settings)) {
    const parts = [`value: ${js(s.value)}`];
    if (s.configType) parts.push(`type: ${js(s.configType)}`);
    if (s.required !== undefined) parts.push(`required: ${s.required}`);
    if (s.validate) parts.push(`validate: ${check(s.validate)}`);
    defaults.push(`      ${name}: { ${parts.join(', ')} }`);
    if (s.typed) defaults.push(`      ${name}Type: { value: ${js(s.typed.type)} }`);
  }
  const version =
    def.label === 'send' ? ` + ' ' + (this.api === 'simple' ? 'simple ' : '') + (this.version || '2.0')` : '';
  const lines = [
    `    category: ${js(def.category)}`,
    ...(def.category === 'config' ? [] : [`    color: '#8FD3CB'`]),
    `    defaults: {\n${defaults.join(',\n')}\n    }`,
    ...(def.credentials ? [`    credentials: ${js(def.credentials)}`] : []),
    ...(def.inputs !== undefined ? [`    inputs: ${def.inputs}`] : []),
    ...(def.outputs !== undefined ? [`    outputs: ${def.outputs}`, `    icon: '${def.type}.svg'`] : []),
    `    paletteLabel: function () { return this._('${def.type}.paletteLabel'); }`,
    `    label: function () { return this.name || this._('${def.type}.paletteLabel')${version}; }`,
    ...(def.category === 'config'
      ? []
      : [
          `    labelStyle: function () { return this.name ? 'node_label_italic' : ''; }`,
          `    outputLabels: function (index) { return this._('${def.type}.outputs.' + index); }`,
        ]),
    `    oneditprepare: function () { BulkGateEditor.${def.panel.prepare}(this, ${js(kind)}); }`,
    ...(def.panel.save ? [`    oneditsave: function () { BulkGateEditor.${def.panel.save}(this, ${js(kind)}); }`] : []),
  ];
  return `RED.nodes.registerType('${def.type}', {\n${lines.join(',\n')}\n  });`;
}
