import { sizeText } from '../rpc/size.js';
import { cell, errorText, keyValues } from './format.js';
import { terminalText } from './terminal-text.js';
import { durationText } from './time-text.js';
import type { EngineView, LimitStatus, NetworkStatus, RetentionView, SandboxStatus, StateLockStatus, StatusView } from './wire.js';

/**
 * `skillctl status` as a person reads it: aligned `key: value` lines, each a sentence rather than
 * a JSON object, in the order one checks a daemon: what it is, where it reads and keeps things,
 * what can run, what is running, what jobs get. A key a newer daemon adds is shown at the end as
 * it comes. (`--json` prints daemon/status as it is.)
 */
export function statusText(status: StatusView, engines: readonly EngineView[], now: number): string {
  const pairs: Array<[string, string]> = [];
  const shown = new Set<string>();
  const take = (key: string): unknown => {
    shown.add(key);
    return status[key];
  };
  const add = (key: string, text: string | null): void => {
    if (text !== null) pairs.push([key, text]);
  };
  add('version', text(take('version')));
  add('pid', text(take('pid')));
  const started = take('started_at');
  if (typeof started === 'string') pairs.push(['started', `${started} (up ${durationText(now - Date.parse(started))})`]);
  const configFile = take('config_file');
  add('config file', configFile === undefined ? null : typeof configFile === 'string' ? terminalText(configFile) : 'none: built-in defaults, flags and SKILLD_* variables');
  add('socket', text(take('socket')));
  add('state folder', text(take('state_dir')));
  const lock = take('state_lock') as StateLockStatus | undefined;
  if (lock !== undefined) add('state lock', stateLockText(lock));
  add('skills folders', skillsDirsText(take('skills_dirs'), take('missing_skills_dirs')));
  const skills = take('skills') as StatusView['skills'];
  add('skills', `${skills.ok} ok, ${skills.invalid} invalid${skills.invalid > 0 ? ' (skillctl skills says why)' : ''}`);
  for (const engine of engines) pairs.push([`engine ${engine.name}`, engineText(engine)]);
  const defaultEngine = take('default_engine');
  if (typeof defaultEngine === 'string') add('default engine', terminalText(defaultEngine));
  const slots = take('slots') as StatusView['slots'];
  add('slots', `${slots.used} of ${slots.max} used, ${slots.queued} queued`);
  const counts = Object.entries(take('jobs') as StatusView['jobs']).filter(([, n]) => n > 0).map(([name, n]) => `${n} ${name}`);
  add('jobs', counts.length === 0 ? 'none' : counts.join(', '));
  const sandbox = take('sandbox') as SandboxStatus | undefined;
  if (sandbox !== undefined) add('sandbox', sandboxText(sandbox));
  const network = take('network') as NetworkStatus | undefined;
  if (network !== undefined) add('network', networkText(network));
  const limits = take('limits') as Record<string, LimitStatus> | undefined;
  for (const [name, limit] of Object.entries(limits ?? {})) pairs.push([`limit ${name}`, limitText(name, limit)]);
  add('containment', containmentText(take('containment')));
  const retention = take('retention') as RetentionView | undefined;
  if (retention !== undefined) add('retention', retentionText(retention, now));
  add('internal errors', internalErrorsText(take('internal_errors'), now));
  for (const notice of (take('notices') as StatusView['notices']) ?? []) pairs.push(['notice', errorText(notice)]);
  for (const [key, value] of Object.entries(status)) if (!shown.has(key)) pairs.push([key, cell(value)]);
  return keyValues(pairs);
}

function text(value: unknown): string | null {
  return value === undefined || value === null ? null : terminalText(String(value));
}

/** The skills folders in the order a skill is looked for, a missing one said so; null from a daemon that does not say. */
function skillsDirsText(dirs: unknown, missing: unknown): string | null {
  const absent = new Set(Array.isArray(missing) ? (missing as string[]) : []);
  if (!Array.isArray(dirs)) return absent.size === 0 ? null : `missing: ${[...absent].map(terminalText).join(', ')}`;
  return (dirs as string[]).map((dir) => `${terminalText(dir)}${absent.has(dir) ? ' (missing)' : ''}`).join(', ');
}

/** `0.169.0 (codex)`, or why it cannot run. */
function engineText(engine: EngineView): string {
  const command = terminalText(engine.command.join(' '));
  if (typeof engine.reason === 'string') return `cannot run: ${terminalText(engine.reason)}`;
  if (!engine.available) return `cannot run: ${command} was not found or does not start`;
  return `${terminalText(engine.version ?? 'version unknown')} (${command}); interactive jobs ${engine.interactive_profile?.kind === 'resumable' ? 'resume in a new process' : 'keep their process'}`;
}

