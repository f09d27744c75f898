/**
 * The credentials each node type keeps (Node-RED stores them apart from the flow, encrypted),
 * read at start by the registration (nodes/lib/lazy.ts) and by the editor's definitions
 * (nodes/definitions.ts). A module of its own so that a start does not evaluate the nine nodes'
 * whole definitions for these two entries (issue 17: 0.9 ms of the entry's 2.6 ms require).
 */
export type CredentialFields = Record<string, { type: 'text' | 'password'; required?: boolean }>;

export const CREDENTIALS: Record<string, CredentialFields> = {
  'bulkgate-account': { application_id: { type: 'text', required: true }, application_token: { type: 'password', required: true } },
  'bulkgate-events': { secret: { type: 'password', required: true } },
};
