import { mkdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { Pending } from '../model/gate.js';
import type { Interaction } from '../model/interactions.js';
import type { Job } from '../model/job.js';
import { patchSkillMd } from '../model/prompt.js';
import { RunFolder } from '../model/run-folder.js';
import type { SkillFiles } from '../model/skill-snapshot.js';
import { appendWhole, syncFolder, writeFileDurably, writeNewFileSynced } from './durable-file.js';
import type { JobDocs, JobResult, NewJobDocs, StoredRequest } from './job-docs.js';
import type { Store } from './store.js';

/** The files store's job documents: each lives in the job's run folder (docs/state.md). */
export class FolderDocs implements JobDocs {
  readonly #store: Store;
  readonly #runsDir: string;

  constructor(store: Store, runsDir: string) {
    this.#store = store;
    this.#runsDir = runsDir;
  }

  /**
   * The run folder first, then the record that makes the job exist. A failed record removes the
   * folder; a crash in between leaves a folder no job names, never a job without its request.
   */
  async create(job: Job, docs: NewJobDocs): Promise<void> {
    const folder = this.#folder(job.job_id);
    const original = docs.skillFiles.get('SKILL.md')?.toString('utf8') ?? '';
    await createFolder(folder, docs.skillFiles, patchSkillMd(original, job.execution_mode, folder.artifactsDir), docs.request);
    await this.#store.putJob(job).catch(async (error: unknown) => {
      await removeFolder(folder);
      throw error;
    });
  }

  async request(jobId: string): Promise<StoredRequest> {
    return JSON.parse(await readFile(this.#folder(jobId).requestFile, 'utf8')) as StoredRequest;
  }

  /** Made whole when the job was created. */
  async prepare(): Promise<void> {}

  /** The latest version of the interaction history: the last complete line of `history.ndjson`. */
  async history(jobId: string): Promise<Interaction[]> {
    const text = await readFile(this.#folder(jobId).historyFile, 'utf8').catch(() => '');
    const lines = text.split('\n').filter((line) => line !== '');
    for (let i = lines.length - 1; i >= 0; i -= 1) {
      try {
        return JSON.parse(lines[i] as string) as Interaction[];
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
  async putHistory(jobId: string, history: readonly Interaction[], exists: boolean): Promise<void> {
    const folder = this.#folder(jobId);
    const created = !exists && (await stat(folder.historyFile).catch(() => null)) === null;
    // Whole or not at all: a line cut short by a full disk would hide every later version.
    await appendWhole(folder.historyFile, `${JSON.stringify(history)}\n`, true);
    if (created) await syncFolder(folder.root);
  }

  pending(jobId: string): Promise<Pending | null> {
    return readJsonFile<Pending>(this.#folder(jobId).pendingFile);
  }

  async putPending(jobId: string, pending: Pending): Promise<void> {
    await writeFileDurably(this.#folder(jobId).pendingFile, `${JSON.stringify(pending, null, 2)}\n`);
  }

  result(jobId: string): Promise<JobResult | null> {
    return readJsonFile<JobResult>(this.#folder(jobId).resultFile);
  }

  async putResult(result: JobResult): Promise<void> {
    await writeFileDurably(this.#folder(result.job_id).resultFile, `${JSON.stringify(result, null, 2)}\n`);
  }

  #folder(jobId: string): RunFolder {
    return new RunFolder(this.#runsDir, jobId);
  }
}

/**
 * Creates the folder with a snapshot of the skill (its SKILL.md replaced by `skillMd`, the
 * patched one): later edits of the skill never reach this job. The request is written durably,
 * at the same time as the snapshot.
 */
async function createFolder(folder: RunFolder, skillFiles: SkillFiles, skillMd: string, request: unknown): Promise<void> {
  const requestText = `${JSON.stringify(request, null, 2)}\n`;
  const folders = [...new Set([...skillFiles.keys()].map((rel) => dirname(join(folder.skillDir, rel))))];
  const snapshot = async (): Promise<void> => {
    await Promise.all(folders.map((path) => mkdir(path, { recursive: true })));
    await Promise.all([...skillFiles].map(([rel, bytes]) => writeFile(join(folder.skillDir, rel), rel === 'SKILL.md' ? skillMd : bytes)));
  };
  try {
    await mkdir(folder.root, { recursive: true, mode: 0o700 });
    await Promise.all([mkdir(folder.artifactsDir, { recursive: true, mode: 0o700 }), snapshot(), writeNewFileSynced(folder.requestFile, requestText)]);
    // The request's entry, and those of the snapshot and the workspace, survive a power cut.
    await syncFolder(folder.root);
  } catch (error) {
    // All or nothing: a half-made folder on a full disk is removed, and holds no space.
    await removeFolder(folder);
    throw error;
  }
}

/** Removes the whole run folder (a job whose creation failed). */
async function removeFolder(folder: RunFolder): Promise<void> {
  await rm(folder.root, { recursive: true, force: true, maxRetries: 3 }).catch(() => undefined);
}

async function readJsonFile<T>(path: string): Promise<T | null> {
  const text = await readFile(path, 'utf8').catch(() => null);
  return text === null ? null : (JSON.parse(text) as T);
}
