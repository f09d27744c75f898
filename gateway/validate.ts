/** Validates wire bodies against their schemas with ajv: compiled once per operation, on first use. */
import Ajv, { type ErrorObject, type ValidateFunction } from 'ajv';
import { SCHEMAS } from './schemas';
import { SENDER_VALUE_KIND } from './senders';

type Schema = Record<string, unknown>;

const ajv = new Ajv({ allErrors: false, verbose: true, strict: true, strictRequired: false, allowUnionTypes: true });
ajv.addVocabulary(['rule']);
const compiled = new Map<string, ValidateFunction>();

/** Validates a wire body; returns the sentence naming the field and rule, or undefined when valid. */
export function validateBody(key: string, wireBody: unknown): string | undefined {
  let validate = compiled.get(key);
  if (!validate) {
    const schema = SCHEMAS[key];
    if (!schema) return `there is no ${key} operation`;
    validate = ajv.compile(schema);
    compiled.set(key, validate);
  }
  if (validate(wireBody)) return undefined;
  return describeError(key, validate.errors ?? []);
}

/** Turns an ajv error path (/number/0/text) into the field name a user reads (number[0].text). */
function fieldName(instancePath: string, property?: string): string {
  const parts = instancePath
    .split('/')
    .slice(1)
    .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
  if (property !== undefined) parts.push(property);
  return parts.reduce((name, part) => (/^\d+$/.test(part) ? `${name}[${part}]` : name ? `${name}.${part}` : part), '');
}

function describeError(key: string, errors: ErrorObject[]): string {
  // An anyOf failure is reported after its branches' errors; it carries the useful sentence.
  const error = errors.find((e) => e.keyword === 'anyOf') ?? errors[0];
  if (!error) return 'the request is not valid';
  const rule = (error.parentSchema as Schema | undefined)?.rule;
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'required': {
      const field = fieldName(error.instancePath, String(params.missingProperty));
      if (params.missingProperty === 'sender_id_value') {
        return `${field} is required when sender_id is ${Object.keys(SENDER_VALUE_KIND).join(', ')}`;
      }
      return `${field} is required`;
    }
    case 'additionalProperties':
      return `${fieldName(error.instancePath, String(params.additionalProperty))} is not a field of the ${key} request`;
    case 'anyOf':
      if (!error.instancePath && typeof rule === 'string') return rule;
      return `${fieldName(error.instancePath)} ${typeof rule === 'string' ? rule : 'is not valid'}`;
    default: {
      const field = fieldName(error.instancePath) || 'the request';
      return `${field} ${typeof rule === 'string' ? rule : (error.message ?? 'is not valid')}`;
    }
  }
}
