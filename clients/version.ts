import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The package root, where package.json is: two levels above the build (dist/clients/), one above the source (clients/). */
function packageRoot(): string {
  const here = dirname(fileURLToPath(import.meta.url));
  return here.endsWith(join('dist', 'clients')) ? join(here, '..', '..') : join(here, '..');
}

/** skillctl's version: package.json's, read without the daemon. */
export function clientVersion(): string {
  return (JSON.parse(readFileSync(join(packageRoot(), 'package.json'), 'utf8')) as { version: string }).version;
}
