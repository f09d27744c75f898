/**
 * Build step: ajv's standalone code for every wire-body schema (gateway/schemas.ts, the one
 * source), one exported validator per operation. The build bundles it with the few ajv helpers
 * it calls into dist/gateway/validators.js, so the runtime never loads ajv itself (issue 17:
 * ajv and compiling the schemas were a tenth of the package's load time).
 */
import Ajv from 'ajv';
import standaloneCode from 'ajv/dist/standalone';
import { SCHEMAS } from '../gateway/schemas';
import { validatorName } from '../gateway/validate';

export function validatorsSource(): string {
  // strict: a schema keyword ajv does not know is a build error; `rule` is the one annotation.
  const ajv = new Ajv({ allErrors: false, strict: true, strictRequired: false, allowUnionTypes: true, code: { source: true } });
  ajv.addVocabulary(['rule']);
  const exports: Record<string, string> = {};
  for (const [key, schema] of Object.entries(SCHEMAS)) {
    ajv.addSchema(schema, key);
    exports[validatorName(key)] = key;
  }
  return standaloneCode(ajv, exports);
}
