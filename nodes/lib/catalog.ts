/**
 * The message catalog shared by the four nodes (statuses, reasons, warnings, the send panels'
 * labels): the account's, named by its node-set id. Runtime, editor and build read it from here.
 */
export const CATALOG = 'node-red-contrib-bulkgate/bulkgate-account';
