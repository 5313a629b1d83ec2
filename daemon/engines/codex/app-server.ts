import { JSONRPCClient, JSONRPCServer, JSONRPCServerAndClient } from 'json-rpc-2.0';
import { NO_USAGE, addUsage, tokenCount, type Usage } from '../../model/usage.js';
import { sessionIdOf } from '../engine.js';
import { fieldsOf } from '../reported-usage.js';
import { codexErrorFields } from '../provider-errors.js';
import { type ApprovalDecision, type ApprovalRequest, type LiveEvent, type LiveIo, type LiveProtocol, type LiveSession, type LiveStart, type LiveTurnResult } from '../live-session.js';

/**
 * `codex app-server`: JSON-RPC over stdio, one object per line, without the `"jsonrpc"` member
 * (it accepts one; it never sends one). A thread is the session; each turn is `turn/start` and
 * ends with the `turn/completed` notification. Approvals are requests from the server, whose ids
 * start at 0 and overlap ours (a message with `method` is a request to us).
 */
export const codexAppServer: LiveProtocol = {
  argv: () => ['app-server'],
  env: {},
  connect: (io, start) => new AppServerSession(io, start),
};

const CLIENT_INFO = { name: 'skilld', version: '1' };

interface Turn {
  id: string | null;
  messages: string[];
  usage: Usage | null;
  onEvent(event: LiveEvent): void;
  resolve(result: LiveTurnResult): void;
  reject(error: Error): void;
}

interface TurnView {
  id?: string;
  status?: string;
  error?: { message?: string; codexErrorInfo?: unknown } | null;
}

class AppServerSession implements LiveSession {
  readonly #peer: JSONRPCServerAndClient;
  readonly #start: LiveStart;
  #threadId: string | null = null;
  #turn: Turn | null = null;
  #closed: Error | null = null;
  readonly #approvals = new Map<string, (decision: ApprovalDecision) => void>();
  /** Items seen in this turn, by id: a file-change approval names only its item. */
  readonly #items = new Map<string, Record<string, unknown>>();
  /** Each thread's running token total, as its last `thread/tokenUsage/updated` reported it. */
  readonly #totals = new Map<string, Usage>();

  constructor(io: LiveIo, start: LiveStart) {
    this.#start = start;
    const server = new JSONRPCServer({ errorListener: () => undefined });
    const client = new JSONRPCClient((request) => io.send(JSON.stringify(request)));
    this.#peer = new JSONRPCServerAndClient(server, client, { errorListener: () => undefined });
    this.#peer.addMethod('item/started', (params) => this.#itemStarted(params as { item?: Record<string, unknown> }));
    this.#peer.addMethod('item/completed', (params) => this.#itemCompleted(params as { item?: Record<string, unknown> }));
    this.#peer.addMethod('turn/completed', (params) => this.#turnCompleted((params as { turn?: TurnView }).turn ?? {}));
    this.#peer.addMethod('thread/tokenUsage/updated', (params) => this.#tokenUsage(fieldsOf(params)));
    this.#peer.addMethod('item/commandExecution/requestApproval', (params) => this.#askApproval('command', params as Record<string, unknown>));
    this.#peer.addMethod('item/fileChange/requestApproval', (params) => this.#askApproval('file_change', params as Record<string, unknown>));
  }

  receive(line: string): void {
    let message: unknown;
    try {
      message = JSON.parse(line);
    } catch {
      return; // not a protocol message (a stray line): nothing to do with it
    }
    if (typeof message !== 'object' || message === null || Array.isArray(message)) return;
    void this.#peer.receiveAndSend({ jsonrpc: '2.0', ...message }, undefined, undefined);
  }

