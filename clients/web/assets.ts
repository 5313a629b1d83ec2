import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import { extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** One file the page is made of, held in memory (they are small: about 80 KB in all). */
export interface Asset {
  type: string;
  body: Buffer;
}

/** The page's files by their URL path, and the hashes of the inline scripts the page may run. */
export interface PageAssets {
  files: ReadonlyMap<string, Asset>;
  scriptHashes: readonly string[];
}

const TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
};

/**
 * The libraries the page imports, by the names it imports them by: served from the installed
 * packages, so the page works offline and needs no build step of the user's.
 */
const VENDOR: Record<string, string> = {
  preact: 'preact.mjs',
  'preact/hooks': 'preact-hooks.mjs',
  htm: 'htm.mjs',
  'htm/preact': 'htm-preact.mjs',
};

/**
 * Modules of skillctl's own that the page imports (as `../../<name>` from `page/`, which a browser
 * resolves to `/<name>`: a path cannot climb above the root): pure functions the two clients share,
 * so that both show a text the same way. Read from the compiled clients' folder, two above `page/`.
 */
const SHARED = ['terminal-text.js'];

/** The folder of the page's compiled scripts and styles, beside this module. */
export const PAGE_DIR = join(import.meta.dirname, 'page');

/** Reads the page's files once: its scripts and styles, the libraries, and the HTML that loads them. */
export async function loadAssets(pageDir = PAGE_DIR): Promise<PageAssets> {
  const files = new Map<string, Asset>();
  for (const name of await readdir(pageDir)) {
    const type = TYPES[extname(name)];
    if (type !== undefined) files.set(`/page/${name}`, { type, body: await readFile(join(pageDir, name)) });
  }
  for (const name of SHARED) files.set(`/${name}`, { type: TYPES['.js'] as string, body: await readFile(join(pageDir, '..', '..', name)) });
  const imports: Record<string, string> = {};
  for (const [specifier, name] of Object.entries(VENDOR)) {
    files.set(`/vendor/${name}`, { type: TYPES['.mjs'] as string, body: await readFile(fileURLToPath(import.meta.resolve(specifier))) });
    imports[specifier] = `/vendor/${name}`;
  }
  const importMap = JSON.stringify({ imports });
  files.set('/', { type: 'text/html; charset=utf-8', body: Buffer.from(indexHtml(importMap)) });
  return { files, scriptHashes: [createHash('sha256').update(importMap).digest('base64')] };
}

function indexHtml(importMap: string): string {
  return [
    '<!doctype html>',
    '<html lang="en">',
    '<head>',
    '<meta charset="utf-8">',
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    '<title>skilld</title>',
    '<link rel="icon" href="/page/icon.svg">',
    '<link rel="stylesheet" href="/page/style.css">',
    `<script type="importmap">${importMap}</script>`,
    '<script type="module" src="/page/main.js"></script>',
    '</head>',
    '<body>',
    '<div id="app"><p class="loading">Loading…</p></div>',
    '<noscript>This page needs JavaScript.</noscript>',
    '</body>',
    '</html>',
    '',
  ].join('\n');
}
