// The layering CONTRIBUTING.md states ("Layout"), checked by `npm run lint` over the product's
// sources: gateway/, nodes/ (with nodes/editor) and simulator/. A type-only import counts like
// any other (tsPreCompilationDeps): a type that two modules share belongs to the lower one.
const product = '^(gateway|nodes|simulator)/';

/** @type {import('dependency-cruiser').IConfiguration} */
export default {
  forbidden: [
    {
      name: 'no-circle',
      severity: 'error',
      comment:
        'An import circle: a type or function that both ends need belongs in the lower module, or in a small module both import.',
      from: { path: product },
      to: { circular: true },
    },
    {
      name: 'gateway-imports-no-node',
      severity: 'error',
      comment: 'gateway/ is the client, usable without Node-RED: it imports nothing from nodes/.',
      from: { path: '^gateway/' },
      to: { path: '^nodes/' },
    },
    {
      name: 'account-imports-no-behaviour',
      severity: 'error',
      comment: 'The imports go one way, nodes/behaviours → nodes/account: the account imports no behaviour.',
      from: { path: '^nodes/account/' },
      to: { path: '^nodes/behaviours/' },
    },
    {
      name: 'plumbing-imports-no-node-folder',
      severity: 'error',
      comment:
        'nodes/plumbing is used by both node folders, so it imports neither: nothing from nodes/account or nodes/behaviours.',
      from: { path: '^nodes/plumbing/' },
      to: { path: '^nodes/(account|behaviours)/' },
    },
    {
      name: 'nothing-imports-a-registration',
      severity: 'error',
      comment:
        "A node type's registration (nodes/bulkgate-*.ts) is the top: only nodes/bulkgate.ts, which registers them all, imports one.",
      from: { path: product, pathNot: '^nodes/bulkgate\\.ts$' },
      to: { path: '^nodes/bulkgate-[^/]+\\.ts$' },
    },
    {
      name: 'runtime-imports-no-panel',
      severity: 'error',
      comment:
        "nodes/editor is the panels' code, bundled into the HTML for the browser: the runtime does not import it.",
      from: { path: product, pathNot: '^nodes/editor/' },
      to: { path: '^nodes/editor/' },
    },
    {
      name: 'simulator-keeps-its-own-code',
      severity: 'error',
      comment:
        "The simulator is the test oracle: it keeps its own checks and counting, not the client's (a bug in one would hide in both). From gateway/ it takes only the API's tables and a host test: operations.ts (the endpoints and their paths), senders.ts (the sender types of each version), base-url.ts (whether a host is loopback, for its own address); nothing from nodes/.",
      from: { path: '^simulator/' },
      to: { path: '^(nodes/|gateway/)', pathNot: '^gateway/(operations|senders|base-url)\\.ts$' },
    },
    {
      name: 'product-imports-no-simulator',
      severity: 'error',
      comment: 'The simulator is the test oracle: the client and the nodes do not import it.',
      from: { path: '^(gateway|nodes)/' },
      to: { path: '^simulator/' },
    },
  ],
  options: {
    includeOnly: product,
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
  },
};
