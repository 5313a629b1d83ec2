#!/usr/bin/env node
import { DaemonUnreachableError, RpcCallError, RpcClient } from '../rpc/client.js';
import { checkChoices, flagOpt, parseCommandArgs, splitCommand, stringOpt, UsageError, type OptionValues } from './args.js';
import type { Command, Context, Invocation } from './command.js';
import { errorText, jsonLine } from './format.js';
import { resolveJobId } from './job-id.js';
import { socketPath } from './socket-path.js';
import { COMMANDS } from './table.js';
import { terminalText } from './terminal-text.js';
import { commandHelp, usageText } from './usage.js';
import { clientVersion } from './version.js';

const EXIT = { ok: 0, failed: 1, usage: 2, unreachable: 3 } as const;

/** Runs one command line and resolves to the exit code (README, exit codes). */
async function main(argv: string[]): Promise<number> {
  let socket = '';
  let current: Command | undefined;
  try {
    const { name, rest, help, version } = splitCommand(argv);
    if (version) return printed(`skillctl ${clientVersion()}`);
    if (name === undefined && help) return printed(usageText(COMMANDS));
    if (name === undefined) throw new UsageError('no command given');
    const command = COMMANDS.find((c) => c.name === name);
    if (command === undefined) throw new UsageError(`unknown command "${name}"`);
    current = command;
    const inv = parseCommandArgs(rest, command.options);
    if (flagOpt(inv.values, 'help')) return printed(commandHelp(command));
    checkChoices(inv.values, command.options);
    const [min, max] = command.positionals;
    if (inv.positionals.length < min || inv.positionals.length > max) throw new UsageError(`wrong number of arguments for ${name}`);
    if (command.offline === true) return await command.run(context(OFFLINE, inv.values), inv);
    socket = socketPath(stringOpt(inv.values, 'socket'));
    const client = await RpcClient.connect(socket);
    try {
      await resolveJobArg(client, command, inv);
      return await command.run(context(client, inv.values), inv);
    } finally {
      client.close();
    }
  } catch (error) {
    return report(error, socket, current);
  }
}

/** The command's job-id positional, a unique prefix replaced by the whole id (see clients/job-id.ts). */
async function resolveJobArg(client: RpcClient, command: Command, inv: Invocation): Promise<void> {
  if (command.jobArg === undefined) return;
  const given = inv.positionals[command.jobArg];
  if (given !== undefined) inv.positionals[command.jobArg] = await resolveJobId(client, given);
}

/** The client an offline command gets: any use is a bug. */
const OFFLINE = new Proxy({} as RpcClient, {
  get: () => {
    throw new Error('this command runs without the daemon');
  },
});

function context(client: RpcClient, values: OptionValues): Context {
  return {
    client,
    json: flagOpt(values, 'json'),
    print: (text) => void process.stdout.write(`${text}\n`),
    write: (text) => void process.stdout.write(text),
    warn: (text) => void process.stderr.write(`${text}\n`),
  };
}

function printed(text: string): number {
  process.stdout.write(`${text}\n`);
  return EXIT.ok;
}

function report(error: unknown, socket: string, command: Command | undefined): number {
  if (error instanceof UsageError) {
    const usage = command === undefined ? usageText(COMMANDS) : `usage: skillctl ${command.usage}\n(more: skillctl help ${command.name})`;
    process.stderr.write(`skillctl: ${terminalText(error.message)}\n${usage}\n`);
    return EXIT.usage;
  }
  if (error instanceof DaemonUnreachableError) {
    const reason = error.cause instanceof Error ? error.cause.message : error.message;
    process.stderr.write(`skillctl: cannot reach the daemon at ${socket}: ${reason}\n`);
    return EXIT.unreachable;
  }
  if (error instanceof RpcCallError) {
    // A message or its details may quote an engine or the request.
    const details = error.details === undefined ? '' : `\n  details: ${jsonLine(error.details)}`;
    process.stderr.write(`skillctl: ${errorText({ code: error.dataCode, message: error.message })}${details}\n`);
    return EXIT.failed;
  }
  process.stderr.write(`skillctl: ${terminalText(error instanceof Error ? error.message : String(error))}\n`);
  return EXIT.failed;
}

process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code === 'EPIPE') process.exit(EXIT.ok);
  throw error;
});
process.exitCode = await main(process.argv.slice(2));
