import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { BenchReporter } from './report.js';

/** What every benchmark gets: the mode, where to put its files, and where to report. */
export interface BenchContext {
  quick: boolean;
  /** A fresh folder under the run's temp root (removed at the end of the run). */
  tempDir(name: string): Promise<string>;
  report: BenchReporter;
}

export interface Benchmark {
  id: string;
  title: string;
  run(ctx: BenchContext): Promise<void>;
}

export function tempDirFactory(root: string): (name: string) => Promise<string> {
  return async (name) => {
    const dir = join(root, name);
    await mkdir(dir, { recursive: true });
    return dir;
  };
}
