import type { PermissionOption, PermissionOptionKind, RequestPermissionRequest, RequestPermissionResponse, ToolCallUpdate } from '@agentclientprotocol/sdk';
import type { ApprovalDecision, ApprovalRequest } from '../live-session.js';

/** The longest approval summary, in characters; the whole request stays in `detail`. */
export const APPROVAL_SUMMARY_MAX_CHARS = 300;

/** What a person decides on a `session/request_permission`, as our approval request. */
export function approvalOf(id: string, request: RequestPermissionRequest): ApprovalRequest {
  const call = request.toolCall;
  const kind = kindOf(call);
  return { id, kind, summary: summaryOf(call, kind), detail: request };
}

function kindOf(call: ToolCallUpdate): ApprovalRequest['kind'] {
  switch (call.kind) {
    case 'execute':
      return 'command';
    case 'edit':
    case 'delete':
    case 'move':
      return 'file_change';
    default:
      return 'tool';
  }
}

/** One line: the tool call's title (Gemini puts the command line there), else its raw input; the files a change touches. */
function summaryOf(call: ToolCallUpdate, kind: ApprovalRequest['kind']): string {
  const input = call.rawInput === undefined || call.rawInput === null ? '' : JSON.stringify(call.rawInput);
  let text = call.title?.trim() || input || call.toolCallId;
  const paths = (call.locations ?? []).map((location) => location.path).filter((path) => !text.includes(path));
  if (kind === 'file_change' && paths.length > 0) text = `${text} (${paths.join(', ')})`;
  const line = text.replace(/\s+/g, ' ').trim();
  const chars = [...line];
  return chars.length <= APPROVAL_SUMMARY_MAX_CHARS ? line : `${chars.slice(0, APPROVAL_SUMMARY_MAX_CHARS - 1).join('')}…`;
}

/**
 * The answer to a permission request: the agent's allow-once (for `allow`) or reject-once
 * option, a reject-always one when no reject-once is offered; `cancelled` when the turn is being
 * cancelled (`null`) or no fitting option was offered. An `allow` never selects allow-always:
 * that would grant more than this one request.
 */
export function permissionOutcome(options: readonly PermissionOption[], decision: ApprovalDecision | null): RequestPermissionResponse {
  const kinds: PermissionOptionKind[] = decision === 'allow' ? ['allow_once'] : decision === 'deny' ? ['reject_once', 'reject_always'] : [];
  for (const kind of kinds) {
    const option = options.find((candidate) => candidate.kind === kind);
    if (option !== undefined) return { outcome: { outcome: 'selected', optionId: option.optionId } };
  }
  return { outcome: { outcome: 'cancelled' } };
}

/** Permission requests waiting for `answer`, by approval id. */
export class PendingApprovals {
  readonly #waiting = new Map<string, (decision: ApprovalDecision | null) => void>();
  #counter = 0;

  /** A new approval id, unique within the session. */
  nextId(): string {
    this.#counter += 1;
    return String(this.#counter);
  }

  /** Resolves with the decision given to `answer(id, …)`, or null when `cancelAll` comes first. */
  wait(id: string): Promise<ApprovalDecision | null> {
    return new Promise((resolve) => this.#waiting.set(id, resolve));
  }

  /** Answers one pending approval; an id that is not pending (answered, cancelled, unknown) is ignored. */
  answer(id: string, decision: ApprovalDecision): void {
    const resolve = this.#waiting.get(id);
    this.#waiting.delete(id);
    resolve?.(decision);
  }

  /** Answers every pending approval with null (the turn is cancelled or the session closed). */
  cancelAll(): void {
    const pending = [...this.#waiting.values()];
    this.#waiting.clear();
    for (const resolve of pending) resolve(null);
  }
}
