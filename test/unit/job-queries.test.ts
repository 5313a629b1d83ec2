import t from 'tap';
import { JobQueries } from '../../daemon/jobs/queries.js';
import type { JobDocs, StoredRequest } from '../../daemon/store/job-docs.js';
import type { Store } from '../../daemon/store/store.js';

/** Documents whose requests are counted as they are read; a job without one has no file. */
function countingDocs(requests: Map<string, StoredRequest>): { docs: JobDocs; reads: string[] } {
  const reads: string[] = [];
  const docs = {
    request: (jobId: string): Promise<StoredRequest> => {
      reads.push(jobId);
      const request = requests.get(jobId);
      if (request !== undefined) return Promise.resolve(request);
      return Promise.reject(Object.assign(new Error(`ENOENT: no request of ${jobId}`), { code: 'ENOENT' }));
    },
  } as unknown as JobDocs;
  return { docs, reads };
}

const everyJobExists = { hasJob: () => Promise.resolve(true) } as unknown as Store;

t.test('jobs/get reads a job’s request once, then from memory; a missing one is looked for again', async (t) => {
  const requests = new Map<string, StoredRequest>([['a', { input: { text: 'hi' }, parameter: { tone: 'dry' }, model: null }]]);
  const { docs, reads } = countingDocs(requests);
  const queries = new JobQueries(everyJobExists, docs, '/nonexistent');

  t.same(await queries.asked('a'), { input: { text: 'hi' }, parameter: { tone: 'dry' } });
  t.same(await queries.asked('a'), { input: { text: 'hi' }, parameter: { tone: 'dry' } });
  t.same(reads, ['a'], 'the second call did not read the stored request');

  t.same(await queries.asked('b'), { input: null, parameter: null }, 'a job without a stored request is shown with a null input');
  requests.set('b', { input: { late: true }, parameter: {}, model: null });
  t.same(await queries.asked('b'), { input: { late: true }, parameter: {} }, 'a request stored later is shown');
  t.same(reads, ['a', 'b', 'b']);
});

t.test('a request larger than the memory kept for them is read each time, and evicts nothing it cannot replace', async (t) => {
  const huge: StoredRequest = { input: { text: 'x'.repeat(9 * 1024 * 1024) }, parameter: {}, model: null };
  const { docs, reads } = countingDocs(new Map<string, StoredRequest>([['big', huge], ['small', { input: { n: 1 }, parameter: {}, model: null }]]));
  const queries = new JobQueries(everyJobExists, docs, '/nonexistent');
  await queries.asked('small');
  await queries.asked('big');
  await queries.asked('big');
  await queries.asked('small');
  t.same(reads, ['small', 'big', 'big'], 'the large one is never kept; the small one stays');
});

t.test('a store that cannot be read still fails the call', async (t) => {
  const docs = { request: () => Promise.reject(Object.assign(new Error('EIO: i/o error'), { code: 'EIO' })) } as unknown as JobDocs;
  const queries = new JobQueries(everyJobExists, docs, '/nonexistent');
  await t.rejects(queries.asked('a'), { code: 'EIO' });
});
