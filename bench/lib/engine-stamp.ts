// Preloaded into a fake engine with `node --import <this file's URL> fake-<engine>.mjs ...` (P3).
// Appends one line to `<cwd>/.bench-stamp.ndjson` as the process exits:
//   start: performance.timeOrigin, the moment Node started (before its own bootstrap);
//   exit:  the moment process.exit ran (the fake exits right after its last output).
// Both are epoch milliseconds with sub-millisecond resolution, comparable with the bench's clock.
import { appendFileSync } from 'node:fs';
import { join } from 'node:path';

const file = join(process.cwd(), '.bench-stamp.ndjson');
process.on('exit', (code) => {
  const line = { pid: process.pid, start: performance.timeOrigin, exit: performance.timeOrigin + performance.now(), code };
  appendFileSync(file, `${JSON.stringify(line)}\n`);
});
