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
    'exit codes: 0 ok, 1 job failed or canceled or an error answer, 2 usage error, 3 daemon unreachable',
  ];
  return lines.join('\n');
}
