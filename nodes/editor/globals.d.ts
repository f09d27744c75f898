/** What the Node-RED editor provides to node panels (jQuery and the RED object). */
/* eslint-disable @typescript-eslint/no-explicit-any */
declare const RED: any;
declare const $: any;
interface Window {
  BulkGateEditor: unknown;
}
