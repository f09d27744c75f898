/** What having the package installed costs, unused: Node-RED's start time and memory, against packages of reference. */
import { execFileSync, spawn } from 'node:child_process';
import { copyFileSync, cpSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { PLAN, ROOT, median, ordered, percentile, round } from './harness';

/** Runs bench/start-probe.js in a process of its own and returns its report. */
export function probe(args: string[]): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--expose-gc', join(ROOT, 'dist', 'bench', 'start-probe.js'), ...args], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout?.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.once('exit', (code) =>
      code === 0
        ? resolve(JSON.parse(out.trim().split('\n').at(-1) as string))
        : reject(new Error(`probe exited with ${code}`)),
    );
  });
}

export const MB = (bytes: unknown) => round((bytes as number) / 2 ** 20, 1);

/** The package laid out as `npm install` leaves it: the files npm packs, copied into `target`. */
export function installLike(target: string): void {
  const pack = JSON.parse(
    execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], {
      cwd: ROOT,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    }),
  );
  for (const { path } of pack[0].files as { path: string }[]) {
    mkdirSync(dirname(join(target, path)), { recursive: true });
    copyFileSync(join(ROOT, path), join(target, path));
  }
}

/** The package's runtime dependencies linked into `nodeModules`, where Node-RED's start reads their package.json too. */
export function linkDependencies(nodeModules: string): void {
  const dependencies = execFileSync('npm', ['ls', '--omit=dev', '--all', '--parseable'], {
    cwd: ROOT,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'ignore'],
  })
    .trim()
    .split('\n')
    .filter((dir) => dir.startsWith(join(ROOT, 'node_modules')));
  // By the name it is required with: a scoped one (`@redis/client`) in its scope's folder.
  for (const dir of dependencies) {
    const name = relative(join(ROOT, 'node_modules'), dir);
    // One nested in another's node_modules is found there, through the link to the other.
    if (name.includes('node_modules')) continue;
    const link = join(nodeModules, name);
    mkdirSync(dirname(link), { recursive: true });
    symlinkSync(dir, link, 'dir');
  }
}

/**
 * What having the package installed costs a Node-RED that uses none of its nodes: Node-RED
 * started without and with it in the user directory's node_modules, in turns, each start a
 * process of its own; medians. And, in a third process each turn, the package's own share of a
 * start measured inside one process: Node-RED started without it, then its registry loading it
 * (bench/start-probe.ts `add`); beside it, the same for the smallest package Node-RED can load
 * (one node set, one type, no catalog): what any package costs, the floor of this figure; and
 * that package with a message catalog of one text, as Node-RED's i18n asks a package to have:
 * what a translated package costs before its texts are read. One
 * start varies by more than the package adds (the middle half of the paired differences spans
 * about 100 ms here); the share measured within one process does not.
 */
