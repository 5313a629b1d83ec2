import { realpathSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname } from 'node:path';
import type { Config } from '../config.js';
import type { ShortRunner } from '../engines/probe.js';
import { ENGINE_NAMES } from '../jobs/job.js';
import type { Logger } from '../logger.js';
import { findExecutable } from '../process/executable.js';
import { engineHome } from './engine-homes.js';
import { JobSandbox } from './job-sandbox.js';
import { probeSandbox } from './probe.js';

/**
 * Probes the sandbox (unless the config turns it off) and says at start what jobs will get: in
 * a sandbox, or, loudly, without one and why.
 */
export async function openSandbox(config: Config, env: Readonly<Record<string, string>>, run: ShortRunner, logger: Logger): Promise<JobSandbox> {
  const probe = config.sandbox === 'off' ? { available: false as const, reason: 'off' } : await probeSandbox(run, env);
  const home = env['HOME'] ?? homedir();
  // Every engine's configured home is hidden from every job; a job's own engine gets one of the job's own in its place.
  const engineHomes = ENGINE_NAMES.map((name) => engineHome(name, { ...env, ...config.engines[name].env }, home).folder);
  const daemon = {
    stateDir: config.state_dir,
    skillsDirs: config.skills_dirs,
    socketDir: dirname(config.socket),
    configFile: config.config_file,
    home,
    runtimeDir: env['XDG_RUNTIME_DIR'] ?? null,
    engineHomes: [...new Set(engineHomes)],
  };
  const extra = Object.fromEntries(ENGINE_NAMES.map((name) => [name, config.engines[name].sandbox])) as Record<(typeof ENGINE_NAMES)[number], Config['engines']['codex']['sandbox']>;
  const sandbox = new JobSandbox(config.sandbox, probe, daemon, extra, process.getuid?.() === 0);
  const { view } = sandbox;
  // Where jobs run in a sandbox, the ready line says so; where they do not, a warning of its own.
  if (view.isolation === 'sandbox') {
    warnHiddenEngines(config, env, sandbox, logger);
    return sandbox;
  }
  if (view.mode === 'off') logger.warn({ sandbox: view }, 'jobs run without a sandbox: an engine can read and change what the daemon\'s user can (sandbox: "off")');
  else if (view.mode === 'required') logger.error({ sandbox: view }, 'the sandbox is required and cannot run here: no job will start');
  else logger.warn({ sandbox: view }, 'the sandbox cannot run here, so jobs run without one: an engine can read and change what the daemon\'s user can');
  const claude = sandbox.refuseJob('claude');
  if (claude !== null && sandbox.refusal() === null) logger.warn({ engine: 'claude' }, claude.message);
  return sandbox;
}

/** Says at start which engine is installed where its jobs' sandboxes cannot see it: its jobs would fail to start. */
function warnHiddenEngines(config: Config, env: Readonly<Record<string, string>>, sandbox: JobSandbox, logger: Logger): void {
  for (const name of ENGINE_NAMES) {
    const { command } = config.engines[name];
    const found = findExecutable(command[0] ?? '', { ...env, ...config.engines[name].env }['PATH'], process.cwd());
    if (found === null) continue;
    const real = realpathSync(found);
    const hidden = sandbox.hiding(name, real);
    if (hidden !== null) logger.warn({ engine: name, executable: real, hidden_by: hidden }, `${name} is installed in ${hidden}, which its jobs' sandboxes hide, so its jobs cannot start: install it elsewhere, or add its folder to engines.${name}.sandbox.read_only`);
  }
}
