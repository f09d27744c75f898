/** The account's defaults, for the client and the panel (bundled into the editor: imports nothing). */
export const DEFAULT_BASE_URL = 'https://portal.bulkgate.com';
export const DEFAULT_TIMEOUT = 15_000;
export const DEFAULT_RETRIES = 3;
