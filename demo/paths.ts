import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

/** The checkout: the nearest folder above this file with a package.json (from demo/ and from dist/demo/ alike). */
export const ROOT = findRoot(import.meta.dirname);
export const DAEMON_BIN = join(ROOT, 'dist', 'daemon', 'bin.js');
export const SKILLCTL_BIN = join(ROOT, 'dist', 'clients', 'skillctl.js');
export const BUNDLED_SKILLS = join(ROOT, 'skills');
export const NODE_MODULES = join(ROOT, 'node_modules');

function findRoot(from: string): string {
  let dir = from;
  while (!existsSync(join(dir, 'package.json'))) {
    const up = dirname(dir);
    if (up === dir) throw new Error(`no package.json above ${from}`);
    dir = up;
  }
  return dir;
}

/** The version of the installed Codex CLI package, or "?" when it cannot be read. */
export function codexVersion(): string {
  try {
    return (JSON.parse(readFileSync(join(NODE_MODULES, '@openai', 'codex', 'package.json'), 'utf8')) as { version?: string }).version ?? '?';
  } catch {
    return '?';
  }
}
