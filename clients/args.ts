import { parseArgs, type ParseArgsConfig } from 'node:util';

/**
 * One option: the `node:util` parseArgs fields (`type`, `short`, `multiple`) and its help. Only
 * the parseArgs fields reach parseArgs: `default` here is what help shows, never filled in.
 */
export interface OptionSpec {
  readonly type: 'string' | 'boolean';
  readonly short?: string;
  readonly multiple?: boolean;
  /** What it does, for help (every option in the table has one; a test checks). */
  readonly description?: string;
  /** The value's name in help, for a string option: `--limit N`. Default: the option's name in capitals. */
  readonly value?: string;
  /** The values allowed; any other is a usage error that lists them. */
  readonly choices?: readonly string[];
  /** The value that applies when the option is absent, as help shows it. */
  readonly default?: string;
  /** The value is a skill id: completion offers the daemon's skills. */
  readonly completes?: 'skill';
}

/** A command's options, by long name. */
export type OptionSpecs = Readonly<Record<string, OptionSpec>>;

/** Parsed option values, keyed by long option name. */
export type OptionValues = Record<string, string | boolean | Array<string | boolean> | undefined>;

/** A command line skillctl cannot act on; exit code 2 with the usage on stderr. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

/** Options every command accepts, described once: the general help and each command's help show them. */
export const GLOBAL_OPTIONS = {
  socket: {
    type: 'string',
    value: 'PATH',
    description:
      'the daemon socket; default: $SKILLD_SOCKET, else the per-user socket ($XDG_RUNTIME_DIR/skilld/skilld.sock, or ' +
      '/tmp/skilld-<uid>/skilld.sock without XDG_RUNTIME_DIR), else /run/skilld/skilld.sock (systemd) when only that exists; ' +
      'skillctl socket shows which',
  },
  json: { type: 'boolean', description: 'print the RPC result as one JSON document (watch: one event per line; logs: one answer per line)' },
  help: { type: 'boolean', short: 'h', description: "show the command's help" },
} as const satisfies OptionSpecs;

/** Options only before a command: `skillctl --version`. */
export const TOP_OPTIONS = {
  version: { type: 'boolean', short: 'V', description: "print skillctl's version and exit" },
} as const satisfies OptionSpecs;

/** The parseArgs form of specs: help fields left out. */
function parseSpecs(options: OptionSpecs): NonNullable<ParseArgsConfig['options']> {
  return Object.fromEntries(
    Object.entries(options).map(([name, spec]) => [name, { type: spec.type, ...(spec.short === undefined ? {} : { short: spec.short }), ...(spec.multiple === undefined ? {} : { multiple: spec.multiple }) }]),
  );
}

/** Splits off the command name (the first positional, wherever the global options stand). */
export function splitCommand(argv: string[]): { name: string | undefined; rest: string[]; help: boolean; version: boolean } {
  const { tokens } = parseArgs({ args: argv, options: parseSpecs({ ...GLOBAL_OPTIONS, ...TOP_OPTIONS }), strict: false, allowPositionals: true, tokens: true });
  const first = tokens.find((token) => token.kind === 'positional' || token.kind === 'option-terminator');
  const before = first === undefined ? tokens : tokens.slice(0, tokens.indexOf(first));
  const help = tokens.some((token) => token.kind === 'option' && token.name === 'help');
  const version = before.some((token) => token.kind === 'option' && token.name === 'version');
  if (first === undefined || first.kind !== 'positional') return { name: undefined, rest: argv, help, version };
  return { name: first.value, rest: argv.filter((_, index) => index !== first.index), help, version };
}

/** Parses a command's own arguments together with the global options; unknown flags are usage errors. */
export function parseCommandArgs(args: string[], options: OptionSpecs): { values: OptionValues; positionals: string[] } {
  try {
    const parsed = parseArgs({ args, options: parseSpecs({ ...GLOBAL_OPTIONS, ...options }), strict: true, allowPositionals: true });
    return { values: parsed.values as OptionValues, positionals: parsed.positionals };
  } catch (error) {
    throw new UsageError((error as Error).message.replace(/\. To specify a positional.*$/s, ''), { cause: error });
  }
}

/** Refuses a value outside an option's `choices`, naming the allowed ones. */
export function checkChoices(values: OptionValues, options: OptionSpecs): void {
  for (const [name, spec] of Object.entries(options)) {
    const value = values[name];
    if (spec.choices === undefined || value === undefined) continue;
    for (const given of Array.isArray(value) ? value : [value]) {
      if (typeof given === 'string' && spec.choices.includes(given)) continue;
      throw new UsageError(`--${name} must be one of: ${spec.choices.join(', ')} (got ${JSON.stringify(given)})`);
    }
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
