#!/usr/bin/env node
// `npm run test:under-load [-- --runs N]`: the whole suite (`npm test`), N times in a row (5 by
// default), with a CPU hog beside it: one busy loop per core, as a machine busy with other work
// would be. Prints one line per run (its result and wall time) and a summary; exits 1 if any run
// failed. A test that a busy machine turns is a defect (test/README.md, "Green under load").
import { spawn } from 'node:child_process';
import { availableParallelism } from 'node:os';
import { parseArgs } from 'node:util';

const { values } = parseArgs({ options: { runs: { type: 'string', default: '5' } } });
const runs = Number(values.runs);
if (!Number.isInteger(runs) || runs < 1 || runs > 50) {
  process.stderr.write('usage: npm run test:under-load [-- --runs N]   (N from 1 to 50)\n');
  process.exit(2);
}

const cores = availableParallelism();
// Each loop is its own process, so that the scheduler shares every core between the suite and them.
const hogs = Array.from({ length: cores }, () => spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' }));
const stopHogs = () => {
  for (const hog of hogs) hog.kill('SIGKILL');
};
process.on('exit', stopHogs);
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => process.exit(130));

/** One `npm test`; resolves with its exit code, tap's summary line and the wall time in seconds. */
function suite() {
  return new Promise((resolve) => {
    const started = performance.now();
    const child = spawn('npm', ['test'], { stdio: ['ignore', 'pipe', 'inherit'] });
    let summary = '';
    let tail = '';
    child.stdout.on('data', (chunk) => {
      process.stdout.write(chunk);
      tail = (tail + chunk.toString('utf8')).slice(-65_536);
      const found = tail.match(/^# \{ total: .*\}$/gm);
      if (found !== null) summary = found.at(-1);
    });
    child.on('close', (code) => resolve({ code, summary, seconds: (performance.now() - started) / 1000 }));
  });
}

const results = [];
for (let run = 1; run <= runs; run += 1) {
  const result = await suite();
  results.push(result);
  process.stdout.write(`\n== under load, run ${run} of ${runs}: ${result.code === 0 ? 'green' : `failed (exit ${result.code})`}, ${(result.seconds / 60).toFixed(1)} min, ${result.summary}\n`);
}
process.stdout.write(`\n== ${cores} busy loops beside the suite, ${runs} runs:\n`);
results.forEach((result, i) => process.stdout.write(`run ${i + 1}: ${result.code === 0 ? 'green' : 'FAILED'}  ${(result.seconds / 60).toFixed(1)} min  ${result.summary}\n`));
process.exit(results.every((result) => result.code === 0) ? 0 : 1);
