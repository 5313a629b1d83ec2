// A model provider's refusal told from each engine's own error output, where no gateway sees the
// provider's answers (daemon/engines/provider-errors.ts): the real CLIs' outputs on 401 and 429
// (test/fixtures/provider-refusals.ts), one-shot and live; what must never count.
import t from 'tap';
import { geminiAcp } from '../../daemon/engines/acp/protocols.js';
import { claude } from '../../daemon/engines/claude.js';
import { claudeStreamJson } from '../../daemon/engines/claude/stream-json.js';
import { codex } from '../../daemon/engines/codex.js';
import { codexAppServer } from '../../daemon/engines/codex/app-server.js';
import type { EngineAdapter } from '../../daemon/engines/engine.js';
import { StderrNotes } from '../../daemon/engines/error-lines.js';
import { gemini } from '../../daemon/engines/gemini.js';
import type { LiveSession, LiveStart, LiveTurnResult } from '../../daemon/engines/live-session.js';
import { acpErrorFields, codexErrorFields, explainByProvider, lineSign, linesSign, reportSign, statusSign, typeSign } from '../../daemon/engines/provider-errors.js';
import { outcomeOf } from '../../daemon/jobs/live-outcome.js';
import { checkProvider } from '../../daemon/jobs/turn.js';
import type { ProcessOutcome } from '../../daemon/model/gate.js';
import * as recorded from '../fixtures/provider-refusals.js';

const EXITED: ProcessOutcome = { kind: 'failed', code: 'ENGINE_EXIT_NONZERO', message: 'engine exited with code 1' };
const KEY = 'sk-proj-abcdefghijklmnopqrstuvwxyz0123456789ABCD';

function notesOf(lines: readonly string[]): StderrNotes {
  const notes = new StderrNotes();
  for (const line of lines) notes.line(line);
  return notes;
}

/** A one-shot turn that exited non-zero after printing `stdout` and `stderr`, as the turn's end decides it. */
function oneShot(adapter: EngineAdapter, stdout: readonly string[], stderr: readonly string[] = [], outcome: ProcessOutcome = EXITED): ProcessOutcome {
  const parser = adapter.newParser();
  for (const line of stdout) parser.line('stdout', line);
  for (const line of stderr) parser.line('stderr', line);
  return checkProvider(outcome, parser.result().engineError, parser.errorFields ?? null, notesOf(stderr));
}

t.test('codex exec: 401 and 429 in its turn.failed, the echoed key redacted', async (t) => {
  const refused = oneShot(codex, recorded.CODEX_EXEC_401, recorded.CODEX_STDERR);
  t.same(refused, { kind: 'failed', code: 'PROVIDER_AUTH_FAILED', message: "the model provider refused the engine's key (HTTP 401): unexpected status 401 Unauthorized: Incorrect API key provided: [redacted], url: http://127.0.0.1:39091/v1/responses" });
  t.notOk(JSON.stringify(refused).includes(KEY), 'the key is not in the message');
  t.same(oneShot(codex, recorded.CODEX_EXEC_429, recorded.CODEX_STDERR), { kind: 'failed', code: 'PROVIDER_RATE_LIMITED', message: "the model provider limited the engine's requests (HTTP 429) and the engine gave up: exceeded retry limit, last status: 429 Too Many Requests" });
});

