/** The panels' few styles, added once. */
const CSS = `
/* German and Czech labels outgrow 100 px; 130 px leaves a 70% field at the narrowest tray (500 px). */
.bulkgate-panel .form-row > label { width: 130px; }
.bulkgate-counter { margin: 4px 0 0 134px; font-size: 0.85em; color: var(--red-ui-secondary-text-color, #777); }
.bulkgate-counter-warning { color: #b8860b; }
.bulkgate-counter-error { color: var(--red-ui-text-color-error, #d00); font-weight: bold; }
.bulkgate-inline-label { width: auto !important; margin: 0 6px 0 12px; }
.bulkgate-unit { font-size: 0.85em; color: var(--red-ui-secondary-text-color, #777); }
.bulkgate-channel { display: flex; gap: 8px; align-items: flex-start; }
.bulkgate-channel-type { width: 90px !important; flex: none; }
.bulkgate-channel-body { flex: 1; }
.bulkgate-channel-field { display: flex; align-items: center; margin-bottom: 4px; }
.bulkgate-channel .bulkgate-channel-field label { width: 110px; flex: none; margin: 0; }
.bulkgate-channel-field input, .bulkgate-channel-field select, .bulkgate-channel-field textarea { flex: 1; }
.bulkgate-channel .bulkgate-counter { margin-left: 110px; }
.bulkgate-test-result { margin-left: 8px; }
.bulkgate-ok { color: #3a7d3a; }
.bulkgate-failed { color: var(--red-ui-text-color-error, #d00); }
#bulkgate-channels { min-height: 40px; }
/* editableList fixes its height when built; the cascade grows with its channels instead. */
.node-input-channel-row .red-ui-editableList-container { height: auto !important; }
.node-input-channel-row .red-ui-editableList-item-content { padding-left: 8px; }
`;

/** A panel that first adds the styles (once) and marks its form (holding `field`) as the package's. */
export const marked =
  <A extends unknown[]>(field: string, prepare: (...args: A) => void) =>
  (...args: A) => {
    if (!document.getElementById('bulkgate-styles'))
      document.head.append(Object.assign(document.createElement('style'), { id: 'bulkgate-styles', textContent: CSS }));
    document.getElementById(field)?.closest('form')?.classList.add('bulkgate-panel');
    prepare(...args);
  };
