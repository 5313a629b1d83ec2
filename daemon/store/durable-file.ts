import { open, rename } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

/**
 * Replaces `path` atomically and durably: write a temp file beside it, fsync it, rename it over
 * the target, then fsync the folder so the rename itself survives a power cut.
 */
export async function writeFileDurably(path: string, text: string): Promise<void> {
  const temp = join(dirname(path), `.${basename(path)}.${process.pid}.tmp`);
  const file = await open(temp, 'w', 0o600);
  try {
    await file.writeFile(text, 'utf8');
    await file.sync();
  } finally {
    await file.close();
  }
  await rename(temp, path);
  await syncFolder(dirname(path));
}

export async function syncFolder(path: string): Promise<void> {
  const folder = await open(path, 'r');
  try {
    await folder.sync();
  } finally {
    await folder.close();
  }
}
