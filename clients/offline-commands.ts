import { stringOpt, UsageError } from './args.js';
import { SHELLS } from './choices.js';
import { arg, type Command } from './command.js';
import { json } from './format.js';
import { chooseSocket, sourceText } from './socket-path.js';
import { commandHelp, usageText } from './usage.js';
import { existsSync } from 'node:fs';

/** Commands that answer without the daemon: they never open the socket. */

/** `socket`: the socket path skillctl would use, and where it came from. */
export const socketCommand: Command = {
  name: 'socket',
  usage: 'socket',
  summary: 'print the socket path skillctl uses (and on stderr where it came from); needs no daemon',
  options: {},
  positionals: [0, 0],
  offline: true,
  examples: ['socket', 'socket --json  # {"socket": ..., "source": ..., "exists": ...}'],
  details: [
    'The path is the one every other command would connect to: --socket, else $SKILLD_SOCKET, else the per-user default ' +
      '($XDG_RUNTIME_DIR/skilld/skilld.sock, or /tmp/skilld-<uid>/skilld.sock without XDG_RUNTIME_DIR), else, when that does not exist ' +
      'and /run/skilld/skilld.sock does, the system socket. With --json, source is one of flag, SKILLD_SOCKET, runtime_dir, fallback, system.',
    'In scripts:\n' +
      '  echo \'{"jsonrpc":"2.0","id":1,"method":"daemon/ping"}\' | socat -t 30 - UNIX-CONNECT:"$(skillctl socket)"',
  ],
  run: async (ctx, inv) => {
    const choice = chooseSocket(stringOpt(inv.values, 'socket'));
    const exists = existsSync(choice.path);
    if (ctx.json) {
      ctx.print(json({ socket: choice.path, source: choice.source, exists }));
      return 0;
    }
    ctx.print(choice.path);
    ctx.warn(`${sourceText(choice)}${exists ? '' : '; no socket there now'}`);
    return 0;
  },
};

/** `completion bash|zsh|fish`: the completion script for the whole table. */
export function completionCommand(table: () => readonly Command[]): Command {
  return {
    name: 'completion',
    usage: 'completion <bash|zsh|fish>',
    summary: 'print a shell completion script for bash, zsh or fish: commands, options, their values, job ids (without job-) and skill ids',
    options: {},
    positionals: [1, 1],
    argChoices: SHELLS,
    offline: true,
    examples: ['completion bash > ~/.local/share/bash-completion/completions/skillctl', 'completion zsh > "${fpath[1]}/_skillctl"', 'completion fish > ~/.config/fish/completions/skillctl.fish'],
    details: ['Or load it in each shell: source <(skillctl completion bash) in ~/.bashrc; source <(skillctl completion zsh) in ~/.zshrc, after compinit; skillctl completion fish | source in config.fish.'],
    run: async (ctx, inv) => {
      const shell = arg(inv, 0);
      if (shell === 'bash') ctx.print((await import('./completion-bash.js')).bashCompletion(table()));
      else if (shell === 'zsh') ctx.print((await import('./completion-zsh.js')).zshCompletion(table()));
      else if (shell === 'fish') ctx.print((await import('./completion-fish.js')).fishCompletion(table()));
      else throw new UsageError(`the shell must be one of: ${SHELLS.join(', ')} (got ${JSON.stringify(shell)})`);
      return 0;
    },
  };
}

/** `help [<command>]`: the general help, or one command's. */
export function helpCommand(table: () => readonly Command[]): Command {
  return {
    name: 'help',
    usage: 'help [<command>]',
    summary: "show this help, or a command's: its options, their values and defaults, examples",
    options: {},
    positionals: [0, 1],
    get argChoices() {
      return table().map((c) => c.name);
    },
    offline: true,
    examples: ['help run', 'jobs --help  # the same as: skillctl help jobs'],
    run: async (ctx, inv) => {
      const name = inv.positionals[0];
      if (name === undefined) {
        ctx.print(usageText(table()));
        return 0;
      }
      const command = table().find((c) => c.name === name);
      if (command === undefined) throw new UsageError(`unknown command "${name}"; the commands are: ${table().map((c) => c.name).join(', ')}`);
      ctx.print(commandHelp(command));
      return 0;
    },
  };
}
