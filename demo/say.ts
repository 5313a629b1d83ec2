/** Bold and dim on a terminal that takes colour (hasColors honours NO_COLOR, FORCE_COLOR and TERM), plain text otherwise. */
const STYLED = process.stdout.isTTY === true && process.stdout.hasColors?.() === true;

function style(open: string, text: string): string {
  return STYLED ? `\u001b[${open}m${text}\u001b[0m` : text;
}

/** A command line as the demo shows it before running it. */
export function command(text: string): string {
  return style('1', text);
}

/** Prints a step's heading. */
export function heading(text: string): void {
  process.stdout.write(`\n${style('1;36', `== ${text}`)}\n`);
}

/** Prints lines of explanation. */
export function say(...lines: string[]): void {
  process.stdout.write(`${lines.join('\n')}\n`);
}

/** Prints a side note, dimmed: what the demo does that is not a skillctl command. */
export function aside(text: string): void {
  process.stdout.write(`${style('2', `# ${text}`)}\n`);
}
