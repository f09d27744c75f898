import { typedSettings } from '../definitions';

export const byId = <T extends HTMLElement | null = HTMLElement>(id: string) => document.getElementById(id) as T;

// Settings missing from an imported flow show the defaults the runtime uses, not empty fields
// marked red; then each TypedInput of the node's definition gets its types.
export function prepareFields(node: Record<string, unknown>, type: string): void {
  const defaults = (node as { _def?: { defaults?: Record<string, { value?: unknown }> } })._def?.defaults ?? {};
  for (const [key, def] of Object.entries(defaults)) {
    const input = byId<HTMLInputElement | null>(`node-input-${key}`);
    if (node[key] !== undefined || !input || typeof def.value === 'object' || input.type === 'checkbox') continue;
    input.value = String(def.value ?? '');
  }
  for (const [fieldName, { types }] of Object.entries(typedSettings(type))) {
    const input = document.getElementById(`node-input-${fieldName}`);
    if (input) $(input).typedInput({ default: types[0], types, typeField: `#node-input-${fieldName}Type` });
  }
}