/** `cgroup (/sys/fs/cgroup/…)`: how engine processes are held together and stopped. */
function containmentText(containment: unknown): string | null {
  if (typeof containment !== 'object' || containment === null) return null;
  const { kind, path } = containment as { kind?: unknown; path?: unknown };
  if (kind === 'cgroup') return `each engine in a cgroup of its own${typeof path === 'string' ? ` under ${terminalText(path)}` : ''}`;
  if (kind === 'process_group') return 'each engine in a process group of its own (a tool that leaves it can outlive a cancel)';
  return cell(containment);
}

/** `none`, or how many and when the last was: the log says what. */
function internalErrorsText(errors: unknown, now: number): string | null {
  if (typeof errors !== 'object' || errors === null) return null;
  const { count, last_at: lastAt } = errors as { count?: unknown; last_at?: unknown };
  if (count === 0) return 'none';
  const last = typeof lastAt === 'string' ? `, the last ${durationText(now - Date.parse(lastAt))} ago` : '';
  return `${String(count)} since the start${last} (the daemon's log says what)`;
}

/** `held (…/skilld.lock)`, or `not held: flock cannot be called here: …`: one daemon per state folder, or nothing keeps a second off. */
function stateLockText(lock: StateLockStatus): string {
  return lock.held ? `held (${terminalText(lock.path)})` : `not held: ${terminalText(lock.reason ?? '')}`;
}

/** `preferred: jobs run in a sandbox, as nobody (uid 65534), not the daemon's user`, or without one and why. */
function sandboxText(sandbox: SandboxStatus): string {
  if (sandbox.isolation !== 'sandbox' || sandbox.user == null) return `${sandbox.mode}: jobs run without a sandbox: ${terminalText(sandbox.reason ?? '')}`;
  const { name, uid, switched } = sandbox.user;
  return `${sandbox.mode}: jobs run in a sandbox, as ${terminalText(name)} (uid ${uid})${switched ? ", not the daemon's user" : ''}`;
}

/** `isolated: each job has a network of its own; allowed besides each engine's hosts: …`, or the host's network and why. */
function networkText(network: NetworkStatus): string {
  if (network.mode === 'open') return `open: jobs share the host's network: ${terminalText(network.reason ?? '')}`;
  if (network.reason !== null) return `isolated, and it cannot be made here: no job starts: ${terminalText(network.reason)}`;
  const allowed = network.allow.length === 0 ? "each engine's own hosts" : `each engine's own hosts and ${terminalText(network.allow.join(', '))}`;
  const gateways = (network.gateways ?? []).map((one) => `${one.engine} calls ${terminalText(one.upstream)} through the daemon's gateway`);
  const bridge = typeof network.bridge === 'string' ? ` (its bridge: ${terminalText(network.bridge)})` : '';
  return [`isolated: each job has a network of its own${bridge}; it reaches ${allowed}${network.skills_may_allow ? ", and what its skill allows" : ''}`, ...gateways].join('; ');
}

/** `512 (cgroup v1)`, `4 GiB (not enforced: no cgroup v1 hierarchy of memory)`, `none`. */
function limitText(name: string, limit: LimitStatus): string {
  if (limit.value === null) return 'none';
  const value = name === 'processes' ? `${limit.value} processes` : sizeText(limit.value);
  return limit.enforced ? `${value} (${terminalText(limit.by ?? '')})` : `${value} (not enforced: ${terminalText(limit.reason ?? '')})`;
}

/** The policy, then the last round: `finished jobs kept 30d, every 1h; last round 12m ago: 3 removed`. */
function retentionText(retention: RetentionView, now: number): string {
  const limits = [retention.max_age_sec === null ? null : durationText(retention.max_age_sec * 1000), retention.max_jobs === null ? null : `the newest ${retention.max_jobs}`].filter((part) => part !== null);
  const policy = limits.length === 0 ? 'every finished job kept' : `finished jobs kept ${limits.join(' and at most ')}, looked at every ${durationText(retention.interval_sec * 1000)}`;
  const last = retention.last_round;
  if (last === null) return `${policy}; no round yet`;
  const outcome = last.error === null ? `${last.removed} removed` : `failed: ${terminalText(last.error)}`;
  return `${policy}; last round ${durationText(now - Date.parse(last.at))} ago: ${outcome}`;
}
