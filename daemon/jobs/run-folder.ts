import { mkdir, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { SkillFiles } from '../skills/skill-files.js';
import { writeFileDurably } from '../store/durable-file.js';

export type LogStream = 'stdout' | 'stderr';

/** The paths of one job's run folder (SPEC §3). */
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
  attemptDir(attempt: number): string {
    return join(this.root, 'attempts', String(attempt));
  }
  logFile(attempt: number, stream: LogStream): string {
    return join(this.attemptDir(attempt), `${stream}.log`);
  }

  /** Creates the folder with a snapshot of the skill: later edits of the skill never reach this job. */
  /**
   * Creates the folder with a snapshot of the skill (its SKILL.md replaced by `skillMd`, the
   * patched one): later edits of the skill never reach this job. The request is written durably.
   */
  async create(skillFiles: SkillFiles, skillMd: string, request: unknown): Promise<void> {
    await mkdir(this.artifactsDir, { recursive: true, mode: 0o700 });
    const folders = new Set([...skillFiles.keys()].map((rel) => dirname(join(this.skillDir, rel))));
    for (const folder of [...folders].sort()) await mkdir(folder, { recursive: true });
    await Promise.all([
      ...[...skillFiles].map(([rel, bytes]) => writeFile(join(this.skillDir, rel), rel === 'SKILL.md' ? skillMd : bytes)),
      writeFileDurably(this.requestFile, `${JSON.stringify(request, null, 2)}\n`),
    ]);
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

  async readHistory<T>(): Promise<T[]> {
    return (await readJsonFile<T[]>(join(this.root, 'history.json'))) ?? [];
  }

  /** Durable before it returns: an acknowledged reply survives a crash. */
  async writeHistory(history: unknown[]): Promise<void> {
    await writeFileDurably(join(this.root, 'history.json'), `${JSON.stringify(history, null, 2)}\n`);
  }

  async writeResult(result: unknown): Promise<void> {
    await writeFileDurably(this.resultFile, `${JSON.stringify(result, null, 2)}\n`);
  }

  async readResult<T>(): Promise<T | null> {
    return readJsonFile<T>(this.resultFile);
  }

  /** Every file under artifacts/, as absolute paths, sorted. */
  async listArtifacts(): Promise<string[]> {
    const entries = await readdir(this.artifactsDir, { recursive: true }).catch(() => [] as string[]);
    const files: string[] = [];
    for (const entry of entries.sort()) {
      const path = join(this.artifactsDir, entry);
      if ((await stat(path).catch(() => null))?.isFile()) files.push(path);
    }
    return files;
  }
}

async function readJsonFile<T>(path: string): Promise<T | null> {
  const text = await readFile(path, 'utf8').catch(() => null);
  return text === null ? null : (JSON.parse(text) as T);
}