  async open(): Promise<string | null> {
    await this.#request('initialize', { clientInfo: CLIENT_INFO, capabilities: { experimentalApi: false } });
    this.#peer.notify('initialized', {}, undefined);
    const approvalPolicy = this.#start.approvals === 'ask' ? 'untrusted' : 'never';
    const model = this.#start.model === null ? {} : { model: this.#start.model };
    const result = (await this.#request('thread/start', { cwd: this.#start.cwd, approvalPolicy, sandbox: 'danger-full-access', ...model })) as { thread?: { id?: unknown } };
    this.#threadId = sessionIdOf(result.thread?.id);
    if (this.#threadId === null) throw new Error('codex app-server started a thread without a usable id');
    return this.#threadId;
  }

  prompt(text: string, onEvent: (event: LiveEvent) => void): Promise<LiveTurnResult> {
    if (this.#closed !== null) return Promise.reject(this.#closed);
    return new Promise((resolve, reject) => {
      const turn: Turn = { id: null, messages: [], usage: null, onEvent, resolve, reject };
      this.#turn = turn;
      this.#items.clear();
      this.#request('turn/start', { threadId: this.#threadId, input: [{ type: 'text', text, text_elements: [] }] }).then(
        (result) => (turn.id ??= ((result as { turn?: TurnView }).turn?.id ?? null)),
        (error: Error) => this.#endTurn(turn, () => reject(error)),
      );
    });
  }

  interrupt(): void {
    const turn = this.#turn;
    if (turn === null || turn.id === null || this.#closed !== null) return;
    // The answer does not matter: `turn/completed` with status `interrupted` ends the turn.
    void this.#request('turn/interrupt', { threadId: this.#threadId, turnId: turn.id }).catch(() => undefined);
  }

  answer(approvalId: string, decision: ApprovalDecision): void {
    const resolve = this.#approvals.get(approvalId);
    this.#approvals.delete(approvalId);
    resolve?.(decision);
  }

  dispose(error: Error): void {
    if (this.#closed !== null) return;
    this.#closed = error;
    this.#peer.rejectAllPendingRequests(error.message);
    for (const resolve of this.#approvals.values()) resolve('deny');
    this.#approvals.clear();
    const turn = this.#turn;
    if (turn !== null) this.#endTurn(turn, () => turn.reject(error));
  }

  #request(method: string, params: Record<string, unknown>): Promise<unknown> {
    if (this.#closed !== null) return Promise.reject(this.#closed);
    return Promise.resolve(this.#peer.request(method, params, undefined));
  }

  #itemStarted(params: { item?: Record<string, unknown> }): void {
    const id = params.item?.['id'];
    if (typeof id === 'string' && params.item !== undefined) this.#items.set(id, params.item);
  }

  #itemCompleted(params: { item?: Record<string, unknown> }): void {
    const item = params.item;
    const turn = this.#turn;
    if (turn === null || item?.['type'] !== 'agentMessage' || typeof item['text'] !== 'string') return;
    turn.messages.push(item['text']);
    turn.onEvent({ type: 'message', text: item['text'] });
  }

  #turnCompleted(view: TurnView): void {
    const turn = this.#turn;
    if (turn === null || (turn.id !== null && view.id !== undefined && view.id !== turn.id)) return;
    const outcome = view.status === 'completed' ? 'completed' : view.status === 'interrupted' ? 'interrupted' : 'failed';
    const error = outcome === 'failed' ? (view.error?.message ?? `turn ended with status ${String(view.status)}`) : null;
    const fields = outcome === 'failed' ? codexErrorFields(view.error?.codexErrorInfo) : null;
    this.#endTurn(turn, () => turn.resolve({ outcome, messages: [...turn.messages], error, usage: turn.usage, ...(fields === null ? {} : { errorFields: fields }) }));
  }

  /**
   * A thread's token usage: `total` runs from the thread's start (and is sent again, unchanged,
   * when only the rate limits changed), `last` is the latest model call's. What the total grew by
   * is the turn in flight's, one model call per report that grew it; a subagent's thread counts
   * toward the turn that started it. A count that went missing or down counts nothing and keeps
   * the total where it was.
   */
  #tokenUsage(params: Record<string, unknown>): void {
    const total = fieldsOf(params['tokenUsage'])['total'];
    if (typeof total !== 'object' || total === null) return;
    const thread = typeof params['threadId'] === 'string' ? params['threadId'] : '';
    const counts = fieldsOf(total);
    const before = this.#totals.get(thread) ?? NO_USAGE;
    const grown: Usage = {
      input_tokens: Math.max(0, tokenCount(counts['inputTokens']) - before.input_tokens),
      output_tokens: Math.max(0, tokenCount(counts['outputTokens']) - before.output_tokens),
      cached_input_tokens: Math.max(0, tokenCount(counts['cachedInputTokens']) - before.cached_input_tokens),
      requests: 1,
    };
    this.#totals.set(thread, addUsage(before, { ...grown, requests: 0 }));
    const turn = this.#turn;
    if (turn !== null && grown.input_tokens + grown.output_tokens > 0) turn.usage = addUsage(turn.usage, grown);
  }

  /** An approval request of the server: the turn waits until `answer`. */
  #askApproval(kind: ApprovalRequest['kind'], params: Record<string, unknown>): Promise<{ decision: 'accept' | 'decline' }> {
    const turn = this.#turn;
    if (turn === null || this.#closed !== null) return Promise.resolve({ decision: 'decline' });
    const itemId = typeof params['itemId'] === 'string' ? params['itemId'] : `approval-${this.#approvals.size + 1}`;
    const request: ApprovalRequest = { id: itemId, kind, summary: summaryOf(kind, params, this.#items.get(itemId)), detail: params };
    return new Promise((resolve) => {
      this.#approvals.set(request.id, (decision) => resolve({ decision: decision === 'allow' ? 'accept' : 'decline' }));
      turn.onEvent({ type: 'approval', request });
    });
  }

  #endTurn(turn: Turn, settle: () => void): void {
    if (this.#turn === turn) this.#turn = null;
    settle();
  }
}

function summaryOf(kind: ApprovalRequest['kind'], params: Record<string, unknown>, item: Record<string, unknown> | undefined): string {
  if (kind === 'command' && typeof params['command'] === 'string') return `run: ${params['command']}`;
  const changes = item?.['changes'];
  const paths = Array.isArray(changes) ? changes.map((change) => String((change as { path?: unknown }).path ?? '?')) : [];
  const reason = typeof params['reason'] === 'string' ? ` (${params['reason']})` : '';
  return `change files: ${paths.length > 0 ? paths.join(', ') : 'unnamed'}${reason}`;
}

