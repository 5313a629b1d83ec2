import t from 'tap';
import { MAX_ANSWER_BYTES } from '../../rpc/answer.js';
import { Dispatcher, MAX_BATCH_REQUESTS, MAX_PARAMS_DEPTH, type MethodHandler } from '../../rpc/dispatcher.js';
import { jsonProblem } from '../../rpc/json-problem.js';
import { ERROR_CODES, SkilldError } from '../../rpc/errors.js';
import { METHOD_PARAMS, bindMethods, type MethodName } from '../../rpc/methods.js';

type Ctx = { conn: string };
/** The answer line, parsed: what a client reads. */
type Answer = unknown;

/** Every documented method echoes its name, params and context; jobs/get knows one job. */
function impl(): Record<MethodName, MethodHandler<Ctx>> {
  const methods = {} as Record<MethodName, MethodHandler<Ctx>>;
  for (const name of Object.keys(METHOD_PARAMS) as MethodName[]) methods[name] = (params, ctx) => ({ method: name, params, conn: ctx.conn });
  methods['daemon/ping'] = () => ({ ok: true, version: '0.1.0' });
  methods['jobs/get'] = (params) => {
    const id = (params as { job_id: string }).job_id;
    if (id !== 'job-1') throw new SkilldError('JOB_NOT_FOUND', `no job "${id}"`, { details: { job_id: id } });
    return { job_id: id, status: 'running' };
  };
  return methods;
}

interface Harness {
  dispatcher: Dispatcher<Ctx>;
  internal: Array<{ method: string; error: unknown }>;
  send(message: unknown): Promise<Answer>;
}

let counted = 0;

function harness(): Harness {
  const internal: Array<{ method: string; error: unknown }> = [];
  const dispatcher = new Dispatcher<Ctx>(
    {
      ...bindMethods(impl()),
      'test/throw': () => {
        throw new TypeError('secret internal detail');
      },
      'test/reject': async () => Promise.reject(new Error('async failure')),
      'test/skilld': async () => {
        throw new SkilldError('QUEUE_FULL', 'the queue is full', { details: { max_queue: 2 } });
      },
      'test/bytes': (params) => 'x'.repeat((params as { n: number }).n),
      'test/count': () => {
        counted += 1;
        return counted;
      },
    },
    (method, error) => internal.push({ method, error }),
  );
  return {
    dispatcher,
    internal,
    send: async (message) => {
      const line = await dispatcher.handleLine(typeof message === 'string' ? message : JSON.stringify(message), { conn: 'c1' });
      return line === null ? null : (JSON.parse(line) as unknown);
    },
  };
}

// json-rpc-2.0 reports every thrown error on console.warn; keep the test output readable and
// remember what was reported.
const warned: unknown[][] = [];
const originalWarn = console.warn;
console.warn = (...args: unknown[]) => {
  warned.push(args);
};
t.teardown(() => {
  console.warn = originalWarn;
});

function req(id: number | string, method: string, params?: unknown): Record<string, unknown> {
  return params === undefined ? { jsonrpc: '2.0', id, method } : { jsonrpc: '2.0', id, method, params };
}

t.test('a request gets its result with the same id', async (t) => {
  const h = harness();
  t.same(await h.send(req(1, 'daemon/ping')), { jsonrpc: '2.0', id: 1, result: { ok: true, version: '0.1.0' } });
  t.same(await h.send(req('abc', 'daemon/ping')), { jsonrpc: '2.0', id: 'abc', result: { ok: true, version: '0.1.0' } }, 'string ids too');
});

t.test('params are passed validated, missing params count as {}, and the context is passed', async (t) => {
  const h = harness();
  t.same(await h.send(req(1, 'skills/list')), { jsonrpc: '2.0', id: 1, result: { method: 'skills/list', params: {}, conn: 'c1' } });
  t.same(await h.send(req(2, 'jobs/list', { status: 'failed', limit: 10 })), {
    jsonrpc: '2.0',
    id: 2,
    result: { method: 'jobs/list', params: { status: 'failed', limit: 10 }, conn: 'c1' },
  });
});

