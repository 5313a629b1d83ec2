import { spawn } from 'node:child_process';
import { constants } from 'node:fs';
import { mkdtemp, open, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { isAbsolute, join } from 'node:path';

/**
 * How long the file that opens the page is kept, unless the page stops first: the browser reads
 * it as it starts, which may take a cold browser some seconds. The token in it is worth nothing
 * once the page stops.
 */
export const OPEN_FILE_KEEP_MS = 60_000;

/** A file that sends a browser on to the page's address, readable by this user only. */
export interface OpenFile {
  readonly path: string;
  /** Removes the file and its folder (again: nothing). */
  remove(): Promise<void>;
}

/** Where the file's folder is made: $XDG_RUNTIME_DIR (the user's own), else the system's temp folder. */
export function openFileBase(env: NodeJS.ProcessEnv = process.env): string {
  const runtime = env['XDG_RUNTIME_DIR'];
  return runtime !== undefined && isAbsolute(runtime) ? runtime : tmpdir();
}

/**
 * Writes a page that sends the browser on to `url` (the address with its token), so that the
 * browser is started with the file's path and the token is on no command line, which every local
 * user can read in `ps` (as Jupyter does with its `jpserver-*-open.html`). The folder is new, of a
 * random name and mode 0700 (`mkdtemp`, which never follows a link); the file is created in it
 * with mode 0600, and refused if anything is there already or is a link.
 */
export async function writeOpenFile(url: string, base = openFileBase()): Promise<OpenFile> {
  const folder = await mkdtemp(join(base, 'skillctl-web-'));
  const path = join(folder, 'open.html');
  const remove = (): Promise<void> => rm(folder, { recursive: true, force: true });
  try {
    const file = await open(path, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600);
    try {
      await file.writeFile(redirectPage(url));
    } finally {
      await file.close();
    }
  } catch (error) {
    await remove();
    throw error;
  }
  return { path, remove };
}

/** The page: a refresh to `url` at once, the same by script, and a link for a browser that does neither. */
export function redirectPage(url: string): string {
  const attr = htmlText(url);
  // A `</script>` in the address could end the script early: `<` is written as its escape.
  const script = JSON.stringify(url).replace(/</g, '\\u003c');
  return [
    '<!doctype html>',
    '<html lang="en">',
    '<head>',
    '<meta charset="utf-8">',
    `<meta http-equiv="refresh" content="0;url=${attr}">`,
    '<title>skilld</title>',
    '</head>',
    '<body>',
    `<p><a href="${attr}">Open the skilld page</a></p>`,
    `<script>location.replace(${script});</script>`,
    '</body>',
    '</html>',
    '',
  ].join('\n');
}

function htmlText(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/**
 * Opens the page in a browser with `xdg-open`, by way of an open file (`writeOpenFile`) that is
 * removed after OPEN_FILE_KEEP_MS or by the function returned, whichever comes first. What goes
 * wrong is said through `warn`; the page is served all the same.
 */
export async function openInBrowser(url: string, warn: (text: string) => void): Promise<() => Promise<void>> {
  let file: OpenFile;
  try {
    file = await writeOpenFile(url);
  } catch (error) {
    warn(`skillctl: cannot open a browser: cannot write the file that opens the page: ${(error as Error).message}`);
    return () => Promise.resolve();
  }
  const timer = setTimeout(() => void file.remove().catch(() => undefined), OPEN_FILE_KEEP_MS).unref();
  const remove = async (): Promise<void> => {
    clearTimeout(timer);
    await file.remove();
  };
  spawn('xdg-open', [file.path], { stdio: 'ignore', detached: true })
    .on('error', (error) => {
      void remove().catch(() => undefined).then(() => warn(`skillctl: cannot open a browser: ${error.message}`));
    })
    .unref();
  return remove;
}
