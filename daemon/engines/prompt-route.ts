import type { EngineName } from '../model/job.js';

/**
 * The largest prompt, in UTF-8 bytes, passed as an argument. Linux refuses to start a process
 * with any argv element over 128 KiB (MAX_ARG_STRLEN, `spawn E2BIG`); this keeps a margin for
 * `--prompt=` and for the whole command line and environment.
 */
export const ARGV_PROMPT_MAX_BYTES = 100 * 1024;

/** What one CLI accepts as a turn's prompt (verified per CLI, see docs/engines.md). */
export interface PromptRules {
  /** Most characters (code points) the CLI takes as one prompt, however it gets it; null: no known bound. */
  maxChars: number | null;
  /** Most bytes the CLI reads as its prompt from a piped stdin; null: the prompt never goes that way. */
  stdinMaxBytes: number | null;
  /** Whether the CLI runs a turn on an empty prompt. */
  emptyOk: boolean;
  /** Prompts the CLI would not take verbatim as an argument (Codex reads `-` as "read stdin"). */
  argvReserved: readonly string[];
}

/** An engine as far as its prompts go (an `EngineAdapter` is one). */
export interface PromptTaker {
  readonly name: EngineName;
  readonly prompt: PromptRules;
}

/** How a prompt reaches the engine: as an argument, on stdin (then closed), or not at all and why. */
export type PromptRoute = { via: 'argv' | 'stdin' } | { via: 'refused'; reason: string };

/**
 * Chooses how `prompt` reaches `engine`: on stdin wherever the CLI reads it there and stdin is
 * free (a sticky process's stdin carries the replies), so that no prompt, and no input in it, is
 * on a command line `ps` shows every local user; else as an argument while it fits. A blank
 * prompt goes as an argument (Codex ignores a blank one on stdin): it says nothing.
 */
export function routePrompt(engine: PromptTaker, prompt: string, stdinFree: boolean): PromptRoute {
  const rules = engine.prompt;
  if (prompt === '' && !rules.emptyOk) return refused(`${engine.name} does not run on an empty prompt`);
  if (rules.maxChars !== null && prompt.length > rules.maxChars) {
    const chars = codePoints(prompt);
    if (chars > rules.maxChars) return refused(`${engine.name} takes at most ${rules.maxChars} characters of prompt; this one has ${chars}`);
  }
  const bytes = Buffer.byteLength(prompt, 'utf8');
  const blank = prompt.trim() === '';
  if (rules.stdinMaxBytes !== null && stdinFree && !blank) {
    if (bytes <= rules.stdinMaxBytes) return { via: 'stdin' };
    return refused(`${engine.name} reads at most ${rules.stdinMaxBytes} bytes of prompt on stdin; this one has ${bytes}`);
  }
  if (bytes <= ARGV_PROMPT_MAX_BYTES && !rules.argvReserved.includes(prompt)) return { via: 'argv' };
  const asArgument = `${engine.name} takes at most ${ARGV_PROMPT_MAX_BYTES} bytes of prompt as an argument; this one has ${bytes}`;
  if (rules.stdinMaxBytes === null) return refused(`${asArgument}, and ${engine.name} is not given prompts on stdin`);
  if (!stdinFree) return refused(`${asArgument}, and a sticky process's stdin carries the replies`);
  // Codex answers "No prompt provided via stdin." to a blank one.
  return refused(`${asArgument}, and a blank prompt on stdin is ignored`);
}

function refused(reason: string): PromptRoute {
  return { via: 'refused', reason };
}

/** Unicode code points (what Codex counts), without building an array of a megabyte string. */
function codePoints(text: string): number {
  let count = text.length;
  for (let i = 0; i < text.length - 1; i += 1) {
    const unit = text.charCodeAt(i);
    if (unit >= 0xd800 && unit <= 0xdbff) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        count -= 1;
        i += 1;
      }
    }
  }
  return count;
}
