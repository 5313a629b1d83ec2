// The MCP server's artifact reads against a stand-in for the daemon whose listing is older than
// the read: what lies at a listed path when it is opened decides, not what lay there when listed.
import t from 'tap';
import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readResource } from '../../clients/mcp/resources.js';
import type { ResultView } from '../../clients/wire.js';

const JOB = 'job-0mwteh4dv-c89f4eb6a9';
const temp = await mkdtemp(join(tmpdir(), 'skilld-mcp-resources-'));
t.teardown(() => rm(temp, { recursive: true, force: true }));
const secret = join(temp, 'secret.txt');
await writeFile(secret, 'SECRET\n');
const artifacts = join(temp, 'state', 'runs', JOB, 'workspace', 'artifacts');
await mkdir(artifacts, { recursive: true });

/** A daemon whose jobs/result listed `names` as artifacts of the job, whatever lies there now. */
function listing(names: string[], jobId = JOB): { request<T>(method: string, params?: unknown): Promise<T> } {
  const folder = join(temp, 'state', 'runs', jobId, 'workspace', 'artifacts');
  const view: ResultView = { job_id: jobId, status: 'succeeded', output: {}, artifacts: names.map((name) => join(folder, name)), warnings: [], error: null };
  return { request: <T>(): Promise<T> => Promise.resolve(view as T) };
}

const uri = (name: string, jobId = JOB): string => `skilld://jobs/${jobId}/artifacts/${name}`;

t.test('a listed file read as it is', async (t) => {
  await writeFile(join(artifacts, 'report.txt'), 'the report\n');
  t.same((await readResource(listing(['report.txt']), uri('report.txt'))).contents, [{ uri: uri('report.txt'), mimeType: 'text/plain', text: 'the report\n' }]);
});

t.test('a listed file replaced since by a link out of the artifacts folder is not followed', async (t) => {
  await symlink(secret, join(artifacts, 'swapped.txt'));
  await t.rejects(readResource(listing(['swapped.txt']), uri('swapped.txt')), { code: -32002, message: /"swapped\.txt" leads outside the job's artifacts folder/ });
});

t.test('a listed file below a folder replaced since by a link out of the artifacts folder is not followed', async (t) => {
  await symlink(temp, join(artifacts, 'sub'));
  await t.rejects(readResource(listing([join('sub', 'secret.txt')]), uri('sub/secret.txt')), { code: -32002, message: /leads outside/ });
});

t.test("an artifacts folder replaced since by a link to another job's artifacts folder is not followed", async (t) => {
  const theirs = join(temp, 'state', 'runs', 'job-other', 'workspace', 'artifacts');
  await mkdir(theirs, { recursive: true });
  await writeFile(join(theirs, 'theirs.txt'), "another job's file\n");
  const linking = 'job-linking';
  await mkdir(join(temp, 'state', 'runs', linking, 'workspace'), { recursive: true });
  await symlink(theirs, join(temp, 'state', 'runs', linking, 'workspace', 'artifacts'));
  await t.rejects(readResource(listing(['theirs.txt'], linking), uri('theirs.txt', linking)), { code: -32002, message: /leads outside/ });
});

t.test('a listed file replaced since by a FIFO is refused without waiting for a writer', async (t) => {
  execFileSync('mkfifo', [join(artifacts, 'pipe')]);
  await t.rejects(readResource(listing(['pipe']), uri('pipe')), { code: -32002, message: /"pipe" is not a regular file/ });
});

t.test('a listed file removed since is gone', async (t) => {
  await t.rejects(readResource(listing(['removed.txt']), uri('removed.txt')), { code: -32002, message: /"removed\.txt" is gone/ });
});
