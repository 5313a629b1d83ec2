/** True when both stdin and stdout are terminals: a person can answer questions. */
export function onTerminal(): boolean {
  return process.stdin.isTTY === true && process.stdout.isTTY === true;
}
