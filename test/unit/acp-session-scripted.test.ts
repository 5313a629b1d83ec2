// The ACP live session against an agent scripted in the test, for what the fakes never say: error
// answers, other stop reasons, text around tools, requests outside a turn, stray lines.
import t from 'tap';
import { geminiAcp } from '../../daemon/engines/acp/protocols.js';
import type { LiveEvent, LiveSession, LiveStart } from '../../daemon/engines/live-session.js';

type Message = Record<string, unknown> & { id?: number | undefined; method?: string; params?: Record<string, unknown>; result?: Record<string, unknown> };

const SESSION_ID = 'b1c5c3c2-4f0e-4a55-9a39-3d1b8f1c0a11';
const OPTIONS = [
  { optionId: 'proceed_always', name: 'Allow for this session', kind: 'allow_always' },
  { optionId: 'proceed_once', name: 'Allow', kind: 'allow_once' },
  { optionId: 'cancel', name: 'Reject', kind: 'reject_once' },
];
const TOOL_CALL = { toolCallId: 'run_shell_command__call_1', status: 'pending', title: 'rm -rf build', content: [], locations: [], kind: 'execute' };

/** An agent whose answer to each prompt is `onPrompt`; everything the session sends is kept in `sent`. */
function scripted(approvals: LiveStart['approvals'], onPrompt: (agent: Agent, id: number) => void, sessionId = SESSION_ID): Agent {
  const sent: Message[] = [];
  const answers = new Map<number, (result: Record<string, unknown>) => void>();
  let nextRequest = 0;
  const agent: Agent = {
    sent,
    session: null as unknown as LiveSession,
    say: (msg) => agent.session.receive(JSON.stringify({ jsonrpc: '2.0', ...msg })),
    update: (update) => agent.say({ method: 'session/update', params: { sessionId: SESSION_ID, update } }),
    chunk: (text) => agent.update({ sessionUpdate: 'agent_message_chunk', content: { type: 'text', text } }),
    ask: () => {
      const id = nextRequest++;
      agent.say({ id, method: 'session/request_permission', params: { sessionId: SESSION_ID, options: OPTIONS, toolCall: TOOL_CALL } });
      return new Promise((resolve) => answers.set(id, resolve));
    },
  };
  const start: LiveStart = { engine: 'gemini', model: null, cwd: '/work/space', approvals, newSessionId: 'unused' };
  agent.session = geminiAcp.connect({
    send: (line) => {
      const msg = JSON.parse(line) as Message;
      sent.push(msg);
      if (msg.method === undefined && msg.id !== undefined) answers.get(msg.id)?.(msg.result ?? {});
      else if (msg.method === 'initialize') agent.say({ id: msg.id, result: { protocolVersion: 1, agentCapabilities: {}, authMethods: [] } });
      else if (msg.method === 'session/new') agent.say({ id: msg.id, result: { sessionId } });
      else if (msg.method === 'session/prompt') onPrompt(agent, msg.id as number);
    },
  }, start);
  return agent;
}

interface Agent {
  sent: Message[];
  session: LiveSession;
  say(msg: Message): void;
  update(update: Record<string, unknown>): void;
  chunk(text: string): void;
  /** Sends a permission request; resolves with the session's answer. */
  ask(): Promise<Record<string, unknown>>;
}

t.test('open sends initialize without fs or terminal, then session/new in the cwd, and gives the session id', async (t) => {
  const agent = scripted('auto', () => undefined);
  t.equal(await agent.session.open(), SESSION_ID);
  t.match(agent.sent, [
    { jsonrpc: '2.0', method: 'initialize', params: { protocolVersion: 1, clientCapabilities: {} } },
    { jsonrpc: '2.0', method: 'session/new', params: { cwd: '/work/space', mcpServers: [] } },
  ]);
  t.notOk('fs' in ((agent.sent[0]?.params?.['clientCapabilities'] ?? {}) as object));
});

t.test('a JSON-RPC error answer to the prompt fails the turn with its message', async (t) => {
  const agent = scripted('auto', (a, id) => a.say({ id, error: { code: -32603, message: 'Internal error: quota exceeded' } }));
  await agent.session.open();
  t.same(await agent.session.prompt('hi', () => undefined), { outcome: 'failed', messages: [], error: 'Internal error: quota exceeded', usage: null });
});

t.test('a stop reason other than end_turn or cancelled fails the turn and keeps its messages', async (t) => {
  const agent = scripted('auto', (a, id) => {
    a.chunk('partial');
    a.say({ id, result: { stopReason: 'max_tokens' } });
  });
  await agent.session.open();
  t.same(await agent.session.prompt('hi', () => undefined), { outcome: 'failed', messages: ['partial'], error: 'the agent stopped the turn: max_tokens', usage: null });
});

