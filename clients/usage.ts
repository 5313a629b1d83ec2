import type { Command } from './command.js';

/** The help text: every command with its syntax, the global options and the exit codes. */
export function usageText(commands: readonly Command[]): string {
  const lines = [
    'usage: skillctl <command> [arguments] [--socket PATH] [--json]',
    '',
    'commands:',
    ...commands.flatMap((c) => [`  ${c.usage}`, `      ${c.summary}`]),
    '  help',
    '      show this text',
    '',
    'options for every command:',
    '  --socket PATH   the daemon socket; default $SKILLD_SOCKET, else $XDG_RUNTIME_DIR/skilld/skilld.sock,',
    '                  else /tmp/skilld-<uid>/skilld.sock',
    '  --json          print the RPC result as one JSON document (watch: one event per line)',
    '  -h, --help      show the usage',
    '',
    'interactive runs (run --mode interactive):',
    '  on a terminal, without --json, run follows the job and asks each question here; type an answer, or an',
    '  option\'s number to pick its value. Ctrl-D leaves the job waiting (answer later with skillctl reply).',
    '  Otherwise run --wait stops at the first question, prints it (--json: the jobs/pending result) and exits 0.',
    '  reply sends its words joined by spaces; a reply that starts with - goes after --: skillctl reply JOB -- --help me',
    '',
    'exit codes: 0 ok, 1 job failed or canceled or an error answer, 2 usage error, 3 daemon unreachable',
  ];
  return lines.join('\n');
}
