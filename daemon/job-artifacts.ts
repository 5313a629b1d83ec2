import { isAbsolute, join, relative, sep } from 'node:path';
import { SkilldError } from '../rpc/errors.js';
import { openWithin } from '../rpc/within-folder.js';
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
  const { root } = await folder.artifactsRoot();
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