t.test('-32700 PARSE_ERROR for a line that is not JSON', async (t) => {
  const h = harness();
  for (const line of ['{"jsonrpc": "2.0", "id": 1, "method": "daemon/ping"', 'hello', '{bad json}', '']) {
    const answer = await h.send(line);
    t.same(answer, { jsonrpc: '2.0', id: null, error: { code: -32700, message: 'parse error: the line is not valid JSON', data: { code: 'PARSE_ERROR' } } }, JSON.stringify(line));
  }
});

t.test('-32600 INVALID_REQUEST: not an object, wrong jsonrpc, empty batch, bad members', async (t) => {
  const h = harness();
  const cases: Array<[string, string | number | null, RegExp]> = [
    ['1', null, /not an object/],
    ['"daemon/ping"', null, /not an object/],
    ['null', null, /not an object/],
    ['true', null, /not an object/],
    ['{"jsonrpc": "1.0", "id": 5, "method": "daemon/ping"}', 5, /jsonrpc must be "2.0"/],
    ['{"id": 6, "method": "daemon/ping"}', 6, /jsonrpc must be "2.0"/],
    ['{"jsonrpc": 2.0, "id": 7, "method": "daemon/ping"}', 7, /jsonrpc must be "2.0"/],
    ['{"jsonrpc": "2.0", "id": 8}', 8, /method must be a string/],
    ['{"jsonrpc": "2.0", "id": 9, "method": 42}', 9, /method must be a string/],
    ['{"jsonrpc": "2.0", "id": {"x": 1}, "method": "daemon/ping"}', null, /id must be/],
    ['{"jsonrpc": "2.0", "id": 10, "method": "daemon/ping", "params": "x"}', 10, /params must be an object or array/],
    ['{"jsonrpc": "2.0", "id": 11, "method": "daemon/ping", "params": null}', 11, /params must be/],
    ['[]', null, /empty batch/],
  ];
  for (const [line, id, pattern] of cases) {
    const answer = (await h.send(line)) as { id: unknown; error: { code: number; message: string; data: { code: string } } } | null;
    t.equal(answer?.id, id, `${line}: id`);
    t.equal(answer?.error.code, -32600, `${line}: code`);
    t.equal(answer?.error.data.code, 'INVALID_REQUEST', `${line}: data.code`);
    t.match(answer?.error.message, pattern, `${line}: message`);
  }
  t.same(h.internal, [], 'malformed input is not an internal error');
});

t.test('-32601 METHOD_NOT_FOUND names the method', async (t) => {
  const h = harness();
  t.same(await h.send(req(3, 'jobs/frobnicate')), {
    jsonrpc: '2.0',
    id: 3,
    error: { code: -32601, message: 'method not found: jobs/frobnicate', data: { code: 'METHOD_NOT_FOUND' } },
  });
  t.equal(await h.send({ jsonrpc: '2.0', method: 'jobs/frobnicate' }), null, 'a notification for an unknown method gets nothing');
});

t.test('-32602 INVALID_PARAMS names the unknown field', async (t) => {
  const h = harness();
  const answer = (await h.send(req(4, 'jobs/get', { job_id: 'job-1', jobid: 'x' }))) as { id: number; error: { code: number; message: string; data: { code: string; details: unknown } } };
  t.equal(answer.id, 4);
  t.equal(answer.error.code, -32602);
  t.equal(answer.error.data.code, 'INVALID_PARAMS');
  t.match(answer.error.message, /jobs\/get/);
  t.match(answer.error.message, /unknown field "jobid"/);
  t.same(answer.error.data.details, { path: '', message: 'must NOT have additional properties' });
});

t.test('-32602 INVALID_PARAMS names the missing field', async (t) => {
  const h = harness();
  const answer = (await h.send(req(5, 'jobs/create', { engine: 'codex' }))) as { error: { code: number; message: string; data: { code: string } } };
  t.equal(answer.error.code, -32602);
  t.equal(answer.error.data.code, 'INVALID_PARAMS');
  t.match(answer.error.message, /missing field "skill_id"/);
  const noParams = (await h.send(req(6, 'jobs/get'))) as { error: { message: string; data: { code: string } } };
  t.equal(noParams.error.data.code, 'INVALID_PARAMS', 'absent params count as {}');
  t.match(noParams.error.message, /missing field "job_id"/);
});

