import { join } from 'node:path';

export type LogStream = 'stdout' | 'stderr';

/**
 * The paths of one job's run folder on this host (docs/state.md): where its skill snapshot,
 * workspace, attempts and documents lie. Paths only: each floor reads and writes its own part
 * (the files store its documents, the jobs their attempts and artifacts).
 */
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
  get pendingFile(): string {
    return join(this.root, 'pending.json');
  }
  /** The versions of the interaction history, one line each, the latest last. */
  get historyFile(): string {
    return join(this.root, 'history.ndjson');
  }
  get attemptsDir(): string {
    return join(this.root, 'attempts');
  }
  attemptDir(attempt: number): string {
    return join(this.attemptsDir, String(attempt));
  }
  /** A test job's engine home, pointed at its scripted model (engines/scripted-homes.ts). */
  get modelHome(): string {
    return join(this.root, 'model-home');
  }
  /** Where the keeper of the job's engine process is recorded (docs/restarts.md); out of its sandbox's sight. */
  get engineDir(): string {
    return join(this.root, 'engine');
  }
  logFile(attempt: number, stream: LogStream): string {
    return join(this.attemptDir(attempt), `${stream}.log`);
  }
}
