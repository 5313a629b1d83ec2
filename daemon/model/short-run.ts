/** What a short command (`--help`, `--version`, a probe) did. */
export interface ShortRun {
  ok: boolean;
  /** It ran out of time (and was killed): a busy machine as much as a broken command. */
  timedOut: boolean;
  code: number | null;
  stdout: string;
  stderr: string;
  error: string | null;
}

/** Runs a short command with only the environment given and kills it at the time limit; `fds` are handed to it as descriptors 3, 4, … (process/run-short.ts is the real one). */
export type ShortRunner = (argv: readonly string[], env: Readonly<Record<string, string>>, timeoutMs: number, fds?: readonly number[]) => Promise<ShortRun>;
