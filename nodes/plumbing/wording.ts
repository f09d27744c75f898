/**
 * The nodes' own error sentences (the client's are gateway/wording.ts ERRORS): English, `__name__`
 * a parameter, worded in the user's language from the same `errors` section of
 * locales/<lang>/shared.json, whose en-US text is this table word for word (a test keeps them equal).
 */
import { GatewayError } from '../../gateway';
import { english, fill, type Leaves, type Wording, type WordingParam } from '../../gateway/wording';

export const NODE_ERRORS = {
  'no-account': 'No BulkGate account is selected in this node: open it and choose one (or add one with the pencil button)',
  unreadable: '__field__ could not be read from __type__ __value__: __cause__',
  'not-built': 'The request could not be built: __cause__',
  'no-number': 'no number: the Recipients field reads __where__ (set it, or choose another property in the node)',
  'no-number-elsewhere':
    'no number: the Recipients field reads __where__ (set it, or choose another property in the node); msg.__elsewhere__ holds a phone number: to send to it, set Recipients to msg.__elsewhere__',
  // Where a TypedInput reads from, as a user reads it in the panel.
  setting: {
    nothing: 'nothing',
    env: 'the environment variable __name__',
    jsonata: 'its JSONata expression',
    empty: 'a fixed value that is empty',
  },
  'timestamp-as-text':
    "text is empty in the node, so msg.payload is the text, and it is a number (an inject node's timestamp?): write the text in the node, or send msg.payload as a string",
  'template-unfilled': 'text template could not be filled from the msg: __cause__',
  'threshold-not-number': 'threshold must be a number, got "__value__"',
  'action-unknown': 'action must be one of __actions__, not __action__',
  'number-required': 'number is required: one or more phone numbers, in msg.payload by default',
  'data-required': "data is required: the contact's fields (phone_mobile, first_name, ...) in msg.payload",
  'not-phones': '__field__ must be a phone number, numbers separated by ; or , or a list of them',
  'one-phone': '__field__ must be one phone number (it holds __numbers__)',
} as const;

export type NodeErrorKey = Leaves<typeof NODE_ERRORS>;

export function nodeWording(key: NodeErrorKey, params?: Record<string, WordingParam>): Wording {
  return params ? { key, params } : { key };
}

/** The English sentence of a wording, the nodes' own or the client's (a key neither knows reads as the key). */
export function nodeEnglish(said: Wording): string {
  let text: unknown = NODE_ERRORS;
  for (const part of said.key.split('.')) text = (text as Record<string, unknown> | undefined)?.[part];
  return typeof text === 'string' ? fill(text, said.params, nodeEnglish) : english(said);
}

/** A node's check refusing a msg: its sentence worded (in the user's language at Catch), its English the message. */
export function nodeInvalid(
  key: NodeErrorKey,
  params?: Record<string, WordingParam>,
  brief?: { key: string; params?: Record<string, string | number> },
): GatewayError {
  const wording = nodeWording(key, params);
  return new GatewayError({ type: 'invalid_request', wording, message: nodeEnglish(wording), brief });
}
