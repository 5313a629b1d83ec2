import { GLOBAL_OPTIONS, TOP_OPTIONS, type OptionSpec, type OptionSpecs } from './args.js';
import type { Command } from './command.js';

/** Help lines are wrapped to this width. */
export const HELP_WIDTH = 100;
/** An option's name column is at most this wide; a longer one puts its description on the next line. */
const NAME_COLUMN_MAX = 28;

/** The exit codes, last in the general help. */
export const EXIT_CODES_TEXT = 'exit codes: 0 ok, 1 job failed or canceled or an error answer, 2 usage error, 3 daemon unreachable, 4 job not finished yet (result), 130 interrupted (Ctrl-C)';
/** What a command that takes a job id accepts (clients/job-id.ts). */
export const SHORT_IDS_TEXT = 'A job id may be shortened to any unique start of it, with or without "job-" (as git and docker do).';

/** The general help: every command with its syntax, the global options and the exit codes. */
export function usageText(commands: readonly Command[]): string {
  const lines = [
    'usage: skillctl <command> [arguments] [--socket PATH] [--json]',
    '',
    'commands:',
    ...commands.flatMap((c) => [`  ${c.usage}`, ...wrap(c.summary, '      ')]),
    '',
    'options for every command:',
    ...optionLines({ ...GLOBAL_OPTIONS, ...TOP_OPTIONS }, nameColumn({ ...GLOBAL_OPTIONS, ...TOP_OPTIONS })),
    '',
    ...wrap('skillctl help <command> (or skillctl <command> --help) shows its options, their values and examples.', ''),
    ...wrap(SHORT_IDS_TEXT, ''),
    '',
    EXIT_CODES_TEXT,
  ];
  return lines.join('\n');
}

/** One command's help: synopsis, summary, each option with its value, choices and default, the global options, details and examples. */
export function commandHelp(command: Command): string {
  const lines = [`usage: skillctl ${command.usage}`, '', ...wrap(command.summary, '')];
  // One column for both blocks of options.
  const column = nameColumn({ ...command.options, ...GLOBAL_OPTIONS });
  if (Object.keys(command.options).length > 0) lines.push('', 'options:', ...optionLines(command.options, column));
  lines.push('', 'options for every command:', ...optionLines(GLOBAL_OPTIONS, column));
  const paragraphs = [...(command.jobArg === undefined ? [] : [SHORT_IDS_TEXT]), ...(command.details ?? [])];
  // A paragraph with a line break holds command lines: printed as it is, never wrapped.
  for (const paragraph of paragraphs) lines.push('', ...(paragraph.includes('\n') ? paragraph.split('\n') : wrap(paragraph, '')));
  const examples = command.examples ?? [];
  if (examples.length > 0) lines.push('', examples.length === 1 ? 'example:' : 'examples:', ...examples.map((example) => `  skillctl ${example}`));
  return lines.join('\n');
}

/** What an option's name column shows: `-e, --engine ENGINE`. */
export function optionName(name: string, spec: OptionSpec): string {
  const short = spec.short === undefined ? '    ' : `-${spec.short}, `;
  return `${short}--${name}${spec.type === 'string' ? ` ${valueName(name, spec)}` : ''}`;
}

/** The name of an option's value in help: `value`, else the option's name in capitals. */
export function valueName(name: string, spec: OptionSpec): string {
  return spec.value ?? name.toUpperCase().replace(/-/g, '_');
}

/** An option's description with its allowed values, default and repeatability. */
export function optionDescription(spec: OptionSpec): string {
  const parts = [spec.description ?? ''];
  if (spec.choices !== undefined) parts.push(`one of: ${spec.choices.join(', ')}`);
  if (spec.default !== undefined) parts.push(`default: ${spec.default}`);
  if (spec.multiple === true) parts.push('may be repeated');
  return parts.filter((part) => part !== '').join('; ');
}

/** Where option descriptions start: after the longest name (up to NAME_COLUMN_MAX) and a gap. */
function nameColumn(options: OptionSpecs): number {
  return Math.min(NAME_COLUMN_MAX, Math.max(...Object.entries(options).map(([name, spec]) => optionName(name, spec).length))) + 4;
}

function optionLines(options: OptionSpecs, column: number): string[] {
  const entries = Object.entries(options).map(([name, spec]) => [optionName(name, spec), optionDescription(spec)] as const);
  return entries.flatMap(([left, description]) => {
    const indent = ' '.repeat(column);
    const body = wrap(description, indent);
    const head = `  ${left}`;
    if (head.length + 2 > column || body.length === 0) return [head, ...body];
    return [`${head.padEnd(column)}${(body[0] as string).slice(column)}`, ...body.slice(1)];
  });
}

/** Words wrapped to HELP_WIDTH, each line starting with `indent`. */
export function wrap(text: string, indent: string): string[] {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(/\s+/).filter((w) => w !== '')) {
    if (line !== '' && indent.length + line.length + 1 + word.length > HELP_WIDTH) {
      lines.push(`${indent}${line}`);
      line = word;
    } else {
      line = line === '' ? word : `${line} ${word}`;
    }
  }
  if (line !== '') lines.push(`${indent}${line}`);
  return lines;
}
