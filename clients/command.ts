import type { RpcClient } from '../rpc/client.js';
import type { OptionSpecs, OptionValues } from './args.js';

/** What a command gets to work with: the connected client, the output mode and the streams. */
export interface Context {
  readonly client: RpcClient;
  readonly json: boolean;
  /** Writes one line to stdout. */
  print(text: string): void;
  /** Writes raw text to stdout. */
  write(text: string): void;
  /** Writes one line to stderr. */
  warn(text: string): void;
}

/** A command's parsed arguments. */
export interface Invocation {
  readonly values: OptionValues;
  readonly positionals: string[];
}

/** One skillctl command: its syntax, its options and what it does; `run` resolves to the exit code. */
export interface Command {
  readonly name: string;
  readonly usage: string;
  readonly summary: string;
  readonly options: OptionSpecs;
  /** Fewest and most positionals after the command name. */
  readonly positionals: readonly [number, number];
  run(ctx: Context, inv: Invocation): Promise<number>;
}

/** The positional at `index`, which the arity check guarantees. */
export function arg(inv: Invocation, index: number): string {
  return inv.positionals[index] as string;
}
