import { sep } from 'node:path';

/** The resource URIs of a job (docs/mcp.md, "Resources"). */
export const RESULT_TEMPLATE = 'skilld://jobs/{job_id}/result';
export const ARTIFACT_TEMPLATE = 'skilld://jobs/{job_id}/artifacts/{name}';

/** What a resource URI names. */
export type JobResource = { jobId: string; kind: 'result' } | { jobId: string; kind: 'artifact'; name: string };

export function resultUri(jobId: string): string {
  return `skilld://jobs/${encodeURIComponent(jobId)}/result`;
}

/** An artifact's URI: each segment of its name encoded, its slashes kept. */
export function artifactUri(jobId: string, name: string): string {
  return `skilld://jobs/${encodeURIComponent(jobId)}/artifacts/${name.split('/').map(encodeURIComponent).join('/')}`;
}

/** An artifact's name: its path below the run's `workspace/artifacts/`, which `jobs/result` gives whole. */
export function artifactName(jobId: string, path: string): string {
  const at = path.lastIndexOf(artifactsPart(jobId));
  const name = at === -1 ? path : path.slice(at + artifactsPart(jobId).length);
  return name.split(sep).join('/');
}

/** The job's run folder, from the path of one of its artifacts as `jobs/result` gives it; null for any other path. */
export function runFolderOf(jobId: string, path: string): string | null {
  const at = path.lastIndexOf(artifactsPart(jobId));
  return at === -1 ? null : path.slice(0, at + sep.length + jobId.length);
}

function artifactsPart(jobId: string): string {
  return `${sep}${jobId}${sep}workspace${sep}artifacts${sep}`;
}

/** The job and the part of it a URI names; null for a URI that is not one of ours. */
export function parseUri(uri: string): JobResource | null {
  const match = /^skilld:\/\/jobs\/([^/]+)\/(result|artifacts\/(.+))$/.exec(uri);
  if (match === null) return null;
  try {
    const jobId = decodeURIComponent(match[1] as string);
    if (match[3] === undefined) return { jobId, kind: 'result' };
    return { jobId, kind: 'artifact', name: match[3].split('/').map(decodeURIComponent).join('/') };
  } catch {
    return null; // a malformed %-escape
  }
}
