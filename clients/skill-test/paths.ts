import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';

/** The package skilld runs from: the nearest folder above this file with a package.json (from the sources and from dist/ alike). */
export const PACKAGE_ROOT = findRoot(import.meta.dirname);
/** The daemon's program, as built. */
export const DAEMON_BIN = join(PACKAGE_ROOT, 'dist', 'daemon', 'bin.js');
/** The package's own dependencies: the engine CLIs it pins as dev dependencies, in a checkout. */
export const NODE_MODULES = join(PACKAGE_ROOT, 'node_modules');
export const BUNDLED_SKILLS = join(PACKAGE_ROOT, 'skills');

function findRoot(from: string): string {
  let dir = from;
  while (!existsSync(join(dir, 'package.json'))) {
    const up = dirname(dir);
    if (up === dir) throw new Error(`no package.json above ${from}`);
    dir = up;
  }
  return dir;
}
