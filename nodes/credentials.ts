/**
 * The credentials each node type keeps (Node-RED stores them apart from the flow, encrypted),
 * read at start by the registration (nodes/plumbing/lazy.ts) and by the editor's definitions
 * (nodes/definitions.ts). A module of its own so that a start does not evaluate the nine nodes'
 * whole definitions for these entries: requiring this module takes 0.33 ms, the definitions 1.44 ms
 * (medians of 15 fresh processes each), 9 % of the 12.5 ms the package adds to a start.
 */
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
