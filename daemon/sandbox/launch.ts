import { closeSync, openSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { BWRAP, bwrapCommand, bwrapOptions } from './bwrap.js';
import { OpenPathError } from './open-path.js';
import { handOver, openPlan } from './open-plan.js';
import type { SandboxPlan } from './plan.js';

/** A sandbox ready to start: the command of its outer process, and the descriptors it is handed from `first` on. */
export interface SandboxLaunch {
  argv: string[];
  fds: number[];
  /** Closes the daemon's descriptors, once the outer process holds its own. */
  close(): void;
}

/**
 * Prepares the sandbox of `plan` to run `argv` with exactly `env`: its paths opened once
 * (open-plan.ts), and its options, the engine's environment included, in a file handed over as a
 * descriptor (`bwrap --args`), removed as soon as it is open. What `ps` shows of a sandbox to
 * every local user is `bwrap --args N -- <the engine's command>`: no path, no variable (the
 * prompt goes on stdin, engines/prompt-route.ts). `scratch` is a folder of the daemon's, out of
 * every sandbox's sight. Throws OpenPathError.
 */
export function prepareSandbox(plan: SandboxPlan, argv: readonly string[], env: Readonly<Record<string, string>>, scratch: string, first: number): SandboxLaunch {
  const opened = openPlan(plan, scratch);
  try {
    const { numbers, fds } = handOver(opened, first + 1);
    // bubblewrap takes options from the file, never the command: that stays on the command line.
    const options = bwrapOptions(opened.plan, numbers, env);
    // The file is NUL-separated: a NUL in a value would make more options of it.
    const nul = options.find((option) => option.includes('\0'));
    if (nul !== undefined) throw new OpenPathError(`a value for the sandbox holds a NUL character: ${nul.replaceAll('\0', '\\0').slice(0, 80)}`);
    const file = join(scratch, 'sandbox-args');
    writeFileSync(file, `${options.join('\0')}\0`, { mode: 0o600 });
    const argsFd = openSync(file, 'r');
    unlinkSync(file);
    return {
      argv: [BWRAP, '--args', String(first), ...bwrapCommand(opened.plan, argv)],
      fds: [argsFd, ...fds],
      close: () => {
        closeSync(argsFd);
        opened.close();
      },
    };
  } catch (error) {
    opened.close();
    throw error;
  }
}
