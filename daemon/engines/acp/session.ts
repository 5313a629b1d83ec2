import { RequestError, client, ndJsonStream, type ActiveSession, type ClientConnection, type RequestPermissionRequest, type RequestPermissionResponse } from '@agentclientprotocol/sdk';
import { sessionIdOf } from '../engine.js';
import type { ApprovalDecision, LiveEvent, LiveIo, LiveSession, LiveStart, LiveTurnResult } from '../live-session.js';
import { lineStreams, type LineStreams } from './line-streams.js';
import { PendingApprovals, approvalOf, permissionOutcome } from './permissions.js';
import { TurnMessages } from './turn-messages.js';
import { acpUsage } from './usage.js';

/** The protocol version this client speaks (ACP v1, what Gemini 0.61 answers). */
const PROTOCOL_VERSION = 1;

interface Turn {
  messages: TurnMessages;
  onEvent(event: LiveEvent): void;
  reject(error: Error): void;
}

/**
 * A live session over the Agent Client Protocol (`gemini --acp`, `iflow --experimental-acp`),
 * through the ACP SDK's client app. The client advertises neither file system nor terminal, so
 * the agent reads, writes and runs commands itself; a turn is `session/prompt` and ends with its
 * answer's `stopReason`. The SDK queues the session's updates and that answer in arrival order,
 * which is what lets the final message be complete when the turn ends.
 */
export class AcpSession implements LiveSession {
  readonly #start: LiveStart;
  readonly #streams: LineStreams;
  readonly #connection: ClientConnection;
  readonly #approvals = new PendingApprovals();
  #session: ActiveSession | null = null;
  #turn: Turn | null = null;
  #closed: Error | null = null;

  constructor(io: LiveIo, start: LiveStart) {
    this.#start = start;
    this.#streams = lineStreams(io);
    const app = client({ name: 'skilld' }).onRequest('session/request_permission', ({ params }) => this.#permission(params));
    this.#connection = app.connect(ndJsonStream(this.#streams.output, this.#streams.input));
  }

  receive(line: string): void {
    // The SDK answers a line that is not JSON with a parse error to the agent: a stray line the
    // engine printed is not a message, so it never reaches the SDK.
    if (line.trimStart().startsWith('{')) this.#streams.push(line);
  }

  async open(): Promise<string | null> {
    if (this.#closed !== null) throw this.#closed;
    const agent = this.#connection.agent;
    await agent.request('initialize', { protocolVersion: PROTOCOL_VERSION, clientCapabilities: {} });
    const session = await agent.buildSession({ cwd: this.#start.cwd, mcpServers: [] }).start();
    this.#session = session;
    const sessionId = sessionIdOf(session.sessionId);
    if (sessionId === null) throw new Error('the ACP agent started a session without a usable id');
    return sessionId;
  }

  prompt(text: string, onEvent: (event: LiveEvent) => void): Promise<LiveTurnResult> {
    if (this.#closed !== null) return Promise.reject(this.#closed);
    const session = this.#session;
    if (session === null) return Promise.reject(new Error('prompt before the session was opened'));
    return new Promise((resolve, reject) => {
      const turn: Turn = { messages: new TurnMessages(onEvent), onEvent, reject };
      this.#turn = turn;
      void session.prompt(text);
      this.#play(session, turn).then(
        (result) => this.#end(turn, () => resolve(result)),
        (error: Error) => this.#end(turn, () => reject(this.#closed ?? error)),
      );
    });
  }

  interrupt(): void {
    const session = this.#session;
    if (this.#turn === null || session === null || this.#closed !== null) return;
    // ACP: the client answers the turn's pending permission requests `cancelled` itself.
    this.#approvals.cancelAll();
    this.#connection.agent.notify('session/cancel', { sessionId: session.sessionId }).catch(() => undefined);
  }

  answer(approvalId: string, decision: ApprovalDecision): void {
    this.#approvals.answer(approvalId, decision);
  }

  dispose(error: Error): void {
    if (this.#closed !== null) return;
    this.#closed = error;
    this.#approvals.cancelAll();
    this.#streams.end();
    this.#connection.close(error);
    const turn = this.#turn;
    if (turn !== null) this.#end(turn, () => turn.reject(error));
  }

  /** Reads the session's updates until the prompt's answer; an error answer fails the turn, a closed connection rejects it. */
  async #play(session: ActiveSession, turn: Turn): Promise<LiveTurnResult> {
    for (;;) {
      let next;
      try {
        next = await session.nextUpdate();
      } catch (error) {
        if (this.#closed !== null) throw this.#closed;
        // Only the agent's own error answer ends the turn; a connection that broke (a failed
        // write) is no end of turn, and the turn rejects as a dead process's would.
        if (error instanceof RequestError) return turn.messages.failed(error.message, error.code);
        throw error;
      }
      if (next.kind === 'stop') return turn.messages.stopped(next.stopReason, acpUsage(next.response));
      turn.messages.update(next.update);
    }
  }

  /** A permission request: an approval event in `ask` mode; refused in `auto` mode (the agent was told not to ask), cancelled outside a turn. */
  async #permission(request: RequestPermissionRequest): Promise<RequestPermissionResponse> {
    const turn = this.#turn;
    if (turn === null || this.#closed !== null) return permissionOutcome(request.options, null);
    if (this.#start.approvals === 'auto') return permissionOutcome(request.options, 'deny');
    // The agent turns to a tool: the text so far is a message of its own. The SDK queued every
    // earlier update when it read it, and the turn reads that queue a microtask after each, while
    // this request comes through several more: by now the turn has taken in the text before it.
    turn.messages.endMessage();
    const id = this.#approvals.nextId();
    const decided = this.#approvals.wait(id);
    turn.onEvent({ type: 'approval', request: approvalOf(id, request) });
    return permissionOutcome(request.options, await decided);
  }

  #end(turn: Turn, settle: () => void): void {
    if (this.#turn === turn) this.#turn = null;
    // A permission still waiting belongs to a turn that is over.
    this.#approvals.cancelAll();
    settle();
  }
}
