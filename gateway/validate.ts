/** Validates wire bodies with validators ajv generated at build time: ajv is no runtime dependency. */
import { invalidRequest } from './errors';
import { ENDPOINT_SCHEMAS, RULE_WORDING, SCHEMAS } from './schemas';
import { SENDER_VALUE_KIND } from './senders';
import { wording, type Wording } from './wording';

interface Validator {
  (body: unknown): boolean;
  errors?:
    | { keyword: string; instancePath: string; schemaPath: string; params: Record<string, unknown>; message?: string }[]
    | null;
}

export function validatorName(key: string): string {
  return `validate_${key.replace(/\W/g, '_')}`;
}

/** Found once: the name's regex showed in the c=64 profile. */
const byKey = new Map<string, Validator | null>();

function validatorFor(key: string): Validator | undefined {
  const found = byKey.get(key);
  if (found !== undefined) return found ?? undefined;
  // Loaded with the first request of their kind. Literal paths: the build's lazy step rewrites those.
  const loaded = (
    key in ENDPOINT_SCHEMAS
      ? // eslint-disable-next-line @typescript-eslint/no-require-imports
        require('./endpoint-validators')
      : // eslint-disable-next-line @typescript-eslint/no-require-imports
        require('./validators')
  ) as Record<string, Validator>;
  const validate = loaded[validatorName(key)];
  byKey.set(key, validate ?? null);
  return validate;
}

/** Throws `invalid_request` with the sentence naming the failed field and rule. */
export function validateBody(key: string, wireBody: unknown): void {
  const validate = validatorFor(key);
  if (!validate) throw invalidRequest(wording('no-operation', { name: key }));
  if (!validate(wireBody)) throw invalidRequest(describeError(key, validate.errors ?? []));
}

/** Whether the body passes, without describing why not (a step of a long list: request.ts). */
export function isValidBody(key: string, wireBody: unknown): boolean {
  return validatorFor(key)?.(wireBody) ?? false;
}

const unescape = (segment: string): string => segment.replace(/~1/g, '/').replace(/~0/g, '~');

/** An ajv error path (/number/0/text) as the field name a user reads (number[0].text). */
function fieldName(instancePath: string, property?: string): string {
  const parts = instancePath.split('/').slice(1).map(unescape);
  if (property !== undefined) parts.push(property);
  return parts.reduce((name, part) => (/^\d+$/.test(part) ? `${name}[${part}]` : name ? `${name}.${part}` : part), '');
}

function ruleOf(key: string, schemaPath: string): unknown {
  const segments = schemaPath
    .replace(/^#\/?/, '')
    .split('/')
    .slice(0, -1)
    .map((p) => unescape(decodeURIComponent(p)));
  let schema: unknown = SCHEMAS[key];
  for (const segment of segments) {
    if (schema === null || typeof schema !== 'object') return undefined;
    schema = (schema as Record<string, unknown>)[segment];
  }
  return (schema as { rule?: unknown } | undefined)?.rule;
}

/** A rule's wording (a rule no table knows is passed on as it is, in English). */
const ruleWording = (rule: string): Wording | string => RULE_WORDING.get(rule) ?? rule;

function describeError(key: string, errors: NonNullable<Validator['errors']>): Wording {
  // An anyOf (or oneOf) failure is reported after its branches' errors; it carries the useful sentence.
  const error = errors.find((e) => e.keyword === 'anyOf' || e.keyword === 'oneOf') ?? errors[0];
  if (!error) return wording('request-not-valid');
  const rule = ruleOf(key, error.schemaPath);
  switch (error.keyword) {
    case 'required': {
      const field = fieldName(error.instancePath, String(error.params.missingProperty));
      if (error.params.missingProperty === 'sender_id_value')
        return wording('required-sender-value', { field, types: Object.keys(SENDER_VALUE_KIND).join(', ') });
      return wording('required', { field });
    }
    case 'additionalProperties':
      return wording('unknown-field', {
        field: fieldName(error.instancePath, String(error.params.additionalProperty)),
        name: key,
      });
    case 'anyOf':
    case 'oneOf':
      if (!error.instancePath && typeof rule === 'string') {
        const said = ruleWording(rule);
        return typeof said === 'string' ? wording('request-rule', { rule: said }) : said;
      }
      return typeof rule === 'string'
        ? wording('field-rule', { field: fieldName(error.instancePath), rule: ruleWording(rule) })
        : wording('field-not-valid', { field: fieldName(error.instancePath) });
    default: {
      const field = fieldName(error.instancePath);
      const said = typeof rule === 'string' ? ruleWording(rule) : error.message;
      if (said === undefined) return field ? wording('field-not-valid', { field }) : wording('request-not-valid');
      return field ? wording('field-rule', { field, rule: said }) : wording('request-rule', { rule: said });
    }
  }
}
