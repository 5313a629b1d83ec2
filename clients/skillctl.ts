#!/usr/bin/env node
import { DaemonUnreachableError, RpcCallError, RpcClient } from '../rpc/client.js';
import { attachCommand } from './attach.js';
import { parseCommandArgs, splitCommand, stringOpt, flagOpt, UsageError } from './args.js';
import type { Command, Context } from './command.js';
import { enginesCommand, skillsCommand, statusCommand } from './info-commands.js';
import { cancelCommand, callCommand, jobsCommand, resultCommand, showCommand } from './job-commands.js';
import { logsCommand, watchCommand } from './follow.js';
import { historyCommand, pendingCommand, replyCommand } from './interaction-commands.js';
import { runCommand } from './run.js';
import { socketPath } from './socket-path.js';
import { usageText } from './usage.js';

/** Every command, in the order the help lists them. */
const COMMANDS: readonly Command[] = [
  statusCommand,
  skillsCommand,
  enginesCommand,
  runCommand,
  attachCommand,
  jobsCommand,
  showCommand,
  pendingCommand,
  replyCommand,
  historyCommand,
  resultCommand,
  cancelCommand,
  logsCommand,
  watchCommand,
  callCommand,
];

const EXIT = { ok: 0, failed: 1, usage: 2, unreachable: 3 } as const;

/** Runs one command line and resolves to the exit code (SPEC §10). */
async function main(argv: string[]): Promise<number> {
  let socket = '';
  let current: Command | undefined;
  try {
    const { name, rest, help } = splitCommand(argv);
    if (name === 'help' || (name === undefined && help)) return printUsage();
    if (name === undefined) throw new UsageError('no command given');
    const command = COMMANDS.find((c) => c.name === name);
    if (command === undefined) throw new UsageError(`unknown command "${name}"`);
    current = command;
    const inv = parseCommandArgs(rest, command.options);
    if (flagOpt(inv.values, 'help')) return printUsage(command);
    const [min, max] = command.positionals;
    if (inv.positionals.length < min || inv.positionals.length > max) throw new UsageError(`wrong number of arguments for ${name}`);
    socket = socketPath(stringOpt(inv.values, 'socket'));
    const client = await RpcClient.connect(socket);
    try {
      return await command.run(context(client, flagOpt(inv.values, 'json')), inv);
    } finally {
      client.close();
    }
  } catch (error) {
    return report(error, socket, current);
  }
}

function context(client: RpcClient, json: boolean): Context {
  return {
    client,
    json,
    print: (text) => void process.stdout.write(`${text}\n`),
    write: (text) => void process.stdout.write(text),
    warn: (text) => void process.stderr.write(`${text}\n`),
  };
}

function printUsage(command?: Command): number {
  process.stdout.write(`${command === undefined ? usageText(COMMANDS) : `usage: skillctl ${command.usage}\n  ${command.summary}`}\n`);
  return EXIT.ok;
}

function report(error: unknown, socket: string, command: Command | undefined): number {
  if (error instanceof UsageError) {
    const usage = command === undefined ? usageText(COMMANDS) : `usage: skillctl ${command.usage}\n(skillctl help lists every command)`;
    process.stderr.write(`skillctl: ${error.message}\n${usage}\n`);
    return EXIT.usage;
  }
  if (error instanceof DaemonUnreachableError) {
    const reason = error.cause instanceof Error ? error.cause.message : error.message;
    process.stderr.write(`skillctl: cannot reach the daemon at ${socket}: ${reason}\n`);
    return EXIT.unreachable;
  }
  if (error instanceof RpcCallError) {
    const details = error.details === undefined ? '' : `\n  details: ${JSON.stringify(error.details)}`;
    process.stderr.write(`skillctl: ${error.dataCode}: ${error.message}${details}\n`);
    return EXIT.failed;
  }
  process.stderr.write(`skillctl: ${error instanceof Error ? error.message : String(error)}\n`);
  return EXIT.failed;
}

process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code === 'EPIPE') process.exit(EXIT.ok);
  throw error;
});
process.exitCode = await main(process.argv.slice(2));
