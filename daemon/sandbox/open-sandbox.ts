import { spawnSync } from 'node:child_process';
import { realpathSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname } from 'node:path';
import { ConfigError, type Config } from '../base/config.js';
import type { NetworkBridge } from '../base/config-network.js';
import type { Bridge } from './network-bridge.js';
import { ENGINE_NAMES, type EngineName } from '../model/job.js';
import type { Logger } from '../base/logger.js';
import { engineHome } from './engine-homes.js';
import { installedProgram } from './install-folder.js';
import { ownPlace } from './input-paths.js';
import { JobSandbox, type SandboxSetup } from './job-sandbox.js';
import type { SandboxPlan } from './plan.js';
import { probeSandbox, type SandboxProbe } from './probe.js';
import { engineUser } from './run-as.js';
import { systemPaths } from './system-paths.js';
import type { ShortRunner } from '../model/short-run.js';

/**
 * Decides at start what every job is shown (the system, each engine's extra paths), who engines
 * are inside (run-as.ts), probes the sandbox (unless the config turns it off), and says what jobs
 * will get: in a sandbox, or, loudly, without one and why. A path in the config that is or holds
 * one of the daemon's own places stops start-up.
 */
export async function openSandbox(config: Config, env: Readonly<Record<string, string>>, run: ShortRunner, logger: Logger): Promise<JobSandbox> {
  const home = env['HOME'] ?? homedir();
  // Every engine's configured home is the daemon's: a job's own engine gets one of the job's own in its place.
  const engineHomes = ENGINE_NAMES.map((name) => engineHome(name, { ...env, ...config.engines[name].env }, home).folder);
  const own: SandboxPlan['own'] = {
    places: [...new Set([config.state_dir, dirname(config.socket), ...(env['XDG_RUNTIME_DIR'] === undefined ? [] : [env['XDG_RUNTIME_DIR']]), ...(config.config_file === null ? [] : [config.config_file]), ...engineHomes])],
    skills: config.skills_dirs,
    home,
  };
  const engines = {} as Record<EngineName, SandboxSetup['engines'][EngineName]>;
  for (const name of ENGINE_NAMES) {
    const extra = config.engines[name].sandbox;
    checkConfigPaths(`engines.${name}.sandbox`, extra.read_only, extra.read_write, own);
    engines[name] = { command: config.engines[name].command, readOnly: [...config.sandbox.read_only, ...extra.read_only], readWrite: extra.read_write };
  }
  checkConfigPaths('sandbox', config.sandbox.read_only, [], own);
  const system = systemPaths();
  const found = await engineUser(config.sandbox.run_as, run);
  let probe: SandboxProbe;
  if (config.sandbox.mode === 'off') probe = { available: false, reason: 'off' };
  else if ('problem' in found) probe = { available: false, reason: found.problem };
  else probe = await probeSandbox(run, env, system, found.user, found.switched, config.network.mode !== 'open');
  const user = 'problem' in found ? { uid: -1, gid: -1, user: 'none', group: 'none' } : found.user;
  const asRoot = process.getuid?.() === 0;
  const bridge = chooseBridge(config.network.bridge, env['PATH'], own);
  const sandbox = new JobSandbox({ mode: config.sandbox.mode, probe, own, user, switched: 'problem' in found ? false : found.switched, system, engines, asRoot, bridge, network: config });
  const { view } = sandbox;
  sayNetwork(sandbox, logger);
  if (view.isolation === 'sandbox') return sandbox;
  if (view.mode === 'off') logger.warn({ sandbox: view }, 'jobs run without a sandbox: an engine can read and change what the daemon\'s user can (sandbox: "off")');
  else if (view.mode === 'required') logger.error({ sandbox: view }, 'the sandbox is required and cannot run here: no job will start');
  else logger.warn({ sandbox: view }, 'the sandbox cannot run here, so jobs run without one: an engine can read and change what the daemon\'s user can');
  const claude = sandbox.refuseJob('claude');
  if (claude !== null && sandbox.refusal() === null) logger.warn({ engine: 'claude' }, claude.message);
  return sandbox;
}

/**
 * The bridge of each job's own network (network-bridge.ts, `network.bridge`): socat where it and
 * setpriv are among the system's programs (found on the daemon's PATH, and shown to every
 * sandbox anyway) and run as the bridge runs them (`works`: a setpriv older than util-linux 2.33
 * has no `--pdeathsig`), else the node this daemon runs on. `socat` asked for and not there, or
 * not working, stops start-up.
 */
export function chooseBridge(wanted: NetworkBridge, path: string | undefined, own: SandboxPlan['own'], works: (setpriv: string, socat: string) => boolean = socatRuns): Bridge {
  const refused = (one: string): boolean => ownPlace(one, own, false);
  if (wanted !== 'node') {
    // Among the system's programs: a program found elsewhere would need folders of its own shown.
    const system = (name: string): string | null => {
      const found = installedProgram(name, path ?? '/usr/bin:/bin', '/', refused);
      return found !== null && found.shown.length === 0 ? found.program : null;
    };
    const [socat, setpriv] = [system('socat'), system('setpriv')];
    if (socat !== null && setpriv !== null) {
      if (works(setpriv, socat)) return { kind: 'socat', program: socat, setpriv };
      if (wanted === 'socat') throw new ConfigError(`config key "network.bridge" is "socat", but \`${setpriv} --pdeathsig KILL -- ${socat} -V\` does not run here (setpriv from util-linux 2.33 or later is needed): use "auto" or "node"`);
    }
    const missing = [socat === null ? 'socat' : null, setpriv === null ? 'setpriv' : null].filter((name) => name !== null);
    if (wanted === 'socat' && missing.length > 0) throw new ConfigError(`config key "network.bridge" is "socat", but ${missing.join(' and ')} ${missing.length > 1 ? 'are' : 'is'} not on the PATH among the system's programs, which every sandbox is shown: install ${missing.join(' and ')} (Debian: apt-get install socat util-linux), or use "auto" or "node"`);
  }
  const node = installedProgram(process.execPath, undefined, '/', refused) ?? { program: process.execPath, shown: [] };
  return { kind: 'node', program: node.program, shown: node.shown };
}

/** Whether setpriv starts socat as the socat bridge does, with a parent-death signal. */
function socatRuns(setpriv: string, socat: string): boolean {
  return spawnSync(setpriv, ['--pdeathsig', 'KILL', '--', socat, '-V'], { stdio: 'ignore', timeout: 5000 }).status === 0;
}

/** Says at start what jobs' network is, loudly where it is not their own. */
function sayNetwork(sandbox: JobSandbox, logger: Logger): void {
  const { network } = sandbox;
  const refused = sandbox.refusal();
  if (refused !== null && network.configured === 'isolated') logger.error({ network }, refused.message);
  else if (network.mode === 'open') logger.warn({ network }, "jobs' engines share the host's network: whatever they run can reach what the host reaches, its loopback and cloud metadata included");
}

/** A path of the config that is or holds one of the daemon's own places (a skills folder too, to be written) stops start-up. */
function checkConfigPaths(key: string, readOnly: readonly string[], readWrite: readonly string[], own: SandboxPlan['own']): void {
  for (const [list, paths] of [['read_only', readOnly], ['read_write', readWrite]] as const) {
    for (const path of paths) {
      if (ownPlace(realpathSync(path), own, list === 'read_write')) throw new ConfigError(`config key "${key}.${list}" names ${path}, which is or holds one of the daemon's own places (its state, socket, config, engine homes, its user's home or its dot-files${list === 'read_write' ? ', a skills folder' : ''}): no job is shown it`);
    }
  }
}
