import t from 'tap';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ERROR_CODES, SkilldError, isErrorCode } from '../../rpc/errors.js';

const readme = await readFile(join(import.meta.dirname, '..', '..', 'README.md'), 'utf8');
const rows = new Map<string, string[]>();
for (const line of readme.split('\n')) {
  const match = /^\| `([A-Z_]+)` \|(.*)\|$/.exec(line);
  if (match) rows.set(match[1] as string, (match[2] as string).split('|').map((cell) => cell.trim()));
}

t.test("README's error table lists exactly the registry's codes, with the same integer, kind and retry flag", async (t) => {
  t.same([...rows.keys()].sort(), Object.keys(ERROR_CODES).sort());
  for (const [code, info] of Object.entries(ERROR_CODES)) {
    const [rpc, kind, retry, meaning] = rows.get(code) ?? [];
    t.equal(Number(rpc), info.rpc, `${code} integer`);
    t.equal(kind, info.kind, `${code} kind`);
    t.equal(retry, info.retryable ? 'yes' : 'no', `${code} retry`);
    t.equal(meaning, info.meaning, `${code} meaning`);
  }
});

t.test('every code is upper snake case (TIMEOUT is the one single word), and application integers are unique', async (t) => {
  const seen = new Map<number, string>();
  for (const [code, info] of Object.entries(ERROR_CODES)) {
    t.match(code, /^[A-Z]+(_[A-Z]+)*$/);
    // JSON-RPC's own -326xx codes are shared by design (e.g. INVALID_REQUEST and REQUEST_TOO_LARGE).
    if (info.rpc > 0) {
      t.notOk(seen.has(info.rpc), `${code} reuses ${info.rpc} of ${seen.get(info.rpc)}`);
      seen.set(info.rpc, code);
    }
  }
});

t.test('SkilldError carries its registry code onto the wire', async (t) => {
  const error = new SkilldError('JOB_NOT_FOUND', 'no job "x"', { details: { job_id: 'x' } });
  t.same(error.toRpcError(), { code: 2001, message: 'no job "x"', data: { code: 'JOB_NOT_FOUND', details: { job_id: 'x' } } });
  t.ok(isErrorCode('QUEUE_FULL'));
  t.notOk(isErrorCode('toString'));
});
