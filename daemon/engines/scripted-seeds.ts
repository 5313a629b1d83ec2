import { closeSync, constants, lstatSync, mkdirSync, openSync, readdirSync, readFileSync, realpathSync, rmSync, statSync, writeFileSync, writeSync } from 'node:fs';
import { basename, join } from 'node:path';
import type { Logger } from '../base/logger.js';
import type { EngineName } from '../model/job.js';
import type { ShortRunner } from '../model/short-run.js';
import { findExecutable } from '../sandbox/executable.js';

/**
 * The state a test job's Codex finds made in its new home (docs/skills.md, "Where it runs").
 * Codex's first start in a home creates its SQLite databases and runs their migrations (five
 * databases, ~60 migrations, ~90 fsyncs): ~50 ms of a test's one turn, each time, since every
 * test job gets a home of its own. The daemon has Codex make them once, in a folder of its own,
 * and copies them into each test job's home before its first turn: migrated and empty, no thread
 * of anyone's in them, the job's own copy.
 *
 * They are made by the engine's own command, outside any sandbox (as its `--version` is run):
 * `codex exec resume <nil id>` with a home whose provider is an address nothing serves. Codex
 * opens its databases, finds no such session and exits; it never reaches a model, so nothing
 * runs a tool. They are made again when the command's program changes (an upgrade brings new
 * migrations), and with every daemon start. Until they are ready, and where Codex made none, a
 * test job's Codex makes its own, as before.
 */

/** The session Codex is asked to resume: none has it. */
const NIL_SESSION = '00000000-0000-0000-0000-000000000000';
/** How long Codex may take to make them. */
const SEED_TIMEOUT_MS = 15_000;
/** Codex's databases and their write-ahead logs (`state_5.sqlite`, `state_5.sqlite-wal`); the shared-memory index is rebuilt from the log. */
const DATABASE = /^[a-z][a-z_]*_\d+\.sqlite$/;
const CONFIG = [
  'model = "seed"',
  'model_provider = "seed"',
  '',
  '[model_providers.seed]',
  'name = "seed"',
  // The discard port of loopback: were Codex to call its provider after all, no model answers.
  'base_url = "http://127.0.0.1:9/v1"',
  'env_key = "SKILLD_SEED_KEY"',
  'wire_api = "responses"',
  'request_max_retries = 0',
  'stream_max_retries = 0',
  '',
  '[analytics]',
  'enabled = false',
  '',
].join('\n');

export interface ScriptedSeedsDeps {
  /** The daemon's folder for them (no job is shown it); emptied at the first making. */
  dir: string;
  /** Each engine's configured command. */
  command(engine: EngineName): readonly string[];
  /** The engine's environment with `own` in place of the configured variables (engines/info.ts). */
  envFor(engine: EngineName, own: Readonly<Record<string, string>>): Record<string, string>;
  run: ShortRunner;
  logger: Logger;
}

interface Made {
  /** The program's identity when they were made. */
  program: string;
  /** The folder they are made in. */
  home: string;
  /** The files, or null while they are being made or where Codex made none. */
  files: string[] | null;
}

export class ScriptedSeeds {
  readonly #d: ScriptedSeedsDeps;
  #made: Made | null = null;
  /** How many times they were made: each time in a folder of its own. */
  #count = 0;

  constructor(deps: ScriptedSeedsDeps) {
    this.#d = deps;
  }