t.test('claude -p: api_error_status and api_error_type of its error result', async (t) => {
  t.same(oneShot(claude, recorded.CLAUDE_401), { kind: 'failed', code: 'PROVIDER_AUTH_FAILED', message: "the model provider refused the engine's key (HTTP 401): Invalid API key · Fix external API key" });
  t.same(oneShot(claude, recorded.CLAUDE_429), { kind: 'failed', code: 'PROVIDER_RATE_LIMITED', message: "the model provider limited the engine's requests (HTTP 429) and the engine gave up: API Error: Request rejected (429) · Number of request tokens has exceeded your per-minute rate limit" });
  t.match(oneShot(claude, recorded.CLAUDE_529), { code: 'PROVIDER_RATE_LIMITED', message: /^the model provider limited the engine's requests \(HTTP 529\) and the engine gave up: API Error: 529 / });
  const parser = claude.newParser();
  for (const line of recorded.CLAUDE_401) parser.line('stdout', line);
  t.same(parser.errorFields, { status: 401, type: 'authentication_error' });
});

t.test('gemini --output-format json: its error on stderr only, quoted by its first meaningful line', async (t) => {
  const refused = oneShot(gemini, [], recorded.GEMINI_401_STDERR, { kind: 'failed', code: 'ENGINE_EXIT_NONZERO', message: 'engine exited with code 145' });
  t.match(refused, { kind: 'failed', code: 'PROVIDER_AUTH_FAILED', message: /^the model provider refused the engine's key \(HTTP 401\): Error when talking to Gemini API Full report available at: .*"code":401,"message":"API key not valid/ });
  t.same(oneShot(gemini, [], recorded.GEMINI_429_STDERR), { kind: 'failed', code: 'PROVIDER_RATE_LIMITED', message: "the model provider limited the engine's requests (HTTP 429) and the engine gave up: Attempt 1 failed: Resource has been exhausted (e.g. check quota).. Max attempts reached" });
  const doc = ['{', '  "session_id": "S",', '  "error": {', '    "type": "FatalAuthenticationError",', '    "message": "When using Gemini API, you must specify the GEMINI_API_KEY environment variable.",', '    "code": 41', '  }', '}'];
  t.match(oneShot(gemini, doc), { code: 'PROVIDER_AUTH_FAILED', message: "the model provider refused the engine's key: When using Gemini API, you must specify the GEMINI_API_KEY environment variable." }, 'a document on stdout: its error type');
});

/** A live session driven by the test: `answer` answers what the session sends, `receive` hears the engine. */
function driven(session: (send: (line: string) => void) => LiveSession, answer: (msg: Record<string, unknown>, say: (msg: Record<string, unknown>) => void) => void): LiveSession {
  let live: LiveSession | null = null;
  const say = (msg: Record<string, unknown>): void => live?.receive(JSON.stringify(msg));
  live = session((line) => queueMicrotask(() => answer(JSON.parse(line) as Record<string, unknown>, say)));
  return live;
}

const start = (engine: LiveStart['engine']): LiveStart => ({ engine, model: null, cwd: '/work/space', approvals: 'auto', newSessionId: '5e48bd94-a290-404f-b7bc-5fcef78720b5' });

async function liveTurn(session: LiveSession): Promise<LiveTurnResult> {
  await session.open();
  return session.prompt('hello', () => undefined);
}

t.test('codex app-server: codexErrorInfo with the httpStatusCode of its failed turn', async (t) => {
  for (const [lines, code, status] of [[recorded.CODEX_APP_SERVER_401, 'PROVIDER_AUTH_FAILED', 401], [recorded.CODEX_APP_SERVER_429, 'PROVIDER_RATE_LIMITED', 429]] as const) {
    const completed = JSON.parse(lines.at(-1) ?? '{}') as { params: { threadId: string; turn: { id: string } } };
    const session = driven(
      (send) => codexAppServer.connect({ send }, start('codex')),
      (msg, say) => {
        if (msg['method'] === 'initialize') say({ id: msg['id'], result: {} });
        if (msg['method'] === 'thread/start') say({ id: msg['id'], result: { thread: { id: completed.params.threadId } } });
        if (msg['method'] === 'turn/start') {
          say({ id: msg['id'], result: { turn: { id: completed.params.turn.id, status: 'inProgress' } } });
          for (const line of lines) say(JSON.parse(line) as Record<string, unknown>);
        }
      },
    );
    const result = await liveTurn(session);
    t.same(result.errorFields, { status, type: status === 401 ? 'httpConnectionFailed' : 'responseTooManyFailedAttempts' });
    t.match(outcomeOf(result), { kind: 'failed', code, message: new RegExp(`\\(HTTP ${status}\\)`) });
    t.notOk(JSON.stringify(outcomeOf(result)).includes(KEY));
  }
});

t.test('gemini --acp: the error answer whose code is the provider status', async (t) => {
  for (const [lines, code] of [[recorded.GEMINI_ACP_401, 'PROVIDER_AUTH_FAILED'], [recorded.GEMINI_ACP_429, 'PROVIDER_RATE_LIMITED']] as const) {
    const answer = JSON.parse(lines[0] ?? '{}') as Record<string, unknown>;
    const session = driven(
      (send) => geminiAcp.connect({ send }, start('gemini')),
      (msg, say) => {
        if (msg['method'] === 'initialize') say({ jsonrpc: '2.0', id: msg['id'], result: { protocolVersion: 1, agentCapabilities: {}, authMethods: [] } });
        if (msg['method'] === 'session/new') say({ jsonrpc: '2.0', id: msg['id'], result: { sessionId: 'c1b01d66-e185-4b86-af7e-0ccd884e23cf' } });
        if (msg['method'] === 'session/prompt') say({ ...answer, id: msg['id'] });
      },
    );
    const outcome = outcomeOf(await liveTurn(session));
    t.match(outcome, { kind: 'failed', code }, code);
    t.notOk(JSON.stringify(outcome).includes(KEY));
  }
  t.same(outcomeOf({ outcome: 'failed', messages: [], usage: null, error: 'Rate limit exceeded. Try again later.', errorFields: { status: 429, type: null } }), { kind: 'failed', code: 'PROVIDER_RATE_LIMITED', message: "the model provider limited the engine's requests (HTTP 429) and the engine gave up: Rate limit exceeded. Try again later." }, "Gemini's own words for a 429 in ACP");
});

t.test('claude stream-json (live): the same error result', async (t) => {
  const result = recorded.CLAUDE_429.at(-1) ?? '';
  const session = driven(
    (send) => claudeStreamJson.connect({ send }, start('claude')),
    (msg, say) => {
      if (msg['type'] === 'user') say(JSON.parse(result) as Record<string, unknown>);
    },
  );
  t.match(outcomeOf(await liveTurn(session)), { kind: 'failed', code: 'PROVIDER_RATE_LIMITED', message: /\(HTTP 429\) and the engine gave up: API Error: Request rejected \(429\)/ });
});

t.test('a model error that is neither stays the engine failure it was, quoted (the recorded 400s)', async (t) => {
  const codex400 = { outcome: 'failed' as const, messages: [], usage: null, error: '{"error":{"code":400,"message":"bad request from the model","status":"INTERNAL"}}', errorFields: { status: null, type: 'other' } };
  t.same(outcomeOf(codex400), { kind: 'failed', code: 'ENGINE_TURN_FAILED', message: 'the engine reported that its turn failed: {"error":{"code":400,"message":"bad request from the model","status":"INTERNAL"}}' });
  t.same(outcomeOf({ outcome: 'failed', messages: [], usage: null, error: 'API Error: 400 bad request from the model', errorFields: { status: 400, type: 'invalid_request_error' } }), { kind: 'failed', code: 'ENGINE_TURN_FAILED', message: 'the engine reported that its turn failed: API Error: 400 bad request from the model' });
  t.same(outcomeOf({ outcome: 'failed', messages: [], usage: null, error: null }), { kind: 'failed', code: 'ENGINE_TURN_FAILED', message: 'the engine reported that its turn failed: no reason given' });
  t.same(outcomeOf({ outcome: 'failed', messages: [], usage: null, error: `API Error: 500 {"detail":"${KEY}"}` }), { kind: 'failed', code: 'ENGINE_TURN_FAILED', message: 'the engine reported that its turn failed: API Error: 500 {"detail":"[redacted]"}' }, 'a key in any error is redacted');
});

t.test("the agent's own words never count, however they read", async (t) => {
  const said = 'The API answered 429 Too Many Requests, then 401 Unauthorized: invalid x-api-key. RESOURCE_EXHAUSTED.';
  const claudeSaid = [JSON.stringify({ type: 'assistant', message: { content: [{ type: 'text', text: said }] } })];
  t.same(oneShot(claude, claudeSaid), EXITED, 'claude: an assistant message');
  t.same(oneShot(claude, [...claudeSaid, JSON.stringify({ type: 'result', subtype: 'error_max_turns', is_error: true, errors: ['Reached maximum number of turns (3)'] })]), EXITED, 'claude: with another error');
  const codexSaid = [JSON.stringify({ type: 'item.completed', item: { id: 'i', type: 'agent_message', text: said } }), JSON.stringify({ type: 'turn.failed', error: { message: 'stream disconnected before completion' } })];
  t.same(oneShot(codex, codexSaid), EXITED, 'codex: an agent message');
  t.match(outcomeOf({ outcome: 'failed', messages: [said], usage: null, error: 'the agent stopped the turn: max_tokens' }), { code: 'ENGINE_TURN_FAILED' }, 'live: the messages of a failed turn');
  t.same(oneShot(claude, recorded.CLAUDE_401, [], { kind: 'ok' }), { kind: 'ok' }, 'a turn that succeeded stays a success, whatever was said before');
});

t.test("the job's own network refusing is no provider's refusal", async (t) => {
  const forward = JSON.stringify({ type: 'turn.failed', error: { message: 'unexpected status 403 Forbidden: refused api.openai.com:443: api.openai.com:443 is not on the allow-list, url: https://api.openai.com/v1/responses' } });
  t.same(oneShot(codex, [forward]), EXITED, 'codex through the egress proxy: 403 with its refusal');
  const tunnel = JSON.stringify({ type: 'result', subtype: 'success', is_error: true, api_error_status: 403, result: 'API Error: ERR_PROXY_TUNNEL: the proxy refused the tunnel (403)' });
  t.same(oneShot(claude, [tunnel]), EXITED, 'claude: a CONNECT refused, whatever its status field says');
  t.equal(linesSign(['HTTP/1.1 403 Forbidden', 'Proxy-Agent: x']), null);
});

t.test('stderr counts only where its last meaningful lines say it: a retried 429 does not explain a later crash', async (t) => {
  const crashed = ['Attempt 1 failed with status 429. Retrying with backoff...', 'Error: ENOSPC: no space left on device, write', '    at writeSync (node:fs:925:3)', '    at main (file:///usr/lib/node_modules/x/cli.js:10:11)'];
  t.same(oneShot(gemini, [], crashed), EXITED);
  t.match(oneShot(gemini, [], ['Attempt 1 failed with status 429. Retrying with backoff...', 'Attempt 2 failed with status 429. Max attempts reached']), { code: 'PROVIDER_RATE_LIMITED', message: /\(HTTP 429\) and the engine gave up: Attempt 1 failed with status 429/ });
});

t.test('what counts: statuses said as statuses, the providers’ error types and wording', async (t) => {
  t.same(statusSign(401), { code: 'PROVIDER_AUTH_FAILED', status: 401 });
  t.same(statusSign(403), { code: 'PROVIDER_AUTH_FAILED', status: 403 });
  for (const status of [429, 503, 529]) t.same(statusSign(status), { code: 'PROVIDER_RATE_LIMITED', status });
  for (const status of [400, 404, 500, null, undefined]) t.equal(statusSign(status), null, String(status));
  const lines: Array<[string, string | null, number | null]> = [
    ['Claude API: Error code: 401 - {"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}', 'PROVIDER_AUTH_FAILED', 401],
    ['API Error: 401 {"type":"error","error":{"type":"authentication_error"}}', 'PROVIDER_AUTH_FAILED', 401],
    ['{"error":{"code":403,"message":"Method doesn\'t allow unregistered callers","status":"PERMISSION_DENIED"}}', 'PROVIDER_AUTH_FAILED', 403],
    ['Request had invalid authentication credentials. UNAUTHENTICATED', 'PROVIDER_AUTH_FAILED', null],
    ['{"error":{"code":400,"message":"API key not valid. Please pass a valid API key.","status":"INVALID_ARGUMENT","details":[{"reason":"API_KEY_INVALID"}]}}', 'PROVIDER_AUTH_FAILED', null],
    ['HTTP/1.1 503 Service Unavailable', 'PROVIDER_RATE_LIMITED', 503],
    ['API Error: Repeated 529 Overloaded errors', 'PROVIDER_RATE_LIMITED', null],
    ['{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}', 'PROVIDER_RATE_LIMITED', null],
    ['Quota exceeded: RESOURCE_EXHAUSTED', 'PROVIDER_RATE_LIMITED', null],
    ['statusCode: 429', 'PROVIDER_RATE_LIMITED', 429],
    ['processed 429 files and 401 folders in 503 ms', null, null],
    ['unexpected status 500 Internal Server Error', null, null],
    ['fetch failed', null, null],
    ['Error: EACCES: permission denied, open \'/etc/x\'', null, null],
  ];
  for (const [line, code, status] of lines) t.same(lineSign(line), code === null ? null : { code, status }, line);
  t.same(typeSign('unauthorized'), { code: 'PROVIDER_AUTH_FAILED', status: null });
  t.same(typeSign('usageLimitExceeded'), { code: 'PROVIDER_RATE_LIMITED', status: null });
  t.same(typeSign('rate_limit'), { code: 'PROVIDER_RATE_LIMITED', status: null });
  t.equal(typeSign('invalid_request_error'), null);
  t.same(reportSign('x', { status: 401, type: 'rate_limit' }), { code: 'PROVIDER_AUTH_FAILED', status: 401 }, 'a status field first');
  t.same(reportSign('API key not valid', { status: 400, type: null }), { code: 'PROVIDER_AUTH_FAILED', status: null }, "a status of neither kind leaves the words (Google's invalid key is a 400)");
});

t.test("each engine's fields", async (t) => {
  t.same(codexErrorFields('unauthorized'), { status: null, type: 'unauthorized' });
  t.same(codexErrorFields({ httpConnectionFailed: { httpStatusCode: 401 } }), { status: 401, type: 'httpConnectionFailed' });
  t.same(codexErrorFields({ responseStreamDisconnected: { httpStatusCode: null } }), { status: null, type: 'responseStreamDisconnected' });
  for (const info of [null, undefined, 3, [], {}]) t.equal(codexErrorFields(info), null, JSON.stringify(info));
  t.same(acpErrorFields(429), { status: 429, type: null });
  for (const code of [-32603, -32000, 0, 42, 'x', undefined]) t.equal(acpErrorFields(code), null, String(code));
});

t.test('only a failure of the engine is explained so: stops, limits, lost sessions and starts keep their codes', async (t) => {
  const sign = { code: 'PROVIDER_AUTH_FAILED', status: 401 } as const;
  for (const code of ['TIMEOUT', 'JOB_LIMIT_EXCEEDED', 'SESSION_RESUME_FAILED', 'ENGINE_SPAWN_FAILED'] as const) {
    const outcome: ProcessOutcome = { kind: 'failed', code, message: 'm' };
    t.same(explainByProvider(outcome, sign, 'q'), outcome, code);
  }
  t.same(explainByProvider({ kind: 'canceled' }, sign, 'q'), { kind: 'canceled' });
  t.same(explainByProvider({ kind: 'failed', code: 'ENGINE_TURN_INTERRUPTED', message: 'm' }, sign, null), { kind: 'failed', code: 'PROVIDER_AUTH_FAILED', message: "the model provider refused the engine's key (HTTP 401)" });
  t.same(explainByProvider(EXITED, null, 'q'), EXITED);
});
