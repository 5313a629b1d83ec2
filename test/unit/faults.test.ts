import t from 'tap';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { pathToFileURL } from 'node:url';
import { ROOT } from '../helpers/daemon.js';

const run = promisify(execFile);

// The guard is process-wide, so it is tried in a process of its own: an exception thrown from a
// timer and a rejection nobody handles are logged and counted, and the process keeps running.
t.test('the last line of defence logs an uncaught exception and an unhandled rejection, and the process lives on', async (t) => {
  const faults = pathToFileURL(join(ROOT, 'dist', 'daemon', 'base', 'faults.js')).href;
  const script = `
    import { Faults } from ${JSON.stringify(faults)};
    const logged = [];
    const logger = { debug() {}, info() {}, warn() {}, error: (obj, msg) => logged.push({ where: obj.where, message: obj.err.message, msg }) };
    const faults = new Faults(logger, () => new Date(0));
    faults.guardProcess();
    setTimeout(() => { throw new Error('thrown from a timer'); }, 0);
    Promise.reject(new Error('rejected, never handled'));
    setTimeout(() => process.stdout.write(JSON.stringify({ logged, stats: faults.stats() })), 20);
  `;
  const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script]);
  const report = JSON.parse(stdout) as { logged: Array<{ where: string; message: string }>; stats: { count: number; last_at: string } };
  t.same(
    report.logged.map((l) => [l.where, l.message]).sort(),
    [
      ['uncaught_exception', 'thrown from a timer'],
      ['unhandled_rejection', 'rejected, never handled'],
    ],
  );
  t.same(report.stats, { count: 2, last_at: '1970-01-01T00:00:00.000Z' }, 'counted for daemon/status');
});

t.test('without the guard the same exception ends the process (the test above can fail)', async (t) => {
  const result = await run(process.execPath, ['-e', "setTimeout(() => { throw new Error('thrown from a timer'); }, 0); setTimeout(() => process.stdout.write('alive'), 20);"]).then(
    ({ stdout }) => stdout,
    (error: { code: number; stdout: string }) => `exit ${error.code} ${error.stdout}`,
  );
  t.equal(result.trim(), 'exit 1');
});