  /**
   * The files to copy into a test job's new home for `engine`: Codex's made databases, or none
   * (another engine, not made yet, or its command's program changed: then they are made anew,
   * without waiting).
   */
  files(engine: EngineName): readonly string[] {
    if (engine !== 'codex') return [];
    const program = this.#programOf(engine);
    if (program === null) return [];
    if (this.#made?.program !== program) this.#make(engine, program);
    return this.#made?.files ?? [];
  }

  /** The program the command starts, as `<real path> <inode> <size> <mtime>`: another install is another program. */
  #programOf(engine: EngineName): string | null {
    const command = this.#d.command(engine);
    // Found as the run below starts it: from the daemon's own folder.
    const found = findExecutable(command[0] ?? '', this.#d.envFor(engine, {})['PATH'], process.cwd());
    if (found === null) return null;
    try {
      const real = realpathSync(found);
      const stat = statSync(real);
      return `${real} ${stat.ino} ${stat.size} ${stat.mtimeMs}`;
    } catch {
      return null;
    }
  }

  #make(engine: EngineName, program: string): void {
    const superseded = this.#made?.home ?? null;
    this.#count += 1;
    const home = join(this.#d.dir, `${engine}-${this.#count}`);
    const made: Made = { program, home, files: null };
    this.#made = made;
    const env = this.#d.envFor(engine, { HOME: home, CODEX_HOME: home, SKILLD_SEED_KEY: 'none', NO_COLOR: '1' });
    const argv = [...this.#d.command(engine), 'exec', '--skip-git-repo-check', '-C', home, 'resume', NIL_SESSION, 'seed'];
    const unmade = (details: object): void => this.#d.logger.warn({ engine, ...details }, 'the engine made no databases for test jobs to start from; each test job makes its own');
    try {
      // What an earlier start of the daemon made goes at the first making.
      if (this.#count === 1) rmSync(this.#d.dir, { recursive: true, force: true });
      mkdirSync(home, { recursive: true, mode: 0o700 });
      writeFileSync(join(home, 'config.toml'), CONFIG);
    } catch (error) {
      return unmade({ error: (error as Error).message });
    }
    void this.#d.run(argv, env, SEED_TIMEOUT_MS).then(
      (run) => {
        // A run cut off at its time limit may have left a database half made: none is taken from it.
        const files = run.timedOut ? [] : databases(home);
        if (this.#made !== made) return;
        if (files.length === 0) return unmade({ code: run.code, error: run.error, stderr: run.stderr.slice(-500) });
        made.files = files;
        // The databases of the program before it: no job is given them any more.
        if (superseded !== null) rmSync(superseded, { recursive: true, force: true });
        this.#d.logger.debug({ engine, files: files.length }, 'made the databases test jobs start from');
      },
      (error: unknown) => unmade({ error: String(error) }),
    );
  }
}

/** Codex's databases in `home`, each followed by its write-ahead log where it has one. */
function databases(home: string): string[] {
  let names: string[];
  try {
    names = readdirSync(home);
  } catch {
    return [];
  }
  const files: string[] = [];
  for (const name of names.filter((one) => DATABASE.test(one)).sort()) {
    files.push(join(home, name));
    if (names.includes(`${name}-wal`)) files.push(join(home, `${name}-wal`));
  }
  return files;
}

/**
 * Copies the made databases into `dir` (a test job's model home), each database only where the
 * home has none of that name yet: a database the engine already keeps there is never touched.
 * Its log is written before it (replacing one a copy cut short left behind, which would
 * otherwise be read into the new database), and neither write follows a link.
 */
export function copySeeds(files: readonly string[], dir: string): void {
  for (const file of files.filter((one) => !one.endsWith('-wal'))) {
    const name = basename(file);
    if (exists(join(dir, name))) continue;
    try {
      if (files.includes(`${file}-wal`)) write(join(dir, `${name}-wal`), readFileSync(`${file}-wal`), false);
      write(join(dir, name), readFileSync(file), true);
    } catch {
      // A seed gone (made anew) or a home that cannot take it: the engine makes its own.
    }
  }
}

function exists(path: string): boolean {
  try {
    lstatSync(path);
    return true;
  } catch {
    return false;
  }
}

/** Writes `bytes` at `path`, new (`exclusive`) or replacing what is there; never through a link. */
function write(path: string, bytes: Buffer, exclusive: boolean): void {
  const flags = constants.O_WRONLY | constants.O_CREAT | constants.O_NOFOLLOW | (exclusive ? constants.O_EXCL : constants.O_TRUNC);
  const fd = openSync(path, flags, 0o600);
  try {
    writeSync(fd, bytes);
  } finally {
    closeSync(fd);
  }
}