t.test('-32602 INVALID_PARAMS names a field with a bad value', async (t) => {
  const h = harness();
  const cases: Array<[string, unknown, RegExp]> = [
    ['jobs/list', { limit: 0 }, /limit must be >= 1/],
    ['jobs/list', { status: 'done' }, /status must be equal to one of the allowed values/],
    ['jobs/create', { skill_id: 'echo', engine: 'codex', execution_mode: 'batch' }, /execution_mode/],
    ['jobs/logs', { job_id: 'job-1', stream: 'stdin' }, /stream/],
    ['daemon/ping', [1, 2], /params must be object/],
    ['daemon/ping', { extra: true }, /unknown field "extra"/],
  ];
  for (const [method, params, pattern] of cases) {
    const answer = (await h.send(req(7, method, params))) as { error: { code: number; message: string; data: { code: string } } };
    t.equal(answer.error.code, -32602, `${method} ${JSON.stringify(params)}`);
    t.equal(answer.error.data.code, 'INVALID_PARAMS');
    t.match(answer.error.message, pattern);
  }
  t.same(h.internal, [], 'INVALID_PARAMS is a project error, not an internal one');
});

t.test('every documented method is bound and checks its params', async (t) => {
  const bound = bindMethods(impl());
  t.same(Object.keys(bound).sort(), Object.keys(METHOD_PARAMS).sort());
  for (const name of Object.keys(bound)) {
    const handler = bound[name] as MethodHandler<Ctx>;
    t.throws(() => handler({ definitely_not_a_field: 1 }, { conn: 'x' }), { code: 'INVALID_PARAMS' }, name);
  }
});

t.test('a batch returns an array in order and omits notifications', async (t) => {
  const h = harness();
  const answer = await h.send([
    req(1, 'daemon/ping'),
    { jsonrpc: '2.0', method: 'daemon/ping' },
    req(3, 'jobs/get', { job_id: 'nope' }),
    { jsonrpc: '2.0', method: 'jobs/get', params: { bad: 1 } },
    req(5, 'unknown/method'),
    42,
    req(7, 'jobs/get', { job_id: 'job-1' }),
  ]);
  t.ok(Array.isArray(answer), 'an array');
  const list = answer as Array<{ id: unknown; result?: unknown; error?: { code: number; data: { code: string } } }>;
  t.same(list.map((r) => r.id), [1, 3, 5, null, 7], 'in request order, notifications omitted');
  t.same(list[0]?.result, { ok: true, version: '0.1.0' });
  t.equal(list[1]?.error?.data.code, 'JOB_NOT_FOUND');
  t.equal(list[2]?.error?.data.code, 'METHOD_NOT_FOUND');
  t.equal(list[3]?.error?.data.code, 'INVALID_REQUEST');
  t.same(list[4]?.result, { job_id: 'job-1', status: 'running' });
});

t.test('a batch of one request is still answered with an array', async (t) => {
  const h = harness();
  t.same(await h.send([req(1, 'daemon/ping')]), [{ jsonrpc: '2.0', id: 1, result: { ok: true, version: '0.1.0' } }]);
});

t.test('a batch of only notifications gets no response', async (t) => {
  const h = harness();
  t.equal(await h.send([{ jsonrpc: '2.0', method: 'daemon/ping' }, { jsonrpc: '2.0', method: 'skills/list' }]), null);
});

t.test('a notification gets no response, whatever happens', async (t) => {
  const h = harness();
  t.equal(await h.send({ jsonrpc: '2.0', method: 'daemon/ping' }), null, 'success');
  t.equal(await h.send({ jsonrpc: '2.0', method: 'jobs/get', params: { job_id: 'nope' } }), null, 'project error');
  t.equal(await h.send({ jsonrpc: '2.0', method: 'jobs/get', params: { nope: 1 } }), null, 'bad params');
  t.equal(await h.send({ jsonrpc: '2.0', method: 'test/throw' }), null, 'internal error');
  t.equal(h.internal.length, 1, 'the internal error of a notification still reaches the listener');
});

