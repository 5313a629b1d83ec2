import { mkdir } from 'node:fs/promises';
import { relative, sep } from 'node:path';
import { watch, type FSWatcher } from 'chokidar';

/** Quiet time after the last change to a skill before it is reloaded (editors save in bursts). */
export const RELOAD_SETTLE_MS = 100;

/**
 * Watches the skills directories and calls `onSkillTouched(id)` once per burst of changes under
 * `<dir>/<id>/`. The only importer of chokidar.
 */
export class SkillWatcher {
  readonly #watcher: FSWatcher;
  readonly #timers = new Map<string, NodeJS.Timeout>();
  readonly #dirs: readonly string[];
  readonly #onSkillTouched: (id: string) => void;

  private constructor(dirs: readonly string[], onSkillTouched: (id: string) => void) {
    this.#dirs = dirs;
    this.#onSkillTouched = onSkillTouched;
    this.#watcher = watch([...dirs], { ignoreInitial: true, persistent: true });
    this.#watcher.on('all', (_event, path) => this.#touched(path));
  }

  /** Creates `own` (the folder the daemon chose itself) if missing, then starts watching; resolves once the watcher is ready. */
  static async start(dirs: readonly string[], own: string | null, onSkillTouched: (id: string) => void, onError: (error: unknown) => void): Promise<SkillWatcher> {
    if (own !== null) await mkdir(own, { recursive: true }).catch(onError);
    const watcher = new SkillWatcher(dirs, onSkillTouched);
    watcher.#watcher.on('error', onError);
    await new Promise<void>((resolve) => watcher.#watcher.once('ready', () => resolve()));
    return watcher;
  }

  async close(): Promise<void> {
    for (const timer of this.#timers.values()) clearTimeout(timer);
    this.#timers.clear();
    await this.#watcher.close();
  }

  #touched(path: string): void {
    const id = this.#skillIdOf(path);
    if (id === null) return;
    clearTimeout(this.#timers.get(id));
    this.#timers.set(
      id,
      setTimeout(() => {
        this.#timers.delete(id);
        this.#onSkillTouched(id);
      }, RELOAD_SETTLE_MS),
    );
  }

  #skillIdOf(path: string): string | null {
    for (const dir of this.#dirs) {
      const rel = relative(dir, path);
      if (rel === '' || rel.startsWith('..')) continue;
      const id = rel.split(sep)[0];
      return id === undefined || id.startsWith('.') ? null : id;
    }
    return null;
  }
}
