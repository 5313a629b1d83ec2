import { parseArgs, type ParseArgsConfig } from 'node:util';

/** Option specs in `node:util` parseArgs form. */
export type OptionSpecs = NonNullable<ParseArgsConfig['options']>;

/** Parsed option values, keyed by long option name. */
export type OptionValues = Record<string, string | boolean | Array<string | boolean> | undefined>;

/** A command line skillctl cannot act on; exit code 2 with the usage on stderr. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

/** Options every command accepts. */
export const GLOBAL_OPTIONS = {
  socket: { type: 'string' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const satisfies OptionSpecs;

/** Splits off the command name (the first positional, wherever the global options stand). */
export function splitCommand(argv: string[]): { name: string | undefined; rest: string[]; help: boolean } {
  const { tokens } = parseArgs({ args: argv, options: GLOBAL_OPTIONS, strict: false, allowPositionals: true, tokens: true });
  const help = tokens.some((token) => token.kind === 'option' && token.name === 'help');
  const first = tokens.find((token) => token.kind === 'positional' || token.kind === 'option-terminator');
  if (first === undefined || first.kind !== 'positional') return { name: undefined, rest: argv, help };
  return { name: first.value, rest: argv.filter((_, index) => index !== first.index), help };
}

/** Parses a command's own arguments together with the global options; unknown flags are usage errors. */
export function parseCommandArgs(args: string[], options: OptionSpecs): { values: OptionValues; positionals: string[] } {
  try {
    const parsed = parseArgs({ args, options: { ...GLOBAL_OPTIONS, ...options }, strict: true, allowPositionals: true });
    return { values: parsed.values as OptionValues, positionals: parsed.positionals };
  } catch (error) {
    throw new UsageError((error as Error).message.replace(/\. To specify a positional.*$/s, ''), { cause: error });
  }
}

/** A string option, or undefined when absent. */
export function stringOpt(values: OptionValues, name: string): string | undefined {
  const value = values[name];
  return typeof value === 'string' ? value : undefined;
}

/** A repeatable string option, in command-line order. */
export function listOpt(values: OptionValues, name: string): string[] {
  const value = values[name];
  return Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string') : [];
}

/** A boolean flag. */
export function flagOpt(values: OptionValues, name: string): boolean {
  return values[name] === true;
}

/** An integer option; range checks are left to the daemon, which answers INVALID_PARAMS. */
export function intOpt(values: OptionValues, name: string): number | undefined {
  const text = stringOpt(values, name);
  if (text === undefined) return undefined;
  if (!/^-?\d+$/.test(text.trim())) throw new UsageError(`--${name} needs an integer, got "${text}"`);
  return Number.parseInt(text, 10);
}

/** A value as JSON when it parses (numbers, booleans, objects), else the text itself. */
export function looseValue(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

/** `k=v` pairs into an object; values go through `looseValue`. */
export function parseAssignments(pairs: string[], flag: string): Record<string, unknown> {
  const result: Record<string, unknown> = {};
  for (const pair of pairs) {
    const at = pair.indexOf('=');
    if (at <= 0) throw new UsageError(`--${flag} needs key=value, got "${pair}"`);
    result[pair.slice(0, at)] = looseValue(pair.slice(at + 1));
  }
  return result;
}

/** JSON text that must hold an object (params, `--input-json`). */
export function parseJsonObject(text: string, what: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new UsageError(`${what} is not valid JSON: ${(error as Error).message}`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new UsageError(`${what} must be a JSON object`);
  return value as Record<string, unknown>;
}

/** The entries whose value is not undefined: optional params are left out, not sent as null. */
export function definedOnly(params: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(params).filter(([, value]) => value !== undefined));
}