export async function installCost() {
  const dirs = {
    without: mkdtempSync(join(tmpdir(), 'bulkgate-without-')),
    with: mkdtempSync(join(tmpdir(), 'bulkgate-with-')),
  };
  mkdirSync(join(dirs.without, 'node_modules'));
  mkdirSync(join(dirs.with, 'node_modules'));
  // The package laid out once; copied into the user directory started with it, and (with the
  // smallest package) into each registry-load probe's (under the package's name, which the probe loads).
  const staged = mkdtempSync(join(tmpdir(), 'bulkgate-staged-'));
  installLike(join(staged, 'package'));
  cpSync(join(staged, 'package'), join(dirs.with, 'node_modules', 'node-red-contrib-bulkgate'), { recursive: true });
  linkDependencies(join(dirs.with, 'node_modules'));
  mkdirSync(join(staged, 'smallest'));
  writeFileSync(
    join(staged, 'smallest', 'package.json'),
    JSON.stringify({
      name: 'node-red-contrib-bulkgate',
      version: '0.0.0',
      keywords: ['node-red'],
      'node-red': { nodes: { smallest: 'smallest.js' } },
    }),
  );
  writeFileSync(
    join(staged, 'smallest', 'smallest.js'),
    'module.exports = (RED) => RED.nodes.registerType("smallest", function (c) { RED.nodes.createNode(this, c); });\n',
  );
  writeFileSync(
    join(staged, 'smallest', 'smallest.html'),
    '<script type="text/javascript">RED.nodes.registerType("smallest", { category: "function", defaults: {}, inputs: 1, outputs: 1 });</script>\n<script type="text/html" data-template-name="smallest"></script>\n',
  );
  cpSync(join(staged, 'smallest'), join(staged, 'catalogued'), { recursive: true });
  mkdirSync(join(staged, 'catalogued', 'locales', 'en-US'), { recursive: true });
  writeFileSync(
    join(staged, 'catalogued', 'locales', 'en-US', 'smallest.json'),
    JSON.stringify({ smallest: { label: 'smallest' } }),
  );
  const runs: Record<'without' | 'with', Record<string, unknown>[]> = { without: [], with: [] };
  type Loaded = 'package' | 'smallest' | 'catalogued';
  const loads: Record<Loaded, Record<string, unknown>[]> = { package: [], smallest: [], catalogued: [] };
  const loadOnce = async (which: Loaded) => {
    const addDir = mkdtempSync(join(tmpdir(), 'bulkgate-add-'));
    mkdirSync(join(addDir, 'node_modules'));
    try {
      cpSync(join(staged, which), join(addDir, which), { recursive: true });
      loads[which].push(await probe(['add', addDir, join(addDir, which)]));
    } finally {
      rmSync(addDir, { recursive: true, force: true });
    }
  };
  try {
    for (let i = 0; i < PLAN.startPairs; i++) {
      // Each pair in the other order than the last, so what the first start of a pair pays (a
      // cold file cache, say) falls on both sides.
      const order = i % 2 ? (['with', 'without'] as const) : (['without', 'with'] as const);
      for (const key of order) runs[key].push(await probe(['start', dirs[key]]));
      for (const which of ordered(['package', 'smallest', 'catalogued'] as const, i)) await loadOnce(which);
    }
  } finally {
    for (const dir of [...Object.values(dirs), staged]) rmSync(dir, { recursive: true, force: true });
  }
  const summary = (key: 'without' | 'with') => ({
    startMs: round(median(runs[key].map((r) => r.startMs as number)), 0),
    cpuMs: round(median(runs[key].map((r) => r.cpuMs as number)), 0),
    rssMB: MB(median(runs[key].map((r) => r.rss as number))),
    heapMB: MB(median(runs[key].map((r) => r.heapUsed as number))),
    bulkgateTypes: runs[key][0]?.bulkgateTypes,
  });
  const row = { starts: PLAN.startPairs, without: summary('without'), with: summary('with') };
  // Added: the median of the differences within each pair (started one after the other), so a
  // slow minute of the machine falls on both sides of a difference.
  const differences = (field: string) =>
    runs.with.map((r, i) => (r[field] as number) - (runs.without[i]?.[field] as number)).sort((a, b) => a - b);
  const added = (field: string) => median(differences(field));
  // The middle half of the start-time differences: how far one pair strays on this machine.
  const spread = differences('startMs');
  const addedRow = {
    startMs: round(added('startMs'), 0),
    cpuMs: round(added('cpuMs'), 0),
    rssMB: MB(added('rss')),
    heapMB: MB(added('heapUsed')),
    startMsMiddleHalf: [round(percentile(spread, 25), 0), round(percentile(spread, 75), 0)],
  };
  const share = (which: Loaded) => {
    const times = loads[which].map((r) => r.addMs as number).sort((a, b) => a - b);
    // What the package adds to a start: the registry load without the scan a start makes with or
    // without it (timed as a search for an absent name); the first start after an install also
    // saves the node list, which every later start (the list unchanged) does not. Per probe, then the median.
    const firstStart = loads[which].map((r) => (r.addMs as number) - (r.scanMs as number)).sort((a, b) => a - b);
    const everyStart = loads[which]
      .map((r) => (r.addMs as number) - (r.scanMs as number) - (r.saveListMs as number))
      .sort((a, b) => a - b);
    return {
      ms: round(median(times), 1),
      msMiddleHalf: [round(percentile(times, 25), 1), round(percentile(times, 75), 1)],
      findMs: round(median(loads[which].map((r) => r.findMs as number)), 1),
      scanMs: round(median(loads[which].map((r) => r.scanMs as number)), 1),
      saveListMs: round(median(loads[which].map((r) => r.saveListMs as number)), 1),
      firstStartMs: round(median(firstStart), 1),
      everyStartMs: round(median(everyStart), 1),
      everyStartMsMiddleHalf: [round(percentile(everyStart, 25), 1), round(percentile(everyStart, 75), 1)],
      cpuMs: round(median(loads[which].map((r) => r.addCpuMs as number)), 1),
      rssMB: MB(median(loads[which].map((r) => r.addRss as number))),
      heapMB: MB(median(loads[which].map((r) => r.addHeap as number))),
      sets: loads[which][0]?.sets,
      types: loads[which][0]?.bulkgateTypes,
      errors: loads[which].flatMap((r) => r.errors as string[]),
    };
  };
  const load = share('package');
  const smallest = share('smallest');
  const catalogued = share('catalogued');
  console.log(
    `installed, unused (${PLAN.startPairs} starts each): without ${row.without.startMs} ms (${row.without.cpuMs} ms CPU), ${row.without.rssMB} MB RSS, ${row.without.heapMB} MB heap; with ${row.with.startMs} ms (${row.with.cpuMs} ms CPU), ${row.with.rssMB} MB RSS, ${row.with.heapMB} MB heap (${row.with.bulkgateTypes} types); added (median of pairs) ${addedRow.startMs} ms (middle half of pairs ${addedRow.startMsMiddleHalf.join(' to ')} ms), ${addedRow.cpuMs} ms CPU, ${addedRow.rssMB} MB RSS, ${addedRow.heapMB} MB heap`,
  );
  for (const [what, r] of [
    ['the package', load],
    ['the smallest package', smallest],
    ['the smallest package with a catalog', catalogued],
  ] as const) {
    console.log(
      `installed, ${what}'s share of a start (${PLAN.startPairs} starts, registry load in the same process): ${r.ms} ms (middle half ${r.msMiddleHalf.join(' to ')} ms; of it finding the package ${r.findMs} ms, of which the scan every start makes ${r.scanMs} ms, and saving the node list ${r.saveListMs} ms); added to the first start after installing ${r.firstStartMs} ms, to every later start ${r.everyStartMs} ms (middle half ${r.everyStartMsMiddleHalf.join(' to ')}); ${r.cpuMs} ms CPU, ${r.rssMB} MB RSS, ${r.heapMB} MB heap; ${r.sets} node set(s), ${r.types} types, ${r.errors.length} errors`,
    );
  }
  return { ...row, added: addedRow, load, smallest, catalogued };
}
