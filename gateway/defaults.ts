/**
 * The account's defaults, in one place: the client falls back to them, and the node definitions
 * (bundled into the editor too, so this module imports nothing) show them in the panel.
 */
export const DEFAULT_BASE_URL = 'https://portal.bulkgate.com';
/** Milliseconds for one HTTP request. */
export const DEFAULT_TIMEOUT = 15_000;
/** Extra attempts after the first. */
export const DEFAULT_RETRIES = 3;
