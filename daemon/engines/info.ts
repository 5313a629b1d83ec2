import type { EngineConfig } from '../base/config.js';
import type { EngineName, InteractiveProfile } from '../model/job.js';
import { runShort } from '../process/run-short.js';
import { ENGINES } from './registry.js';

export const VERSION_TIMEOUT_MS = 5000;

export interface EngineInfo {
  name: EngineName;
  command: string[];
  available: boolean;
  version: string | null;
  /** Why no job of it can run here, or null: its command does not start, or the daemon refuses its jobs. */
  reason: string | null;
  interactive_profile: InteractiveProfile;
}

type Probed = { available: boolean; version: string | null; error: string | null };

/** `<command> --version`, cached per engine command line and environment (unless it ran out of time). */
export class EngineCatalog {
  readonly #configs: Readonly<Record<EngineName, EngineConfig>>;
  readonly #baseEnv: Readonly<Record<string, string>>;
  readonly #versions = new Map<string, Promise<Probed>>();

  constructor(configs: Readonly<Record<EngineName, EngineConfig>>, baseEnv: Readonly<Record<string, string>>) {
    this.#configs = configs;
    this.#baseEnv = baseEnv;
  }

  /**
   * The engine's environment: the daemon's, then what the engine (and its live protocol, for
   * `live`) needs, then the configured one, or `own` in its place (a test job's scripted home:
   * the configured variables, keys among them, are not for a scripted model).
   */
  envFor(name: EngineName, live = false, own?: Readonly<Record<string, string>>): Record<string, string> {
    return { ...this.#baseEnv, ...ENGINES[name].env, ...(live ? ENGINES[name].live?.env : {}), ...(own ?? this.#configs[name].env) };
  }

  /** Every engine; `refused` says why the daemon would refuse a new job of one whose command starts (null: it would not). */
  async list(profileOf: (name: EngineName) => Promise<InteractiveProfile>, refused: (name: EngineName) => string | null = () => null): Promise<EngineInfo[]> {
    const names = Object.keys(ENGINES) as EngineName[];
    return Promise.all(
      names.map(async (name) => {
        const { available, version, error } = await this.#version(name);
        const reason = available ? refused(name) : `${this.#configs[name].command.join(' ')} --version did not start: ${error ?? 'unknown error'}`;
        return { name, command: this.#configs[name].command, available, version, reason, interactive_profile: await profileOf(name) };
      }),
    );
  }

  /** The engines whose command can be started here (a shared store's claimer takes only their jobs). */
  async available(): Promise<EngineName[]> {
    const names = Object.keys(ENGINES) as EngineName[];
    const found = await Promise.all(names.map(async (name) => ((await this.#version(name)).available ? name : null)));
    return found.filter((name) => name !== null);
  }

  #version(name: EngineName): Promise<Probed> {
    const command = this.#configs[name].command;
    const key = JSON.stringify([command, this.envFor(name)]);
    let cached = this.#versions.get(key);
    if (cached === undefined) {
      cached = runShort([...command, '--version'], this.envFor(name), VERSION_TIMEOUT_MS).then((run) => {
        // Out of time is not an answer (a busy machine): the next call asks again.
        if (run.timedOut) this.#versions.delete(key);
        // execa's message names the command, then the system's reason (`spawn … ENOENT`): its last line is that reason.
        return { available: run.error === null, version: run.ok ? (run.stdout.trim().split('\n')[0] ?? '').trim() || null : null, error: run.error?.split('\n').at(-1) ?? null };
      });
      this.#versions.set(key, cached);
    }
    return cached;
  }
}