t.test('a handler that throws a non-project error yields INTERNAL_ERROR and calls the listener', async (t) => {
  const h = harness();
  const answer = await h.send(req(9, 'test/throw'));
  t.same(answer, { jsonrpc: '2.0', id: 9, error: { code: -32603, message: 'internal error', data: { code: 'INTERNAL_ERROR' } } });
  t.notMatch(JSON.stringify(answer), /secret internal detail/, 'the internal message does not reach the client');
  t.equal(h.internal.length, 1);
  t.equal(h.internal[0]?.method, 'test/throw');
  t.ok(h.internal[0]?.error instanceof TypeError);
  t.equal((h.internal[0]?.error as Error).message, 'secret internal detail');

  const rejected = await h.send(req(10, 'test/reject'));
  t.same(rejected, { jsonrpc: '2.0', id: 10, error: { code: -32603, message: 'internal error', data: { code: 'INTERNAL_ERROR' } } });
  t.same(h.internal.map((e) => e.method), ['test/throw', 'test/reject']);
});

t.test('a SkilldError keeps its code and details and does not call the listener', async (t) => {
  const h = harness();
  t.same(await h.send(req(11, 'jobs/get', { job_id: 'job-404' })), {
    jsonrpc: '2.0',
    id: 11,
    error: { code: ERROR_CODES.JOB_NOT_FOUND.rpc, message: 'no job "job-404"', data: { code: 'JOB_NOT_FOUND', details: { job_id: 'job-404' } } },
  });
  t.same(await h.send(req(12, 'test/skilld')), {
    jsonrpc: '2.0',
    id: 12,
    error: { code: 3001, message: 'the queue is full', data: { code: 'QUEUE_FULL', details: { max_queue: 2 } } },
  });
  t.same(h.internal, []);
});

t.test('SkilldError without details has no details key on the wire', async (t) => {
  t.same(new SkilldError('JOB_NOT_WAITING', 'not waiting').toRpcError(), { code: 2003, message: 'not waiting', data: { code: 'JOB_NOT_WAITING' } });
});

t.test(
  'a request that also carries result/error members gets INVALID_REQUEST with data.code',
  async (t) => {
    const h = harness();
    const answer = (await h.send({ jsonrpc: '2.0', id: 13, method: 'daemon/ping', result: 1 })) as { error?: { code: number; data?: { code: string } } };
    t.equal(answer.error?.code, -32600);
    t.equal(answer.error?.data?.code, 'INVALID_REQUEST');
  },
);

t.test(
  'a project error answered to a client is not reported on console.warn as an unexpected error',
  async (t) => {
    const h = harness();
    warned.length = 0;
    await h.send(req(14, 'jobs/get', { job_id: 'job-404' }));
    await h.send(req(15, 'jobs/get', { bad: 1 }));
    t.same(warned, []);
  },
);

t.test('a batch of more than MAX_BATCH_REQUESTS gets BATCH_TOO_LARGE and none of its requests runs', async (t) => {
  const h = harness();
  counted = 0;
  const batch = Array.from({ length: MAX_BATCH_REQUESTS + 1 }, (_, i) => req(i, 'test/count'));
  const answer = (await h.send(batch)) as { id: unknown; error: { code: number; message: string; data: { code: string } } };
  t.equal(answer.id, null);
  t.equal(answer.error.code, -32600);
  t.equal(answer.error.data.code, 'BATCH_TOO_LARGE');
  t.match(answer.error.message, /at most 1000 requests/);
  t.equal(counted, 0, 'nothing ran');
  const full = (await h.send(batch.slice(1))) as unknown[];
  t.equal(full.length, MAX_BATCH_REQUESTS, 'a batch of exactly the limit runs');
  t.equal(counted, MAX_BATCH_REQUESTS);
});

