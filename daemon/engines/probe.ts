import type { EngineConfig } from '../base/config.js';
import type { EngineName, InteractiveProfile } from '../model/job.js';
import type { ShortRunner } from '../model/short-run.js';
import { ENGINES } from './registry.js';

export const PROBE_TIMEOUT_MS = 5000;

/**
 * The resume-capability probe (PR-1, PR-2): `<command> --help` must mention the engine's resume
 * hint and the engine's resume help must exit 0. Pass → resumable; else sticky_process. Results
 * are cached per command line and environment, so a changed engine config is probed afresh; one
 * that ran out of time is not kept.
 */
export class ProfileProbe {
  readonly #configs: Readonly<Record<EngineName, EngineConfig>>;
  readonly #envFor: (name: EngineName) => Record<string, string>;
  readonly #run: ShortRunner;
  readonly #cache = new Map<string, Promise<InteractiveProfile>>();

  constructor(configs: Readonly<Record<EngineName, EngineConfig>>, envFor: (name: EngineName) => Record<string, string>, run: ShortRunner) {
    this.#configs = configs;
    this.#envFor = envFor;
    this.#run = run;
  }

  profileFor(name: EngineName): Promise<InteractiveProfile> {
    const config = this.#configs[name];
    if (config.profile !== 'probe') return Promise.resolve({ kind: config.profile, reason: `forced by config engines.${name}.profile` });
    const key = JSON.stringify([config.command, this.#envFor(name)]);
    let cached = this.#cache.get(key);
    if (cached === undefined) {
      const probing = this.#probe(name, config.command);
      cached = probing.then(({ profile }) => profile);
      this.#cache.set(key, cached);
      // A probe that ran out of time (or broke) says nothing lasting about the engine: the next job probes again.
      const forget = (): boolean => this.#cache.delete(key);
      void probing.then(({ timedOut }) => timedOut && forget(), forget);
    }
    return cached;
  }

  async #probe(name: EngineName, command: readonly string[]): Promise<{ profile: InteractiveProfile; timedOut: boolean }> {
    const { helpHint, resumeCheckArgs } = ENGINES[name].probe;
    const env = this.#envFor(name);
    const help = await this.#run([...command, '--help'], env, PROBE_TIMEOUT_MS);
    const shown = `${command.join(' ')} --help`;
    if (help.error !== null) return sticky(`${shown} failed: ${help.error}`, help.timedOut);
    if (!`${help.stdout}\n${help.stderr}`.includes(helpHint)) return sticky(`${shown} does not mention "${helpHint}"`);
    const check = await this.#run([...command, ...resumeCheckArgs], env, PROBE_TIMEOUT_MS);
    const checkShown = `${command.join(' ')} ${resumeCheckArgs.join(' ')}`;
    if (!check.ok) return sticky(`${checkShown} ${check.error ?? `exited with code ${String(check.code)}`}`, check.timedOut);
    return { profile: { kind: 'resumable', reason: `${shown} mentions "${helpHint}" and ${checkShown} exits 0` }, timedOut: false };
  }
}

function sticky(reason: string, timedOut = false): { profile: InteractiveProfile; timedOut: boolean } {
  return { profile: { kind: 'sticky_process', reason: `resume probe failed: ${reason}` }, timedOut };
}