t.test('the answer\'s _meta.quota (as Gemini sends it) is the turn\'s usage; an answer without one reports none', async (t) => {
  const quota = { token_count: { input_tokens: 20, output_tokens: 10 }, model_usage: [{ model: 'gemini-2.5-flash', token_count: { input_tokens: 20, output_tokens: 10 } }] };
  const answers = [{ stopReason: 'end_turn', _meta: { quota } }, { stopReason: 'max_tokens', _meta: { quota } }, { stopReason: 'end_turn' }];
  const agent = scripted('auto', (a, id) => a.say({ id, result: answers.shift() ?? {} }));
  await agent.session.open();
  const used = { input_tokens: 20, output_tokens: 10, cached_input_tokens: 0, requests: 1 };
  t.same((await agent.session.prompt('hi', () => undefined)).usage, used);
  t.same(await agent.session.prompt('hi', () => undefined), { outcome: 'failed', messages: [], error: 'the agent stopped the turn: max_tokens', usage: used });
  t.equal((await agent.session.prompt('hi', () => undefined)).usage, null);
});

t.test('text before and after a tool are two messages, the last the final answer; chunks of one message join', async (t) => {
  const agent = scripted('auto', (a, id) => {
    a.chunk('Let me ');
    a.chunk('look.');
    a.update({ ...TOOL_CALL, sessionUpdate: 'tool_call', status: 'in_progress' });
    a.update({ sessionUpdate: 'agent_thought_chunk', content: { type: 'text', text: 'hmm' } });
    a.chunk('The answer.');
    a.say({ id, result: { stopReason: 'end_turn' } });
  });
  await agent.session.open();
  const events: LiveEvent[] = [];
  const result = await agent.session.prompt('hi', (event) => events.push(event));
  t.same(result.messages, ['Let me look.', 'The answer.']);
  t.same(events, [{ type: 'message', text: 'Let me look.' }, { type: 'message', text: 'The answer.' }]);
});

t.test('ask mode: a permission request ends the message before it and becomes an approval event', async (t) => {
  let answered: Record<string, unknown> | null = null;
  const agent = scripted('ask', (a, id) => {
    a.chunk('I will clean up.');
    void a.ask().then((answer) => {
      answered = answer;
      a.say({ id, result: { stopReason: 'end_turn' } });
    });
  });
  await agent.session.open();
  const events: LiveEvent[] = [];
  await agent.session.prompt('hi', (event) => {
    events.push(event);
    if (event.type === 'approval') agent.session.answer(event.request.id, 'deny');
  });
  t.match(events, [{ type: 'message', text: 'I will clean up.' }, { type: 'approval', request: { kind: 'command', summary: 'rm -rf build' } }]);
  t.same(answered, { outcome: { outcome: 'selected', optionId: 'cancel' } }, 'deny picks the reject-once option');
});

t.test('auto mode: a permission request is refused without asking anyone; outside a turn it is cancelled', async (t) => {
  const answers: Array<Record<string, unknown>> = [];
  const agent = scripted('auto', (a, id) => void a.ask().then((answer) => {
    answers.push(answer);
    a.say({ id, result: { stopReason: 'end_turn' } });
  }));
  await agent.session.open();
  const events: LiveEvent[] = [];
  t.equal((await agent.session.prompt('hi', (event) => events.push(event))).outcome, 'completed');
  answers.push(await agent.ask());
  t.same(events, []);
  t.same(answers, [{ outcome: { outcome: 'selected', optionId: 'cancel' } }, { outcome: { outcome: 'cancelled' } }]);
});

t.test('dispose rejects the turn; the closed session answers nothing after it, so grants nothing', async (t) => {
  const agent = scripted('ask', () => undefined);
  await agent.session.open();
  const running = agent.session.prompt('hi', () => undefined);
  agent.session.dispose(new Error('gone'));
  await t.rejects(running, { message: 'gone' });
  agent.sent.length = 0;
  void agent.ask();
  agent.chunk('late');
  t.same(agent.sent, []);
});

t.test('a line that is not JSON is not a message: nothing is sent back for it', async (t) => {
  const agent = scripted('auto', (a, id) => {
    a.session.receive('Ripgrep is not available. Falling back to GrepTool.');
    a.chunk('ok');
    a.say({ id, result: { stopReason: 'end_turn' } });
  });
  await agent.session.open();
  t.same((await agent.session.prompt('hi', () => undefined)).messages, ['ok']);
  t.notOk(agent.sent.some((msg) => 'error' in msg), 'no parse error went to the agent');
});

t.test('a prompt that cannot be written rejects the turn: a broken pipe is no end of turn', async (t) => {
  const agent = scripted('auto', () => {
    throw new Error('write EPIPE');
  });
  await agent.session.open();
  await t.rejects(agent.session.prompt('hi', () => undefined), { message: 'write EPIPE' });
});

t.test('calls out of order: a prompt before open rejects, an interrupt between turns sends nothing', async (t) => {
  const agent = scripted('auto', (a, id) => a.say({ id, result: { stopReason: 'end_turn' } }));
  await t.rejects(agent.session.prompt('hi', () => undefined), { message: 'prompt before the session was opened' });
  await agent.session.open();
  await agent.session.prompt('hi', () => undefined);
  const before = agent.sent.length;
  agent.session.interrupt();
  agent.session.answer('1', 'allow');
  t.equal(agent.sent.length, before);
});

t.test('a session id that could be read as an option is refused', async (t) => {
  const agent = scripted('auto', () => undefined, '--rf');
  await t.rejects(agent.session.open(), { message: 'the ACP agent started a session without a usable id' });
});
