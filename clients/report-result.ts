import { colourOn, paintStatus } from './colour.js';
import type { Context } from './command.js';
import { EXIT } from './exit-codes.js';
import { errorText, json } from './format.js';
import { terminalText } from './terminal-text.js';
import { TERMINAL_STATUSES, type ResultView } from './wire.js';

/**
 * Prints a job result: the output as JSON on stdout (the whole result with `--json`), notes and
 * errors on stderr. Resolves to 0 for a succeeded job, 1 otherwise.
 */
export function reportResult(ctx: Context, result: ResultView): number {
  if (ctx.json) ctx.print(json(result));
  if (result.status === 'succeeded') {
    if (!ctx.json) ctx.print(json(result.output));
    for (const warning of result.warnings) ctx.warn(`skillctl: warning: ${terminalText(warning)}`);
    // The engine names its artifacts' files.
    if (!ctx.json) for (const artifact of result.artifacts) ctx.warn(`artifact: ${terminalText(artifact)}`);
    if (!ctx.json) for (const path of result.left_out ?? []) ctx.warn(`left out, leads outside the artifacts folder: ${terminalText(path)}`);
    return 0;
  }
  const colour = colourOn(process.stderr);
  if (!TERMINAL_STATUSES.includes(result.status)) {
    ctx.warn(`skillctl: job ${result.job_id} is ${paintStatus(result.status, result.status, colour)}; no result yet`);
    return EXIT.pending;
  }
  ctx.warn(`skillctl: ${paintStatus(result.error === null ? `job ${result.status}` : errorText(result.error), result.status, colour)}`);
  return EXIT.failed;
}
