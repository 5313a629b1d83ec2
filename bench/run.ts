// The benchmark suite of issue 6: `npm run bench` (full sizes, targets asserted),
// `npm run bench -- --quick` (small sizes, timings never asserted), `--only P3` (one benchmark).
import { mkdtemp, rm } from 'node:fs/promises';
import { cpus, freemem, loadavg, totalmem, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { cleanupAll } from './lib/cleanup.js';
import { tempDirFactory, type Benchmark } from './lib/context.js';
import { sweepProcesses } from './lib/proc.js';
import { Reporter } from './lib/report.js';
import { errorText } from './lib/util.js';
import { p1 } from './p1-rpc.js';
import { p2 } from './p2-history.js';
import { p3 } from './p3-overhead.js';
import { p4 } from './p4-waiting.js';
import { p5 } from './p5-deadlines.js';
import { p6 } from './p6-reload.js';
import { p7 } from './p7-live.js';
import { p8 } from './p8-cluster.js';
import { p9 } from './p9-replay.js';
import { p10 } from './p10-sandbox.js';
import { p11 } from './p11-restart.js';
import { p12 } from './p12-retention.js';
import { p13 } from './p13-web.js';
import { p14 } from './p14-gateway.js';
import { p15 } from './p15-access.js';
import { p16 } from './p16-skill-test.js';

const BENCHMARKS: readonly Benchmark[] = [p1, p2, p3, p4, p5, p6, p7, p8, p9, p10, p11, p12, p13, p14, p15, p16];

const USAGE = `usage: node dist/bench/run.js [--quick] [--only P1..P16]

  --quick    small sizes; checks that every benchmark runs and produces numbers, never asserts timings
  --only P3  run one benchmark (may be repeated)`;

/** The 1-minute load average: other work on the machine skews every figure, so it is printed with them. */
function load(): string {
  return (loadavg()[0] ?? 0).toFixed(2);
}

async function main(): Promise<number> {
  let values;
  try {
    ({ values } = parseArgs({ options: { quick: { type: 'boolean' }, only: { type: 'string', multiple: true }, help: { type: 'boolean', short: 'h' } }, strict: true }));
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\n${USAGE}\n`);
    return 2;
  }
  if (values.help === true) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const quick = values.quick === true;
  const only = (values.only ?? []).map((id) => id.toUpperCase());
  const unknown = only.filter((id) => !BENCHMARKS.some((b) => b.id === id));
  if (unknown.length > 0) {
    process.stderr.write(`unknown benchmark ${unknown.join(', ')}; known: ${BENCHMARKS.map((b) => b.id).join(', ')}\n`);
    return 2;
  }
  const selected = only.length === 0 ? BENCHMARKS : BENCHMARKS.filter((b) => only.includes(b.id));

  const root = await mkdtemp(join(tmpdir(), 'skilld-bench-'));
  const cleanup = async (): Promise<void> => {
    await cleanupAll();
    sweepProcesses(root);
    await rm(root, { recursive: true, force: true });
  };
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      process.stderr.write(`\n${signal}: stopping the daemons and engines, removing ${root}\n`);
      void cleanup().finally(() => process.exit(130));
    });
  }

  const cpu = cpus();
  process.stdout.write(
    `skilld benchmarks (${quick ? 'quick: small sizes, timings not asserted' : 'full'}) — node ${process.version}, ${cpu.length} x ${cpu[0]?.model ?? 'cpu'}, ` +
      `${Math.round(totalmem() / 2 ** 30)} GiB RAM (${Math.round(freemem() / 2 ** 30)} free), load average ${load()}, temp ${root}\n`,
  );
  const reporter = new Reporter(quick);
  const started = performance.now();
  try {
    for (const bench of selected) {
      process.stdout.write(`\n== ${bench.id} ${bench.title}\n`);
      const t0 = performance.now();
      try {
        await bench.run({ quick, tempDir: tempDirFactory(join(root, bench.id.toLowerCase())), report: reporter.forBench(bench.id) });
      } catch (error) {
        reporter.fail(bench.id, errorText(error));
      } finally {
        await cleanupAll();
      }
      process.stdout.write(`${bench.id} took ${((performance.now() - t0) / 1000).toFixed(1)} s (load average now ${load()})\n`);
    }
  } finally {
    await cleanup();
  }
  process.stdout.write(`\n== Summary (${quick ? 'quick' : 'full'}, ${((performance.now() - started) / 1000).toFixed(1)} s)\n${reporter.summaryTable()}\n`);
  const code = reporter.exitCode();
  if (quick) process.stdout.write(code === 0 ? '\nquick run: every benchmark ran and produced numbers (timings not asserted)\n' : '\nquick run: a benchmark did not run or produced no number\n');
  else process.stdout.write(code === 0 ? '\nevery target holds\n' : `\n${reporter.rows.filter((r) => !r.pass).length} target(s) missed${reporter.failures.length > 0 ? `, ${reporter.failures.length} benchmark(s) did not complete` : ''}\n`);
  return code;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`bench: fatal: ${errorText(error)}\n`);
    void cleanupAll().finally(() => process.exit(1));
  },
);
