import type { ChildProcess } from 'node:child_process';
import { onExit } from 'signal-exit';

const running = new Set<ChildProcess>();

// A test file that tap ends at its time limit (SIGTERM), or that throws, runs no teardown: the
// daemons and page servers it started are told to stop as it goes, so none outlives it to load
// the files after it. signal-exit, which tap itself uses, runs this on a signal as on a plain exit.
onExit(() => {
  for (const child of running) if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
});

/** `child` gets SIGTERM when this test process ends, unless it has ended first. */
export function stopAtExit(child: ChildProcess): ChildProcess {
  running.add(child);
  child.once('exit', () => running.delete(child));
  return child;
}
