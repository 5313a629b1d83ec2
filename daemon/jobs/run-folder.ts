import { mkdir, readFile, realpath, rm, stat, writeFile } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';
import { listTree, placeOf, type Place } from '../../rpc/within-folder.js';
import type { SkillFiles } from '../skills/skill-files.js';
import { appendWhole, syncFolder, writeFileDurably, writeNewFileSynced } from '../store/durable-file.js';

export type LogStream = 'stdout' | 'stderr';

/** The paths of one job's run folder (docs/state.md). */
export class RunFolder {
  readonly root: string;

  constructor(runsDir: string, jobId: string) {
    this.root = join(runsDir, jobId);
  }

  get skillDir(): string {
    return join(this.root, 'skill');
  }
  get skillMd(): string {
    return join(this.skillDir, 'SKILL.md');
  }
  get workspace(): string {
    return join(this.root, 'workspace');
  }
  get artifactsDir(): string {
    return join(this.workspace, 'artifacts');
  }
  get requestFile(): string {
    return join(this.root, 'request.json');
  }
  get resultFile(): string {
    return join(this.root, 'result.json');
  }
  get attemptsDir(): string {
    return join(this.root, 'attempts');
  }
  attemptDir(attempt: number): string {
    return join(this.attemptsDir, String(attempt));
  }
  /** Where the keeper of the job's engine process is recorded (docs/restarts.md); out of its sandbox's sight. */
  get engineDir(): string {
    return join(this.root, 'engine');
  }
  logFile(attempt: number, stream: LogStream): string {
    return join(this.attemptDir(attempt), `${stream}.log`);
  }

  /**
   * Creates the folder with a snapshot of the skill (its SKILL.md replaced by `skillMd`, the
   * patched one): later edits of the skill never reach this job. The request is written durably,
   * at the same time as the snapshot.
   */
  async create(skillFiles: SkillFiles, skillMd: string, request: unknown): Promise<void> {
    const requestText = `${JSON.stringify(request, null, 2)}\n`;
    const folders = [...new Set([...skillFiles.keys()].map((rel) => dirname(join(this.skillDir, rel))))];
    const snapshot = async (): Promise<void> => {
      await Promise.all(folders.map((folder) => mkdir(folder, { recursive: true })));
      await Promise.all([...skillFiles].map(([rel, bytes]) => writeFile(join(this.skillDir, rel), rel === 'SKILL.md' ? skillMd : bytes)));
    };
    try {
      await mkdir(this.root, { recursive: true, mode: 0o700 });
      await Promise.all([mkdir(this.artifactsDir, { recursive: true, mode: 0o700 }), snapshot(), writeNewFileSynced(this.requestFile, requestText)]);
      // The request's entry, and those of the snapshot and the workspace, survive a power cut.
      await syncFolder(this.root);
    } catch (error) {
      // All or nothing: a half-made folder on a full disk is removed, and holds no space.
      await this.remove();
      throw error;
    }
  }

  /** Removes the whole run folder (a job whose creation failed). */
  async remove(): Promise<void> {
    await rm(this.root, { recursive: true, force: true, maxRetries: 3 }).catch(() => undefined);
  }

  async readRequest<T>(): Promise<T> {
    return JSON.parse(await readFile(this.requestFile, 'utf8')) as T;
  }

  async startAttempt(attempt: number, prompt: string): Promise<void> {
    await mkdir(this.attemptDir(attempt), { recursive: true });
    await writeFile(join(this.attemptDir(attempt), 'prompt.txt'), prompt, 'utf8');
  }

  async writePending(pending: unknown): Promise<void> {
    await writeFileDurably(join(this.root, 'pending.json'), `${JSON.stringify(pending, null, 2)}\n`);
  }

  async readPending<T>(): Promise<T | null> {
    return readJsonFile<T>(join(this.root, 'pending.json'));
  }

  /** The latest version of the interaction history: the last complete line of `history.ndjson`. */
  async readHistory<T>(): Promise<T[]> {
    const text = await readFile(this.#historyFile, 'utf8').catch(() => '');
    const lines = text.split('\n').filter((line) => line !== '');
    for (let i = lines.length - 1; i >= 0; i -= 1) {
      try {
        return JSON.parse(lines[i] as string) as T[];
      } catch {
        // a torn last line from a crash: the version before it stands
      }
    }
    return [];
  }

  /**
   * Appends the new version of the history as one line, synced as it is written (O_DSYNC), so an
   * acknowledged reply survives a crash. An append costs one sync, where a replace by rename costs
   * three; the folder is synced once, when the file is created (`exists` spares the look).
   */
  async writeHistory(history: readonly unknown[], exists = false): Promise<void> {
    const created = !exists && (await stat(this.#historyFile).catch(() => null)) === null;
    // Whole or not at all: a line cut short by a full disk would hide every later version.
    await appendWhole(this.#historyFile, `${JSON.stringify(history)}\n`, true);
    if (created) await syncFolder(this.root);
  }

  get #historyFile(): string {
    return join(this.root, 'history.ndjson');
  }

  async writeResult(result: unknown): Promise<void> {
    await writeFileDurably(this.resultFile, `${JSON.stringify(result, null, 2)}\n`);
  }

  async readResult<T>(): Promise<T | null> {
    return readJsonFile<T>(this.resultFile);
  }

  /**
   * Where the artifacts folder really is, anchored at the run folder, which the engine does not
   * own (its artifacts folder may be a link); null when it is missing or leads out (`folder`).
   */
  async artifactsRoot(): Promise<{ root: string | null; folder: Place }> {
    const run = await realpath(this.root).catch(() => null);
    if (run === null) return { root: null, folder: 'nowhere' };
    const root = join(run, relative(this.root, this.artifactsDir));
    const folder = await placeOf(root, this.artifactsDir);
    return { root: folder === 'inside' ? root : null, folder };
  }

  /**
   * The files under artifacts/ as absolute paths, sorted, and the entries left out because they
   * lead outside the folder (symbolic links; the folder itself when it is one). A link that stays
   * inside is listed under its own name. Readers check again as they open (`openWithin`).
   */
  async listArtifacts(): Promise<{ files: string[]; leftOut: string[] }> {
    const { root, folder } = await this.artifactsRoot();
    if (root === null) return { files: [], leftOut: folder === 'outside' ? [this.artifactsDir] : [] };
    const files: string[] = [];
    const leftOut: string[] = [];
    for (const entry of await listTree(this.artifactsDir)) {
      const path = join(this.artifactsDir, entry);
      const place = await placeOf(root, path);
      if (place === 'outside') leftOut.push(path);
      else if (place === 'inside' && (await stat(path).catch(() => null))?.isFile()) files.push(path);
    }
    return { files, leftOut };
  }
}

async function readJsonFile<T>(path: string): Promise<T | null> {
  const text = await readFile(path, 'utf8').catch(() => null);
  return text === null ? null : (JSON.parse(text) as T);
}
