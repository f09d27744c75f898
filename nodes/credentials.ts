/**
 * The credentials each node type keeps (Node-RED stores them apart from the flow, encrypted),
 * read at start by the registration (nodes/plumbing/lazy.ts) and by the editor's definitions
 * (nodes/definitions.ts). A module of its own so that a start does not evaluate the nine nodes'
 * whole definitions for these two entries (measured by the benchmark's start probe: with the default exports of the nodes'
 * modules, the entry's require went from 1.6 to 0.5 ms, medians of 7 side by side).
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