t.test('params nested deeper than MAX_PARAMS_DEPTH get INVALID_PARAMS; 100,000 levels cannot overflow the stack', async (t) => {
  const h = harness();
  const arrays = (count: number): unknown => JSON.parse(`${'['.repeat(count)}1${']'.repeat(count)}`) as unknown;
  // params is level 1, input level 2: 62 arrays inside make exactly the limit.
  const ok = await h.send(req(1, 'jobs/create', { skill_id: 's', engine: 'codex', input: { v: arrays(MAX_PARAMS_DEPTH - 2) } }));
  t.match(ok, { id: 1, result: { method: 'jobs/create' } }, 'exactly the limit passes');
  const over = await h.send(req(1, 'jobs/create', { skill_id: 's', engine: 'codex', input: { v: arrays(MAX_PARAMS_DEPTH - 1) } }));
  t.match(over, { id: 1, error: { data: { code: 'INVALID_PARAMS' } } }, 'one more level does not');
  const deep = `{"jsonrpc":"2.0","id":2,"method":"jobs/reply","params":{"job_id":"j","interaction_id":1,"response":${'['.repeat(100_000)}${']'.repeat(100_000)}}}`;
  const answer = (await h.send(deep)) as { id: number; error: { code: number; message: string; data: { code: string } } };
  t.equal(answer.id, 2);
  t.equal(answer.error.code, -32602);
  t.equal(answer.error.data.code, 'INVALID_PARAMS');
  t.match(answer.error.message, /nested more than 64 levels/);
  t.equal(await h.send(`{"jsonrpc":"2.0","method":"daemon/ping","params":{"a":${'['.repeat(70)}${']'.repeat(70)}}}`), null, 'a deep notification gets nothing');
  t.equal(jsonProblem({ a: [1, { b: 'x' }] }, 3), null);
  t.match(jsonProblem({ a: [1, { b: {} }] }, 3), { message: 'nested more than 3 levels deep' });
  t.equal(jsonProblem('text', 0), null, 'a scalar has no depth');
});

t.test('a NUL character in any string of params, or in a key, gets INVALID_PARAMS naming where, and the method never runs', async (t) => {
  const h = harness();
  const nul = '\u0000';
  const cases: Array<[string, Record<string, unknown>, string]> = [
    ['jobs/get', { job_id: `job-1${nul}` }, '/job_id'],
    ['jobs/create', { skill_id: 's', engine: 'codex', input: { text: `a${nul}b` } }, '/input/text'],
    ['jobs/create', { skill_id: 's', engine: 'codex', parameter: { list: ['ok', { deep: nul }] } }, '/parameter/list/1/deep'],
    ['jobs/create', { skill_id: 's', engine: 'codex', input: { [`k${nul}`]: 'v' } }, '/input'],
    ['jobs/reply', { job_id: 'j', interaction_id: 1, response: { text: nul } }, '/response/text'],
    ['jobs/reply', { job_id: 'j', interaction_id: 1, response: nul }, '/response'],
    ['jobs/list', { [`status${nul}`]: 'queued' }, ''],
    ['jobs/create', { skill_id: 's', engine: 'codex', input: { 'a/b~c': [nul] } }, '/input/a~1b~0c/0'],
  ];
  for (const [method, params, path] of cases) {
    const answer = (await h.send(req(1, method, params))) as { error?: { code: number; message: string; data: { code: string; details: { path: string; message: string } } } };
    t.equal(answer.error?.code, -32602, `${method} ${JSON.stringify(params)}`);
    t.equal(answer.error?.data.code, 'INVALID_PARAMS');
    t.equal(answer.error?.data.details.path, path, 'details.path is the JSON pointer of the string, or of the object whose key holds it');
    t.match(answer.error?.message, /NUL character \(\\u0000\)/);
  }
  t.match(await h.send(req(2, 'jobs/get', { job_id: `job-1${nul}` })), { error: { message: /^invalid params for jobs\/get: job_id must not contain a NUL character/ } });
  t.match(await h.send(req(3, 'jobs/create', { skill_id: 's', engine: 'codex', input: { [`k${nul}`]: 'v' } })), { error: { message: /input must not have a key with a NUL character/ } });
  t.equal(await h.send({ jsonrpc: '2.0', method: 'daemon/ping', params: { a: nul } }), null, 'a notification gets nothing');
  t.match(await h.send(req(4, 'jobs/create', { skill_id: 's', engine: 'codex', input: { text: 'a\u0001b\u007f', empty: '' } })), { result: { method: 'jobs/create' } }, 'other control characters pass');
  t.same(h.internal, [], 'nothing reached a method to fail there');
});

