import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { SkilldError } from '../../rpc/errors.js';
import { didYouMean } from '../../rpc/nearest.js';
import { defaultEngine } from './defaults.js';
import { SKILL_ID_PATTERN, SkillLoadError, loadSkill, type PathAccess, type SkillDefinition, type SkillErrorCode } from './manifest.js';

export interface SkillError {
  code: SkillErrorCode;
  message: string;
  path: string;
}

/** What the registry knows of one id: the last valid version (if any) and the current error. */
export interface SkillEntry {
  id: string;
  path: string;
  current: SkillDefinition | null;
  error: SkillError | null;
}

/** The wire `Skill` (docs/protocol.md, "Skill"). */
export interface SkillView {
  id: string;
  version: string | null;
  name: string;
  description: string;
  execution_modes: string[];
  engines: string[] | null;
  unsupported_engines: string[];
  effective_engines: string[];
  /** What `jobs/create` runs a job of it on when the request names no engine (defaults.ts). */
  default_engine: string | null;
  max_attempt: number | null;
  /** The inputs that name a path of the host, and how a job's sandbox shows it (runner.json). */
  input_paths: Record<string, PathAccess>;
  path: string;
  status: 'ok' | 'invalid';
  /** What runner.json says that the daemon ignores; empty when nothing. */
  warnings: string[];
  error?: SkillError;
}

/**
 * Every skill in the skills directories. The first directory holding an id wins. A reload that
 * fails keeps the last valid version and records the error, so a half-saved file never takes a
 * skill away.
 */
export class SkillRegistry {
  readonly #dirs: readonly string[];
  readonly #defaultEngine: string | null;
  readonly #entries = new Map<string, SkillEntry>();

  /** `defaultEngine`: the configured `default_engine`, shown in each skill's view as it applies to it. */
  constructor(dirs: readonly string[], defaultEngine: string | null = null) {
    this.#dirs = dirs;
    this.#defaultEngine = defaultEngine;
  }

  /** The wire view of an entry: the last valid definition, flagged invalid while an error stands. */
  view(entry: SkillEntry): SkillView {
    return view(entry, this.#defaultEngine);
  }

  get dirs(): readonly string[] {
    return this.#dirs;
  }

  async loadAll(): Promise<void> {
    const ids = new Set<string>();
    for (const dir of this.#dirs) {
      const names = await readdir(dir).catch(() => [] as string[]);
      for (const name of names) if (!name.startsWith('.')) ids.add(name);
    }
    await Promise.all([...ids].map((id) => this.reload(id)));
  }

  /** Reloads one id from disk; returns true when what clients see of it changed. */
  async reload(id: string): Promise<boolean> {
    const dir = await this.#locate(id);
    const before = this.#entries.get(id);
    if (dir === null) return this.#entries.delete(id);
    const entry: SkillEntry = { id, path: dir, current: before?.path === dir ? before.current : null, error: null };
    try {
      if (!SKILL_ID_PATTERN.test(id)) throw new SkillLoadError('SKILL_MANIFEST_INVALID', `folder name "${id}" is not a valid skill id (${SKILL_ID_PATTERN.source})`, dir);
      entry.current = await loadSkill(dir, id);
    } catch (error) {
      if (!(error instanceof SkillLoadError)) throw error;
      entry.error = { code: error.code, message: error.message, path: error.path };
    }
    this.#entries.set(id, entry);
    return before === undefined || fingerprint(before) !== fingerprint(entry);
  }

  get(id: string): SkillEntry | undefined {
    return this.#entries.get(id);
  }

  /** The skill with this id, or SKILL_NOT_FOUND naming the nearest id there is. */
  require(id: string): SkillEntry {
    const entry = this.#entries.get(id);
    if (entry === undefined) throw new SkilldError('SKILL_NOT_FOUND', `no skill "${id}"${didYouMean(id, [...this.#entries.keys()])}`);
    return entry;
  }

  list(): SkillView[] {
    return [...this.#entries.values()].sort((a, b) => a.id.localeCompare(b.id)).map((entry) => this.view(entry));
  }

  counts(): { ok: number; invalid: number } {
    let invalid = 0;
    for (const entry of this.#entries.values()) if (entry.error !== null) invalid += 1;
    return { ok: this.#entries.size - invalid, invalid };
  }

  async #locate(id: string): Promise<string | null> {
    for (const dir of this.#dirs) {
      const candidate = join(dir, id);
      if ((await stat(candidate).catch(() => null))?.isDirectory()) return candidate;
    }
    return null;
  }
}

/** What clients can observe of an entry: its view and the bytes of its last valid version. */
function fingerprint(entry: SkillEntry): string {
  const hash = createHash('sha256').update(JSON.stringify(view(entry)));
  for (const [rel, bytes] of entry.current?.files ?? []) hash.update(rel).update(bytes);
  return hash.digest('hex');
}

/** The skills folders that are not there (the daemon creates none but its own: docs/configuration.md). */
export function missingSkillsDirs(dirs: readonly string[]): string[] {
  return dirs.filter((dir) => !existsSync(dir));
}

/** The wire view of an entry (see `SkillRegistry.view`). */
export function view(entry: SkillEntry, configuredEngine: string | null = null): SkillView {
  const d = entry.current;
  const base: SkillView = {
    id: entry.id,
    version: d?.version ?? null,
    name: d?.name ?? entry.id,
    description: d?.description ?? '',
    execution_modes: d?.execution_modes ?? [],
    engines: d?.engines ?? null,
    unsupported_engines: d?.unsupported_engines ?? [],
    effective_engines: d?.effective_engines ?? [],
    default_engine: defaultEngine<string>({ engines: d?.engines ?? null, effective_engines: d?.effective_engines ?? [] }, configuredEngine),
    max_attempt: d?.max_attempt ?? null,
    input_paths: d?.input_paths ?? {},
    path: entry.path,
    status: entry.error === null ? 'ok' : 'invalid',
    warnings: d?.warnings ?? [],
  };
  return entry.error === null ? base : { ...base, error: entry.error };
}
