#!/usr/bin/env node
// `npm run test:times [-- --top N]`: where the suite's time goes, per test file, from tap's own
// timings of the last run in this checkout (.tap/test-results/**.tap, each ending in
// `# time=<ms>`). Files are listed slowest first with their share of the sum; the sum is more than
// the wall time, as tap runs files side by side (`jobs` in .taprc).
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { parseArgs } from 'node:util';

const { values } = parseArgs({ options: { top: { type: 'string' }, dir: { type: 'string' } } });
const root = values.dir ?? join('.tap', 'test-results');
const top = values.top === undefined ? Infinity : Number(values.top);
if (!Number.isInteger(top) && top !== Infinity) {
  process.stderr.write('usage: npm run test:times [-- --top N] [--dir FOLDER]\n');
  process.exit(2);
}

/** Every `.tap` file under `dir`. */
function tapFiles(dir) {
  let names;
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  return names.flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? tapFiles(path) : name.endsWith('.tap') ? [path] : [];
  });
}

const rows = [];
for (const path of tapFiles(root)) {
  const times = [...readFileSync(path, 'utf8').matchAll(/^# time=([\d.]+)ms$/gm)];
  const last = times.at(-1);
  if (last !== undefined) rows.push({ file: relative(root, path).replace(/\.tap$/, ''), ms: Number(last[1]) });
}
if (rows.length === 0) {
  process.stderr.write(`no test results under ${root}: run the suite first (npm test)\n`);
  process.exit(1);
}
rows.sort((a, b) => b.ms - a.ms);
const sum = rows.reduce((total, row) => total + row.ms, 0);
const width = Math.max(...rows.map((row) => row.file.length));
process.stdout.write(`${'file'.padEnd(width)}  ${'seconds'.padStart(8)}  share\n`);
for (const row of rows.slice(0, top)) {
  process.stdout.write(`${row.file.padEnd(width)}  ${(row.ms / 1000).toFixed(1).padStart(8)}  ${((100 * row.ms) / sum).toFixed(1).padStart(4)} %\n`);
}
process.stdout.write(`${rows.length} files, ${(sum / 1000).toFixed(0)} s of test time in all\n`);