t.test('an answer past MAX_ANSWER_BYTES becomes RESPONSE_TOO_LARGE with the same id', async (t) => {
  const h = harness();
  const fits = (await h.send(req(1, 'test/bytes', { n: 1000 }))) as { result: string };
  t.equal(fits.result.length, 1000);
  const answer = (await h.send(req(2, 'test/bytes', { n: MAX_ANSWER_BYTES + 1 }))) as { id: number; error: { code: number; data: { code: string } } };
  t.equal(answer.id, 2);
  t.equal(answer.error.code, 3002);
  t.equal(answer.error.data.code, 'RESPONSE_TOO_LARGE');
});

t.test('a batch answer keeps the results that fit within MAX_ANSWER_BYTES and replaces the others', async (t) => {
  const h = harness();
  const part = Math.floor(MAX_ANSWER_BYTES / 3);
  const batch = [req(1, 'test/bytes', { n: part }), req(2, 'daemon/ping'), req(3, 'test/bytes', { n: part }), req(4, 'test/bytes', { n: part }), req(5, 'test/bytes', { n: part }), req(6, 'jobs/get', { job_id: 'nope' })];
  const line = await h.dispatcher.handleLine(JSON.stringify(batch), { conn: 'c1' });
  t.ok(line !== null && Buffer.byteLength(line) <= MAX_ANSWER_BYTES + 1024, 'the line stays within the limit');
  const answers = JSON.parse(line as string) as Array<{ id: number; result?: unknown; error?: { data: { code: string } } }>;
  t.same(answers.map((a) => a.id), [1, 2, 3, 4, 5, 6], 'every request is answered, in order');
  t.equal(answers.filter((a) => a.error?.data.code === 'RESPONSE_TOO_LARGE').length, 2, 'two of the four large results did not fit');
  t.same(answers[1]?.result, { ok: true, version: '0.1.0' });
  t.equal(answers[5]?.error?.data.code, 'JOB_NOT_FOUND', 'errors always fit');
});

t.test('every request of a line, batch items one by one, goes through the runner the transport gives', async (t) => {
  const h = harness();
  let runs = 0;
  const run = async <T>(task: () => Promise<T>): Promise<T> => {
    runs += 1;
    return task();
  };
  await h.dispatcher.handleLine(JSON.stringify([req(1, 'daemon/ping'), req(2, 'daemon/ping'), 7]), { conn: 'c1' }, run);
  await h.dispatcher.handleLine(JSON.stringify(req(3, 'daemon/ping')), { conn: 'c1' }, run);
  t.equal(runs, 4);
});

t.test("every method's params schema compiles (each is compiled at its method's first call, not at start)", async (t) => {
  const bound = bindMethods(Object.fromEntries((Object.keys(METHOD_PARAMS) as MethodName[]).map((name) => [name, () => 'ran'])) as unknown as Record<MethodName, MethodHandler<unknown>>);
  for (const name of Object.keys(METHOD_PARAMS) as MethodName[]) {
    // Ajv in strict mode throws at compile time for a schema it does not accept; an invalid value is INVALID_PARAMS.
    const outcome = await Promise.resolve()
      .then(() => (bound[name] as MethodHandler<unknown>)({}, {}))
      .then((value) => String(value), (error: unknown) => (error instanceof SkilldError ? error.code : `threw ${String(error)}`));
    t.match(outcome, /^(ran|INVALID_PARAMS)$/, name);
  }
});
