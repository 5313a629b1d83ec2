import type { SandboxPlan } from './plan.js';

/**
 * A sandbox plan as the table docs/sandbox.md shows: each path and what the engine sees of it,
 * in the order the sandbox is built (a later line wins over an earlier one for the paths below it).
 */
export function describePlan(plan: SandboxPlan): string {
  const rows: Array<[string, string]> = [
    ...plan.system.map((path): [string, string] => [path, 'read-only: the system, so that tools work']),
    ...plan.covered.map(({ path, by }): [string, string] => [path, by === null ? "hidden: an empty folder of the job's own, written to memory and gone with it" : `in its place, read and written: the job's own \`${by}\``]),
    ...plan.hiddenFiles.map((path): [string, string] => [path, 'hidden: it cannot be read']),
    ...plan.readOnly.map(({ path, what }): [string, string] => [path, `read-only: ${what}`]),
    ...plan.readWrite.map(({ path, what }): [string, string] => [path, `read and written: ${what}`]),
  ];
  return ['| path | what the engine sees |', '|---|---|', ...rows.map(([path, what]) => `| \`${path}\` | ${what} |`)].join('\n');
}
