// The Flow Library scorecard (node-red-dev validate) on this package, offline: its one fetch of
// the public node catalogue (unreachable here) is answered with an empty catalogue; everything
// else runs as it is. Exits non-zero when a check the scorecard can run fails.
const { join } = require('node:path');
const { readFileSync, mkdtempSync, rmSync } = require('node:fs');
const { tmpdir } = require('node:os');

const CATALOGUE = 'https://catalogue.nodered.org/catalogue.json';
const axios = require(require.resolve('axios', { paths: [require.resolve('node-red-dev/package.json')] }));
const get = axios.get.bind(axios);
axios.get = (url, ...rest) => (url === CATALOGUE ? Promise.resolve({ data: { modules: [] } }) : get(url, ...rest));

const root = join(__dirname, '..');
const output = join(mkdtempSync(join(tmpdir(), 'scorecard-')), 'scorecard.json');
const ValidateCommand = require('node-red-dev/src/commands/validate.js');
/**
 * Checks this package fails on purpose, and why. Anything else that fails, fails the run.
 * P04: the product's name is `node-red-contrib-bulkgate`, which flows and users already know.
 * D03: undici 8 requires Node.js 22; the package supports Node.js 20 (Node-RED 3.1 and 4.x).
 */
const KNOWN = {
  P04: "the name node-red-contrib-bulkgate is the product's",
  D03: 'undici 8 needs Node.js 22; Node.js 20 is supported',
};

function report() {
  const scorecard = JSON.parse(readFileSync(output, 'utf8'));
  rmSync(join(output, '..'), { recursive: true, force: true });
  const failed = Object.entries(scorecard).filter(([, v]) => v && v.test === false);
  const unexpected = failed.filter(([k]) => !(k in KNOWN));
  console.log(
    `\nscorecard: ${Object.keys(scorecard).length} checks run, ${Object.keys(scorecard).length - failed.length} passed`,
  );
  for (const [k] of failed.filter(([k]) => k in KNOWN)) console.log(`  ${k} not met on purpose: ${KNOWN[k]}`);
  for (const [k, v] of unexpected) console.log(`  ${k} FAILED: ${JSON.stringify(v)}`);
  process.exit(unexpected.length ? 1 : 0);
}

// oclif ends a command by throwing an exit "error" with code 0.
ValidateCommand.run(['-p', root, '-o', output]).then(report, (error) => {
  if (error && error.oclif && error.oclif.exit === 0) return report();
  console.error(error);
  process.exit(1);
});
