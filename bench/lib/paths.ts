import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The package root: the nearest folder above this file that holds package.json (works from bench/ and dist/bench/). */
function findRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'package.json'))) {
    const parent = dirname(dir);
    if (parent === dir) throw new Error('cannot find the package root (package.json) above the bench folder');
    dir = parent;
  }
  return dir;
}

export const ROOT = findRoot();
export const DAEMON_BIN = join(ROOT, 'dist', 'daemon', 'bin.js');
export const FIXTURES = join(ROOT, 'test', 'fixtures');
export const TEST_SKILLS = join(FIXTURES, 'skills');
export const ENGINE_NAMES = ['codex', 'gemini', 'iflow', 'claude'] as const;
export type BenchEngine = (typeof ENGINE_NAMES)[number];

export function fakeEngine(name: BenchEngine): string {
  return join(FIXTURES, `fake-${name}.mjs`);
}

/** A compiled sibling module of this folder (dist/bench/lib/<name>.js), as a path. */
export function libModule(name: string): string {
  return fileURLToPath(new URL(`./${name}.js`, import.meta.url));
}

/** The same, as a file URL (what `node --import` takes). */
export function libModuleUrl(name: string): string {
  return new URL(`./${name}.js`, import.meta.url).href;
}
