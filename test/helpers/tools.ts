import { execFileSync } from 'node:child_process';

/** Whether a command is on the PATH (tests that need one skip with a reason where it is not). */
export function hasTool(name: string): boolean {
  try {
    execFileSync('sh', ['-c', `command -v ${name}`], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}
