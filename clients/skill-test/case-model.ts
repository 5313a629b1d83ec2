import type { ModelTurn, TestCase } from './case-file.js';
import type { ModelReply } from './model-replies.js';
import type { ModelRequest } from './model-request.js';
import { finalAnswer, question, readTurn } from './skill-turn.js';

/**
 * The scripted model of one case: each model request of the case's job gets the next turn of the
 * case's `model` list. Which turn is next is counted in the conversation the request carries (the
 * model's messages and tool calls after the daemon's first-turn prompt), never in the requests
 * seen: an engine resumed in a new process sends the whole conversation again, and so continues at
 * the right turn; an engine that asks again (a retry) gets the same turn again.
 */
export class CaseModel {
  readonly #case: TestCase;
  /** Requests past the end of the script: the turn (from 1) each asked for. */
  readonly overruns: number[] = [];

  constructor(testCase: TestCase) {
    this.#case = testCase;
  }

  reply(request: ModelRequest): ModelReply {
    const turn = readTurn(request);
    if (turn === null) return { text: 'This scripted model only answers the runs of skilld jobs: this request carries no first-turn prompt of the daemon.' };
    const next = this.#case.model[turn.answered];
    if (next === undefined) {
      this.overruns.push(turn.answered + 1);
      return { text: `The test case "${this.#case.name}" scripts ${this.#case.model.length} model turns, and this is turn ${turn.answered + 1}: there is nothing more to say.` };
    }
    return replyOf(next);
  }
}

/** What one scripted turn answers: a message, a shell command, a question with the daemon's hint block, or the final message with the done marker. */
export function replyOf(turn: ModelTurn): ModelReply {
  if ('say' in turn) return { text: turn.say };
  if ('run' in turn) return { toolCall: { command: turn.run } };
  if ('ask' in turn) return question('', turn.ask.prompt, turn.ask.options, turn.ask.kind);
  return finalAnswer('Done.', turn.final);
}
