import type { ServerResponse } from 'node:http';
import { posix } from 'node:path';
import type { ArtifactChunk } from '../wire.js';
import type { Bridge } from './bridge.js';
import { sendJson, unavailable } from './answers.js';

/**
 * `GET /artifact?job_id=…&path=…`: a file of a job's artifacts folder as a download, read through
 * the daemon chunk by chunk (jobs/artifact), so the page needs no access to the daemon's folders.
 * A refusal (`ARTIFACT_NOT_FOUND`, `JOB_NOT_FOUND`) is the daemon's error as JSON, with 404;
 * `BUSY` and `DAEMON_UNREACHABLE` are 503, as for a call.
 */
export async function sendArtifact(bridge: Bridge, res: ServerResponse, jobId: string, path: string): Promise<void> {
  let offset = 0;
  let size = 0;
  let sent = 0;
  for (let first = true; ; first = false) {
    // Only the first chunk may be refused BUSY: once the download began, its next chunks wait their turn.
    const answer = await bridge.request('jobs/artifact', { job_id: jobId, path, offset }, first ? 'bounded' : 'always');
    if ('error' in answer) {
      const away = unavailable(answer.error);
      if (first) sendJson(res, away?.status ?? 404, answer, away?.headers);
      else res.destroy(new Error(answer.error.message)); // a download cut short is not a whole file
      return;
    }
    const chunk = answer.result as ArtifactChunk;
    if (first) {
      res.writeHead(200, {
        'Content-Type': 'application/octet-stream',
        'Content-Length': chunk.size,
        'Content-Disposition': `attachment; filename*=UTF-8''${attrValue(posix.basename(path))}`,
      });
      size = chunk.size;
    }
    // A file that grew meanwhile is sent as long as it was when the download began (its Content-Length).
    const bytes = Buffer.from(chunk.data, 'base64').subarray(0, size - sent);
    sent += bytes.length;
    const more = res.write(bytes);
    if (chunk.eof || sent >= size) break;
    if (!more) await new Promise((resolve) => res.once('drain', resolve));
    offset = chunk.next_offset;
  }
  res.end();
}

/** A file name as an RFC 8187 value: everything but letters, digits and `-_.!~` percent-encoded (UTF-8). */
function attrValue(name: string): string {
  return encodeURIComponent(name).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}
