// The mutants a mutation run left alive (survived or not covered), by file and line, from
// reports/mutation/mutation.json: the list docs/mutation.md explains.
// Usage: node scripts/mutation-survivors.mjs [report.json] [file filter]
import { readFileSync } from 'node:fs';

const [reportPath = 'reports/mutation/mutation.json', only = ''] = process.argv.slice(2);
const report = JSON.parse(readFileSync(reportPath, 'utf8'));
for (const [file, { source, mutants }] of Object.entries(report.files)) {
  if (!file.includes(only)) continue;
  const left = mutants.filter((m) => m.status === 'Survived' || m.status === 'NoCoverage');
  if (!left.length) continue;
  console.log(`\n## ${file} (${left.length})`);
  const lines = source.split('\n');
  const byLine = new Map();
  for (const m of left) byLine.set(m.location.start.line, [...(byLine.get(m.location.start.line) ?? []), m]);
  for (const line of [...byLine.keys()].sort((a, b) => a - b)) {
    console.log(`${line}: ${lines[line - 1].trim().slice(0, 110)}`);
    for (const m of byLine.get(line)) {
      const replacement = (m.replacement ?? '').replace(/\s+/g, ' ').slice(0, 70);
      console.log(
        `    ${m.status === 'NoCoverage' ? 'no coverage' : 'survived'}: ${m.mutatorName} ${replacement}${m.static ? ' (static)' : ''}`,
      );
    }
  }
}
