/** What every panel of the package does first with its node's settings. */
import { typedSettings } from '../definitions';

/**
 * Settings missing from an imported or older flow: the panel shows the defaults the runtime uses
 * for them (advanced 2.0, msg.number, msg.payload...), not empty fields marked red. Then each
 * TypedInput of the node's definition gets its types.
 */
export function prepareFields(node: Record<string, unknown>, type: string): void {
  const defaults = (node as { _def?: { defaults?: Record<string, { value?: unknown }> } })._def?.defaults ?? {};
  for (const [key, def] of Object.entries(defaults)) {
    const input = document.getElementById(`node-input-${key}`) as HTMLInputElement | null;
    if (node[key] !== undefined || !input || typeof def.value === 'object' || input.type === 'checkbox') continue;
    input.value = String(def.value ?? '');
  }
  for (const [fieldName, { types }] of Object.entries(typedSettings(type))) {
    const input = document.getElementById(`node-input-${fieldName}`);
    if (input) $(input).typedInput({ default: types[0], types, typeField: `#node-input-${fieldName}Type` });
  }
}
