import { constants } from 'node:fs';
import { open, rename, type FileHandle } from 'node:fs/promises';
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

/**
 * Open flags of an append-only file whose writes are on disk when they return: O_DSYNC makes each
 * write carry its own fdatasync, one round trip to the I/O threads instead of two.
 */
export const SYNCED_APPEND = constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | constants.O_DSYNC;

/** Writes all of `text` at the end of a SYNCED_APPEND file; resolves once it is on disk. */
export async function appendSynced(file: FileHandle, text: string): Promise<void> {
  const bytes = Buffer.from(text, 'utf8');
  let offset = 0;
  while (offset < bytes.length) {
    const { bytesWritten } = await file.write(bytes, offset, bytes.length - offset);
    offset += bytesWritten;
  }
}
