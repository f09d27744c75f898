/**
 * Build step: ajv's standalone code for every wire-body schema (gateway/schemas.ts, the one
 * source), one exported validator per operation. The build bundles it with the few ajv helpers
 * it calls into dist/gateway/validators.js (sending, credit) and endpoint-validators.js (the other
 * endpoints), so the runtime never loads ajv itself (measured by the benchmark's start probe: ajv and compiling the schemas were
 * a tenth of the package's load time), and a flow that only sends never loads the second.
 */
import Ajv from 'ajv';
import standaloneCode from 'ajv/dist/standalone';
import { SCHEMAS } from '../gateway/schemas';
import { validatorName } from '../gateway/validate';

export function validatorsSource(keys: string[] = Object.keys(SCHEMAS)): string {
  // strict: a schema keyword ajv does not know is a build error; `rule` is the one annotation.
  const ajv = new Ajv({
    allErrors: false,
    strict: true,
    strictRequired: false,
    allowUnionTypes: true,
    code: { source: true },
  });
  ajv.addVocabulary(['rule']);
  const exports: Record<string, string> = {};
  for (const key of keys) {
    ajv.addSchema(SCHEMAS[key] as object, key);
    exports[validatorName(key)] = key;
  }
  return standaloneCode(ajv, exports);
}
