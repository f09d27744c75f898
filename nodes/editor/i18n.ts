/** Texts from the shared catalog, for what the panels build in code. */
import { CATALOG } from '../lib/catalog';

export function t(key: string, params?: Record<string, string | number>): string {
  return RED._(`${CATALOG}.${key}`, params);
}
