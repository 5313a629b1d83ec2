import type { OptionSpec } from './args.js';

/** How many job ids the completion scripts offer (`skillctl jobs -q --limit N`). */
export const JOB_IDS_LISTED = 100;

/** A word for a shell script, in single quotes. */
export function shellQuote(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`;
}

/** Every spelling of an option: `--engine` and `-e`. */
export function spellings(name: string, spec: OptionSpec): string[] {
  return spec.short === undefined ? [`--${name}`] : [`--${name}`, `-${spec.short}`];
}
