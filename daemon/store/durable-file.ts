import { constants } from 'node:fs';
import { open, rename, unlink, type FileHandle } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { crashPoint } from './crash-points.js';

/**
 * Replaces `path` atomically and durably: write a temp file beside it, fsync it, rename it over
 * the target, then fsync the folder so the rename itself survives a power cut.
 */
export async function writeFileDurably(path: string, text: string): Promise<void> {
  const temp = join(dirname(path), `.${basename(path)}.${process.pid}.tmp`);
  try {
    crashPoint({ step: 'replace', path });
    const file = await open(temp, 'w', 0o600);
    try {
      await file.writeFile(text, 'utf8');
      await file.sync();
    } finally {
      await file.close();
    }
    crashPoint({ step: 'rename', path });
    await rename(temp, path);
  } catch (error) {
    // A half-written temp file on a full disk would keep the space the next try needs.
    await unlink(temp).catch(() => undefined);
    throw error;
  }
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

/** Open flags of a file written once: it must not exist yet, and its writes are synced as SYNCED_APPEND's. */
const SYNCED_NEW = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_DSYNC;

/**
 * Creates `path` with `text`, on disk when this resolves (its folder entry needs `syncFolder`
 * too). One open and one synced write, where a replace by rename takes six steps; a crash midway
 * leaves a short new file, never a changed old one, so it serves files that are written once.
 */
export async function writeNewFileSynced(path: string, text: string): Promise<void> {
  const file = await open(path, SYNCED_NEW, 0o600);
  try {
    await appendSynced(file, text);
  } finally {
    // The text is on disk once the write returns; nothing waits for the descriptor to close.
    file.close().catch(() => undefined);
  }
}

/**
 * Appends `text` to the file at `path` whole or not at all: when a write fails midway (a full
 * disk), the file is cut back to its size before, so the next append never lands after a torn
 * line. `synced` opens it O_DSYNC (on disk when this resolves). One writer per file at a time.
 */
export async function appendWhole(path: string, text: string, synced: boolean): Promise<void> {
  const file = await open(path, synced ? SYNCED_APPEND : 'a', 0o600);
  try {
    const before = (await file.stat()).size;
    await appendSynced(file, text).catch(async (error: unknown) => {
      await file.truncate(before).catch(() => undefined);
      throw error;
    });
  } finally {
    // What was written is on disk (or cut back) once the write returns; nothing waits for the close.
    file.close().catch(() => undefined);
  }
}

/** Writes all of `text` at the file's position (its end, for SYNCED_APPEND); resolves once it is on disk. */
export async function appendSynced(file: FileHandle, text: string): Promise<void> {
  const bytes = Buffer.from(text, 'utf8');
  let offset = 0;
  while (offset < bytes.length) {
    const { bytesWritten } = await file.write(bytes, offset, bytes.length - offset);
    offset += bytesWritten;
  }
}
