import type { Limits } from './base/config-sandbox.js';
import type { LimitPlace, LimitSupport } from './process/cgroup-limits.js';
import type { SandboxView } from './sandbox/job-sandbox.js';
import { WORKSPACE_CHECK_MS } from './jobs/workspace-guard.js';

/** One limit as `daemon/status` reports it: its value (null: none), whether it holds, by what, or why not. */
export interface LimitView {
  value: number | null;
  enforced: boolean;
  by: string | null;
  reason: string | null;
}

export type LimitsView = Record<keyof Limits, LimitView>;

/** What `daemon/status` says of the limits in force (docs/sandbox.md, "Limits"). */
export function limitsView(limits: Limits, support: LimitSupport, sandbox: SandboxView): LimitsView {
  const cgroup = (value: number | null, place: LimitPlace): LimitView => {
    if (value === null) return { value, enforced: false, by: null, reason: 'no limit is set' };
    return place.by === null ? { value, enforced: false, by: null, reason: place.problem } : { value, enforced: true, by: place.by, reason: null };
  };
  const inSandbox = sandbox.isolation === 'sandbox';
  return {
    processes: cgroup(limits.processes, support.processes),
    memory: cgroup(limits.memory, support.memory),
    tmp: inSandbox ? { value: limits.tmp, enforced: true, by: "the sandbox's /tmp", reason: null } : { value: limits.tmp, enforced: false, by: null, reason: `jobs run without a sandbox: ${sandbox.reason ?? ''}` },
    workspace: limits.workspace === null ? { value: null, enforced: false, by: null, reason: 'no limit is set' } : { value: limits.workspace, enforced: true, by: `measured at each turn's end and every ${WORKSPACE_CHECK_MS / 1000} s`, reason: null },
  };
}
