import { realpath, stat } from 'node:fs/promises';
import { isAbsolute, join, relative, sep } from 'node:path';
import { SkilldError } from '../../rpc/errors.js';
import { listTree, openWithin, placeOf, type Place } from '../../rpc/within-folder.js';
import type { RunFolder } from '../model/run-folder.js';
import { readAt, type LogJobs } from './job-logs.js';

/** The most bytes of an artifact one `jobs/artifact` call reads. */
export const ARTIFACT_CHUNK_BYTES = 256 * 1024;

export interface ArtifactParams {
  job_id: string;
  /** A file under the job's artifacts folder: relative to it, or the absolute path `jobs/result` lists. */
  path: string;
  offset?: number;
}

/** A chunk of an artifact's bytes, base64, from `offset`; `eof` once the file is read to its end. */
export interface ArtifactChunk {
  path: string;
  size: number;
  offset: number;
  data: string;
  next_offset: number;
  eof: boolean;
}

/**
 * A chunk of a file of the job's artifacts folder, read on the host that ran the job. The file is
 * opened, then checked where the kernel says it lies: a link that leads out of the folder, a
 * path that climbs out of it, a folder or a device is refused as not found, and nothing of it is
 * read.
 */
export async function readArtifact(jobs: LogJobs, p: ArtifactParams): Promise<ArtifactChunk> {
  await jobs.get(p.job_id);
  const folder = jobs.runFolder(p.job_id);
  const notFound = (reason: string): SkilldError =>
    new SkilldError('ARTIFACT_NOT_FOUND', `job ${p.job_id} has no artifact "${p.path}" (${reason})`, { details: { path: p.path, reason } });
  const path = isAbsolute(p.path) ? p.path : join(folder.artifactsDir, p.path);
  const name = relative(folder.artifactsDir, path);
  if (name === '' || name === '..' || name.startsWith(`..${sep}`) || isAbsolute(name)) throw notFound('outside');
  const { root } = await artifactsRoot(folder);
  if (root === null) throw notFound('nowhere');
  const opened = await openWithin(root, path);
  if ('refused' in opened) throw notFound(opened.refused);
  try {
    const offset = Math.min(p.offset ?? 0, opened.size);
    const bytes = await readAt(opened.file, offset, Math.min(ARTIFACT_CHUNK_BYTES, opened.size - offset));
    const next = offset + bytes.length;
    return { path: name, size: opened.size, offset, data: bytes.toString('base64'), next_offset: next, eof: next >= opened.size };
  } finally {
    await opened.file.close();
  }
}

/**
 * Where the artifacts folder really is, anchored at the run folder, which the engine does not
 * own (its artifacts folder may be a link); null when it is missing or leads out (`folder`).
 */
export async function artifactsRoot(run: RunFolder): Promise<{ root: string | null; folder: Place }> {
  const real = await realpath(run.root).catch(() => null);
  if (real === null) return { root: null, folder: 'nowhere' };
  const root = join(real, relative(run.root, run.artifactsDir));
  const folder = await placeOf(root, run.artifactsDir);
  return { root: folder === 'inside' ? root : null, folder };
}

/**
 * The files under artifacts/ as absolute paths, sorted, and the entries left out because they
 * lead outside the folder (symbolic links; the folder itself when it is one). A link that stays
 * inside is listed under its own name. Readers check again as they open (`openWithin`).
 */
export async function listArtifacts(run: RunFolder): Promise<{ files: string[]; leftOut: string[] }> {
  const { root, folder } = await artifactsRoot(run);
  if (root === null) return { files: [], leftOut: folder === 'outside' ? [run.artifactsDir] : [] };
  const files: string[] = [];
  const leftOut: string[] = [];
  for (const entry of await listTree(run.artifactsDir)) {
    const path = join(run.artifactsDir, entry);
    const place = await placeOf(root, path);
    if (place === 'outside') leftOut.push(path);
    else if (place === 'inside' && (await stat(path).catch(() => null))?.isFile()) files.push(path);
  }
  return { files, leftOut };
}
