import type { Clock } from '../base/clock.js';
import type { Config } from '../base/config.js';
import { probeCgroups, type CgroupProbe } from './cgroup.js';
import { CgroupContainment } from './cgroup-containment.js';
import { processGroupContainment, type Containment } from './containment.js';

/**
 * The containment `process_containment` asks for. "auto" takes cgroups where the probe finds them
 * usable and falls back to process groups, saying why; "cgroup" throws instead of falling back;
 * "process_group" does not probe.
 */
export async function chooseContainment(setting: Config['process_containment'], clock: Clock, graceMs: number, probe: () => Promise<CgroupProbe> = () => probeCgroups()): Promise<{ containment: Containment; fallback: string | null }> {
  if (setting === 'process_group') return { containment: processGroupContainment(clock, graceMs), fallback: null };
  const found = await probe();
  if (found.usable) return { containment: new CgroupContainment(found.dir, clock, graceMs), fallback: null };
  if (setting === 'cgroup') throw new Error(`process_containment is "cgroup", but cgroup v2 cannot be used: ${found.problem}`);
  return { containment: processGroupContainment(clock, graceMs), fallback: found.problem };
}
