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
import { didYouMean } from '../rpc/nearest.js';
import { EXIT } from './exit-codes.js';
import { ClientLink } from './link.js';
import { clientVersion } from './version.js';

/** A mistyped command: said in one line with the nearest command, not with the whole help. */
class UnknownCommandError extends UsageError {}

/** Runs one command line and resolves to the exit code (README, exit codes). */
async function main(argv: string[]): Promise<number> {
  let socket = '';
  let current: Command | undefined;
  // Known before anything is parsed: with --json, even a usage error is said in JSON.
  const json = argv.slice(0, argv.includes('--') ? argv.indexOf('--') : argv.length).includes('--json');
  try {
    const { name, rest, help, version } = splitCommand(argv);
    if (version) return printed(`skillctl ${clientVersion()}`);
    if (name === undefined && help) return printed(usageText(COMMANDS));
    if (name === undefined) throw new UsageError('no command given');
    const command = COMMANDS.find((c) => c.name === name);
    if (command === undefined) throw new UnknownCommandError(`unknown command "${name}"${didYouMean(name, COMMANDS.map((c) => c.name))}`);
    current = command;
    const inv = parseCommandArgs(rest, command.options);
    if (flagOpt(inv.values, 'help')) return printed(commandHelp(command));
    checkChoices(inv.values, command.options);
    const [min, max] = command.positionals;
    if (inv.positionals.length < min || inv.positionals.length > max) throw new UsageError(`wrong number of arguments for ${name}`);
    const offline = typeof command.offline === 'function' ? command.offline(inv) : command.offline === true;
    if (offline) return await command.run(context(OFFLINE, inv.values), inv);
    socket = socketPath(stringOpt(inv.values, 'socket'));
    const link = new ClientLink(await RpcClient.connect(socket), socket);
    try {
      await resolveJobArg(link.client, command, inv);
      return await command.run(context(link.client, inv.values, (signal) => link.reconnect(signal)), inv);
    } finally {
      link.close();
    }
  } catch (error) {
    return json ? reportJson(error, socket) : report(error, socket, current);
  }
}

/** The command's job-id positional (or positionals), a unique prefix replaced by the whole id (see clients/job-id.ts). */
async function resolveJobArg(client: RpcClient, command: Command, inv: Invocation): Promise<void> {
  if (command.jobArg === undefined) return;
  const last = command.jobArgRepeats === true ? inv.positionals.length - 1 : command.jobArg;
  for (let index = command.jobArg; index <= last; index += 1) {
    const given = inv.positionals[index];
    if (given !== undefined) inv.positionals[index] = await resolveJobId(client, given);
  }
}

/** The client an offline command gets: any use is a bug. */
const OFFLINE = new Proxy({} as RpcClient, {
  get: () => {
    throw new Error('this command runs without the daemon');
  },
});

function context(client: RpcClient, values: OptionValues, reconnect: Context['reconnect'] = () => Promise.resolve(false)): Context {
  return {
    client,
    reconnect,
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
    const usage = error instanceof UnknownCommandError ? '(the commands: skillctl help)' : command === undefined ? usageText(COMMANDS) : `usage: skillctl ${command.usage}\n(more: skillctl help ${command.name})`;
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

/**
 * An error with `--json`: one JSON line on stderr, `{"error": {code, message, details?}}`, with the
 * daemon's code for an error answer, and USAGE_ERROR, DAEMON_UNREACHABLE or CLIENT_ERROR for the
 * client's own; the exit code is the same as without `--json`.
 */
function reportJson(error: unknown, socket: string): number {
  const said = (code: string, message: string, exit: number, details?: unknown): number => {
    process.stderr.write(`${JSON.stringify({ error: { code, message, ...(details === undefined ? {} : { details }) } })}\n`);
    return exit;
  };
  if (error instanceof UsageError) return said('USAGE_ERROR', error.message, EXIT.usage);
  if (error instanceof DaemonUnreachableError) {
    const reason = error.cause instanceof Error ? error.cause.message : error.message;
    return said('DAEMON_UNREACHABLE', `cannot reach the daemon at ${socket}: ${reason}`, EXIT.unreachable, { socket });
  }
  if (error instanceof RpcCallError) return said(error.dataCode, error.message, EXIT.failed, error.details);
  return said('CLIENT_ERROR', error instanceof Error ? error.message : String(error), EXIT.failed);
}

process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code === 'EPIPE') process.exit(EXIT.ok);
  throw error;
});
process.exitCode = await main(process.argv.slice(2));
