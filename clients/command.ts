import type { RpcClient } from '../rpc/client.js';
import type { OptionSpecs, OptionValues } from './args.js';

/**
 * The command table (clients/table.ts) is the one source for parsing, `skillctl help`, each
 * command's `--help` and shell completion. A command is a plain object:
 *
 *   export const showCommand: Command = {
 *     name: 'show',
 *     usage: 'show <job>',                       // the synopsis after "skillctl "
 *     summary: 'show one job',                   // one line, in the command list
 *     options: { wide: { type: 'boolean', short: 'w', description: 'every field' } },
 *     positionals: [1, 1],                       // fewest and most
 *     jobArg: 0,                                 // positional 0 is a job id: a unique prefix is resolved first
 *     examples: ['show job-3f9c1d2e4b-0mhx2k9ab'],
 *     run: async (ctx, inv) => { ... },          // resolves to the exit code
 *   };
 *
 * Options are `node:util` parseArgs specs (`type`, `short`, `multiple`) plus help: `description`,
 * `value` (the value's name), `choices` (checked before the command runs: anything else is a
 * usage error naming them) and `default` (shown only; the daemon or the command applies it).
 * The global options (`--socket`, `--json`, `--help`) are in args.ts and are not repeated here.
 * A command from elsewhere can get its help text in the table with `withHelp`.
 */

/** What a command gets to work with: the connected client, the output mode and the streams. */
export interface Context {
  /** Connected to the daemon; an `offline` command gets one that throws when used. */
  readonly client: RpcClient;
  readonly json: boolean;
  /** Writes one line to stdout. */
  print(text: string): void;
  /** Writes raw text, or bytes as they are, to stdout. */
  write(text: string | Uint8Array): void;
  /** Writes one line to stderr. */
  warn(text: string): void;
  /**
   * After the daemon went away (it restarted): connects again, so that `client` works on; false
   * when `signal` aborts first. Throws DaemonUnreachableError when the daemon does not come back.
   */
  reconnect(signal?: AbortSignal): Promise<boolean>;
}

/** A command's parsed arguments. */
export interface Invocation {
  readonly values: OptionValues;
  readonly positionals: string[];
}

/** One skillctl command: its syntax, its options and what it does; `run` resolves to the exit code. */
export interface Command {
  readonly name: string;
  /** The synopsis after `skillctl `: the name, the positionals and every option (a test checks). */
  readonly usage: string;
  /** One line, shown in the command list and atop the command's help. */
  readonly summary: string;
  readonly options: OptionSpecs;
  /** Fewest and most positionals after the command name. */
  readonly positionals: readonly [number, number];
  /** Example command lines after `skillctl `; a `  # ...` tail is a comment. */
  readonly examples?: readonly string[];
  /** More help, one paragraph per entry, shown after the options; one with a line break is printed as it is (command lines). */
  readonly details?: readonly string[];
  /** Which positional is a job id: a unique prefix of one (with or without `job-`) is replaced by the whole id before `run`. */
  readonly jobArg?: number;
  /** Every positional from `jobArg` on is a job id (`rm a b c`): each is resolved, and completion offers job ids for each. */
  readonly jobArgRepeats?: boolean;
  /** Which positional is a skill id (completion offers the daemon's skills). */
  readonly skillArg?: number;
  /** The values the first positional takes (help and completion); others are the command's to refuse. */
  readonly argChoices?: readonly string[];
  /** Runs without the daemon: no socket is opened (a function: for these arguments). */
  readonly offline?: boolean | ((inv: Invocation) => boolean);
  run(ctx: Context, inv: Invocation): Promise<number>;
}

/** The help parts a command may lack: option descriptions, value names, choices, examples. */
export interface CommandHelp {
  readonly summary?: string;
  readonly options?: Readonly<Record<string, Omit<OptionSpecs[string], 'type' | 'short' | 'multiple'>>>;
  readonly examples?: readonly string[];
  readonly details?: readonly string[];
  readonly jobArg?: number;
  readonly argChoices?: readonly string[];
}

/**
 * The command with help added: each option's entry is merged into its spec. An entry for an
 * option the command does not have is a mistake in the table, thrown at once.
 */
export function withHelp(command: Command, help: CommandHelp): Command {
  const { options: extra = {}, ...rest } = help;
  for (const name of Object.keys(extra)) if (!(name in command.options)) throw new Error(`help for ${command.name} names an unknown option --${name}`);
  const options = Object.fromEntries(Object.entries(command.options).map(([name, spec]) => [name, { ...spec, ...extra[name] }]));
  return { ...command, ...rest, options };
}

/** The positional at `index`, which the arity check guarantees. */
export function arg(inv: Invocation, index: number): string {
  return inv.positionals[index] as string;
}
