import { ClaudeCalls, assistantText, resultError } from './events.js';
import { modelArgs } from '../engine.js';
import { parseObject } from '../json-text.js';
import { claudeErrorFields } from '../provider-errors.js';
import type { ApprovalDecision, ApprovalRequest, LiveEvent, LiveIo, LiveProtocol, LiveSession, LiveStart, LiveTurnResult } from '../live-session.js';

/**
 * Claude Code in print mode with stream-json both ways: one user message per line in, events
 * out, each turn ending with a `result` event. The CLI prints nothing before the first input,
 * so the session id is the one given with `--session-id`. Interrupts and tool permissions are
 * `control_request`s (ours, and the CLI's under `--permission-prompt-tool stdio`), answered by a
 * `control_response` with the same `request_id`.
 */
export const claudeStreamJson: LiveProtocol = {
  argv: (start) => [
    '-p', '--input-format', 'stream-json', '--output-format', 'stream-json', '--verbose',
    // A UUID never starts with `-`; the `=` form binds it to the flag all the same.
    `--session-id=${start.newSessionId}`,
    ...modelArgs(start.model),
    ...(start.approvals === 'ask' ? ['--permission-prompt-tool', 'stdio'] : ['--dangerously-skip-permissions']),
  ],
  env: {},
  connect: (io, start) => new StreamJsonSession(io, start),
};

/** The most characters of an approval's summary. */
const SUMMARY_MAX_CHARS = 300;
const FILE_TOOLS = new Set(['Edit', 'MultiEdit', 'Write', 'NotebookEdit']);
const DENIED = 'The user denied this request.';

interface Turn {
  messages: string[];
  interrupted: boolean;
  onEvent(event: LiveEvent): void;
  resolve(result: LiveTurnResult): void;
  reject(error: Error): void;
}

class StreamJsonSession implements LiveSession {
  readonly #io: LiveIo;
  readonly #start: LiveStart;
  #turn: Turn | null = null;
  #closed: Error | null = null;
  #interrupts = 0;
  /** Pending permission requests by request id, with the input an `allow` hands back. */
  readonly #approvals = new Map<string, unknown>();
  readonly #calls = new ClaudeCalls();

  constructor(io: LiveIo, start: LiveStart) {
    this.#io = io;
    this.#start = start;
  }

  receive(line: string): void {
    const event = parseObject(line);
    if (event === null || this.#closed !== null) return;
    if (event['type'] === 'assistant') this.#assistant(event);
    else if (event['type'] === 'result') this.#result(event);
    else if (event['type'] === 'control_request') this.#controlRequest(event);
  }

  open(): Promise<string | null> {
    return this.#closed === null ? Promise.resolve(this.#start.newSessionId) : Promise.reject(this.#closed);
  }

  prompt(text: string, onEvent: (event: LiveEvent) => void): Promise<LiveTurnResult> {
    if (this.#closed !== null) return Promise.reject(this.#closed);
    return new Promise((resolve, reject) => {
      this.#turn = { messages: [], interrupted: false, onEvent, resolve, reject };
      this.#send({ type: 'user', message: { role: 'user', content: [{ type: 'text', text }] } });
    });
  }

  interrupt(): void {
    const turn = this.#turn;
    if (turn === null || this.#closed !== null) return;
    turn.interrupted = true;
    this.#interrupts += 1;
    // Its control_response does not matter: the turn ends with its `result`.
    this.#send({ type: 'control_request', request_id: `interrupt-${this.#interrupts}`, request: { subtype: 'interrupt' } });
  }

  answer(approvalId: string, decision: ApprovalDecision): void {
    if (!this.#approvals.has(approvalId) || this.#closed !== null) return;
    const input = this.#approvals.get(approvalId);
    this.#approvals.delete(approvalId);
    this.#respond(approvalId, decision, input);
  }

  dispose(error: Error): void {
    if (this.#closed !== null) return;
    this.#closed = error;
    this.#approvals.clear();
    const turn = this.#turn;
    this.#turn = null;
    turn?.reject(error);
  }

  #assistant(event: Record<string, unknown>): void {
    this.#calls.assistant(event);
    const text = assistantText(event);
    const turn = this.#turn;
    if (turn === null || text === null) return;
    turn.messages.push(text);
    turn.onEvent({ type: 'message', text });
  }

  #result(event: Record<string, unknown>): void {
    const usage = this.#calls.result(event);
    const turn = this.#turn;
    if (turn === null) return;
    this.#turn = null;
    this.#approvals.clear();
    const error = resultError(event);
    const outcome = error === null ? 'completed' : turn.interrupted ? 'interrupted' : 'failed';
    const fields = outcome === 'failed' ? claudeErrorFields(event) : null;
    turn.resolve({ outcome, messages: [...turn.messages], error: outcome === 'failed' ? error : null, usage, ...(fields === null ? {} : { errorFields: fields }) });
  }

  /** A permission request (`can_use_tool`): the turn waits until `answer`. Anything else is refused. */
  #controlRequest(event: Record<string, unknown>): void {
    const requestId = typeof event['request_id'] === 'string' ? event['request_id'] : null;
    const request = (event['request'] ?? {}) as Record<string, unknown>;
    if (requestId === null) return;
    if (request['subtype'] !== 'can_use_tool') {
      this.#send({ type: 'control_response', response: { subtype: 'error', request_id: requestId, error: `unsupported request ${String(request['subtype'])}` } });
      return;
    }
    const turn = this.#turn;
    if (turn === null) return this.#respond(requestId, 'deny', undefined);
    const tool = String(request['tool_name'] ?? 'tool');
    const approval: ApprovalRequest = { id: requestId, kind: kindOf(tool), summary: summaryOf(tool, request['input']), detail: request };
    this.#approvals.set(requestId, request['input'] ?? {});
    turn.onEvent({ type: 'approval', request: approval });
  }

  #respond(requestId: string, decision: ApprovalDecision, input: unknown): void {
    const response = decision === 'allow' ? { behavior: 'allow', updatedInput: input ?? {} } : { behavior: 'deny', message: DENIED };
    this.#send({ type: 'control_response', response: { subtype: 'success', request_id: requestId, response } });
  }

  #send(message: Record<string, unknown>): void {
    this.#io.send(JSON.stringify(message));
  }
}

function kindOf(tool: string): ApprovalRequest['kind'] {
  if (tool === 'Bash') return 'command';
  return FILE_TOOLS.has(tool) ? 'file_change' : 'tool';
}

/** One line: the command, the file, or the tool and its input. */
function summaryOf(tool: string, input: unknown): string {
  const fields = (input ?? {}) as Record<string, unknown>;
  const path = fields['file_path'] ?? fields['notebook_path'];
  let text: string;
  if (tool === 'Bash' && typeof fields['command'] === 'string') text = `run: ${fields['command']}`;
  else if (FILE_TOOLS.has(tool) && typeof path === 'string') text = `change files: ${path}`;
  else text = `${tool}: ${JSON.stringify(input ?? {})}`;
  const line = text.replace(/\s*[\r\n]+\s*/g, ' ');
  return line.length > SUMMARY_MAX_CHARS ? `${line.slice(0, SUMMARY_MAX_CHARS - 1)}…` : line;
}
