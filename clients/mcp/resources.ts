import { open } from 'node:fs/promises';
import { extname } from 'node:path';
import { ErrorCode, McpError, type ListResourcesResult, type ReadResourceResult, type ResourceTemplate } from '@modelcontextprotocol/sdk/types.js';
import { RpcCallError, type RpcClient } from '../../rpc/client.js';
import type { JobView, ResultView } from '../wire.js';
import { ARTIFACT_TEMPLATE, artifactName, parseUri, RESULT_TEMPLATE, resultUri } from './uris.js';

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

/** One resource: a job's `jobs/result` as JSON, or one of its artifacts, read from the file the daemon names. */
export async function readResource(client: RpcClient, uri: string): Promise<ReadResourceResult> {
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
  if (path === undefined) throw notFound(uri, `job ${target.jobId} has no artifact "${target.name}"`);
  const bytes = await readCapped(path);
  const mimeType = MIME_TYPES[extname(path).toLowerCase()];
  const text = utf8(bytes);
  const content = text === null ? { uri, blob: bytes.toString('base64') } : { uri, text };
  return { contents: [mimeType === undefined ? content : { ...content, mimeType }] };
}

/** The file, if this user may read it (under the system service the daemon's state folder is its own) and it is not too large. */
async function readCapped(path: string): Promise<Buffer> {
  const file = await open(path, 'r').catch((error: Error) => {
    throw new McpError(ErrorCode.InternalError, `cannot read the artifact ${path}: ${error.message}`);
  });
  try {
    const { size } = await file.stat();
    if (size > ARTIFACT_MAX_BYTES) throw new McpError(ErrorCode.InvalidRequest, `the artifact is ${size} bytes, more than ${ARTIFACT_MAX_BYTES} can be read here: read ${path}`);
    return await file.readFile();
  } finally {
    await file.close();
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
