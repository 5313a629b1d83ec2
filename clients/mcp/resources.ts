import { realpath } from 'node:fs/promises';
import { extname, join } from 'node:path';
import { ErrorCode, McpError, type ListResourcesResult, type ReadResourceResult, type ResourceTemplate } from '@modelcontextprotocol/sdk/types.js';
import { RpcCallError, type RpcClient } from '../../rpc/client.js';
import { openWithin, type Opened } from '../../rpc/within-folder.js';
import type { JobView, ResultView } from '../wire.js';
import { ARTIFACT_TEMPLATE, artifactName, parseUri, RESULT_TEMPLATE, resultUri, runFolderOf } from './uris.js';

/** MCP's code for a resource that does not exist (the spec's suggestion; the SDK names none). */
const RESOURCE_NOT_FOUND = -32002;
/** The daemon's own cap on one answer; an artifact larger than this is read from its file instead. */
const ARTIFACT_MAX_BYTES = 8 * 1024 * 1024;
/** Result resources listed per page: the newest jobs first, as `jobs/list` pages them. */
const LIST_PAGE = 50;

const MIME_TYPES: Readonly<Record<string, string>> = {
  '.json': 'application/json',
  '.md': 'text/markdown',
  '.txt': 'text/plain',
  '.html': 'text/html',
  '.csv': 'text/csv',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.pdf': 'application/pdf',
};

export const RESOURCE_TEMPLATES: readonly ResourceTemplate[] = [
  { uriTemplate: RESULT_TEMPLATE, name: 'job-result', title: "A skilld job's result", description: 'jobs/result of the job: status, output, artifacts, warnings, error.', mimeType: 'application/json' },
  { uriTemplate: ARTIFACT_TEMPLATE, name: 'job-artifact', title: "A file a skilld job left in its artifacts folder", description: "name is the file's path below the artifacts folder, as jobs/result lists it." },
];

/** The result resources of the newest jobs, a page at a time (the cursor is `jobs/list`'s `next`). */
export async function listResources(client: RpcClient, cursor: string | undefined): Promise<ListResourcesResult> {
  const page = await client.request<{ jobs: JobView[]; next: string | null }>('jobs/list', { limit: LIST_PAGE, ...(cursor === undefined ? {} : { before: cursor }) });
  const resources = page.jobs.map((job) => ({
    uri: resultUri(job.job_id),
    name: `${job.job_id}/result`,
    title: `${job.skill_id}: ${job.status}`,
    mimeType: 'application/json',
  }));
  return page.next === null ? { resources } : { resources, nextCursor: page.next };
}

/** Why an artifact `jobs/result` listed is not read now. */
const REFUSED: Readonly<Record<Extract<Opened, { refused: unknown }>['refused'], string>> = {
  outside: "leads outside the job's artifacts folder",
  nowhere: 'is gone',
  not_a_file: 'is not a regular file',
};

/**
 * One resource: a job's `jobs/result` as JSON, or one of its artifacts, read from the file the
 * daemon names, under the same rule as the daemon's listing: nothing outside the artifacts folder.
 */
export async function readResource(client: Pick<RpcClient, 'request'>, uri: string): Promise<ReadResourceResult> {
  const target = parseUri(uri);
  if (target === null) throw notFound(uri, 'not a skilld resource URI');
  let result: ResultView;
  try {
    result = await client.request<ResultView>('jobs/result', { job_id: target.jobId });
  } catch (error) {
    if (error instanceof RpcCallError && error.dataCode === 'JOB_NOT_FOUND') throw notFound(uri, error.message);
    throw error;
  }
  if (target.kind === 'result') return { contents: [{ uri, mimeType: 'application/json', text: JSON.stringify(result) }] };
  const path = result.artifacts.find((candidate) => artifactName(target.jobId, candidate) === target.name);
  const run = path === undefined ? null : runFolderOf(target.jobId, path);
  if (path === undefined || run === null) throw notFound(uri, `job ${target.jobId} has no artifact "${target.name}"`);
  const bytes = await readCapped(run, path, uri, target.name);
  const mimeType = MIME_TYPES[extname(path).toLowerCase()];
  const text = utf8(bytes);
  const content = text === null ? { uri, blob: bytes.toString('base64') } : { uri, text };
  return { contents: [mimeType === undefined ? content : { ...content, mimeType }] };
}

/**
 * The file, if this user may read it (under the system service the daemon's state folder is its
 * own), it is not too large, and it lies in the artifacts folder when it is opened: the listing
 * is older than the read, and a link planted since must not be followed.
 */
async function readCapped(run: string, path: string, uri: string, name: string): Promise<Buffer> {
  const opened = await realpath(run)
    // Anchored at the run folder, as the daemon's listing is: the engine may make its artifacts folder a link.
    .then((real) => openWithin(join(real, 'workspace', 'artifacts'), path))
    .catch((error: Error) => {
      throw new McpError(ErrorCode.InternalError, `cannot read the artifact ${path}: ${error.message}`);
    });
  if ('refused' in opened) throw notFound(uri, `the artifact "${name}" ${REFUSED[opened.refused]}`);
  try {
    if (opened.size > ARTIFACT_MAX_BYTES) throw new McpError(ErrorCode.InvalidRequest, `the artifact is ${opened.size} bytes, more than ${ARTIFACT_MAX_BYTES} can be read here: read ${path}`);
    return await opened.file.readFile();
  } finally {
    await opened.file.close();
  }
}

/** The bytes as text when they are valid UTF-8, else null (sent as base64). */
function utf8(bytes: Buffer): string | null {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return null;
  }
}

function notFound(uri: string, why: string): McpError {
  return new McpError(RESOURCE_NOT_FOUND, `Resource not found: ${why}`, { uri });
}
