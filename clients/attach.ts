import { arg, type Command } from './command.js';

/** `attach <job>`: rejoins a job where it stands, as `run` follows one it has just created. */
export const attachCommand: Command = {
  name: 'attach',
  usage: 'attach <job>',
  summary:
    'rejoin a job where it stands: on a terminal, its pending question is asked here (type an answer or an option number) and the job is followed to its end with a status line, then its result is printed as run --wait does; a finished job just prints its result; without a terminal (or with --json) it stops at the question and prints it, exit 0. Ctrl-C leaves the job running',
  options: {},
  positionals: [1, 1],
  run: async (ctx, inv) => (await import('./run-follow.js')).rejoin(ctx, arg(inv, 0)),
};
