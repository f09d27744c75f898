/**
 * The message catalog shared by the four nodes (statuses, reasons, warnings, the send panels'
 * labels): the account's. Node-RED names a catalog by its node-set id, and the catalog's own
 * top-level key is the node type, so every shared key starts with this prefix.
 * Runtime, editor and build read it from here.
 */
export const CATALOG = 'node-red-contrib-bulkgate/bulkgate-account:bulkgate-account';
