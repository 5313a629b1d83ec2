import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { BUNDLED_SKILLS, DAEMON_BIN, NODE_MODULES, PACKAGE_ROOT } from '../clients/skill-test/paths.js';

/** The checkout, and what the demo runs from it (from demo/ and from dist/demo/ alike). */
export const ROOT = PACKAGE_ROOT;
export { BUNDLED_SKILLS, DAEMON_BIN, NODE_MODULES };
export const SKILLCTL_BIN = join(ROOT, 'dist', 'clients', 'skillctl.js');

/** The version of the installed Codex CLI package, or "?" when it cannot be read. */
export function codexVersion(): string {
  try {
    return (JSON.parse(readFileSync(join(NODE_MODULES, '@openai', 'codex', 'package.json'), 'utf8')) as { version?: string }).version ?? '?';
  } catch {
    return '?';
  }
}
