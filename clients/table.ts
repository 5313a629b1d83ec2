import { ENGINE_NAMES, EXECUTION_MODES } from './choices.js';
import { withHelp, type Command } from './command.js';
import { logsCommand, watchCommand } from './follow.js';
import { daemonCommand, enginesCommand, hostsCommand, statusCommand, versionCommand } from './info-commands.js';
import { skillsCommand } from './skill-commands.js';
import { historyCommand, pendingCommand, replyCommand } from './interaction-commands.js';
import { mcpCommand } from './mcp/command.js';
import { notifyCommand } from './notify-command.js';
import { artifactCommand } from './artifact.js';
import { attachCommand } from './attach.js';
import { callCommand, cancelCommand, jobsCommand, resultCommand, showCommand } from './job-commands.js';
import { completionCommand, helpCommand, socketCommand } from './offline-commands.js';
import { rmCommand } from './remove.js';
import { retryCommand } from './retry.js';
import { runCommand } from './run.js';
import { webCommand } from './web/command.js';

/**
 * skillctl's command table: parsing, `skillctl help`, each command's `--help` and the completion
 * scripts all read it (clients/command.ts describes a command). Commands defined in their own
 * modules carry their help there; those below get theirs here with `withHelp`.
 */

const run = withHelp(runCommand, {
  summary: 'create a job and print its id; --wait follows it (on a terminal with a status line) and prints its output (exit 1 if it fails)',
  options: {
    engine: { value: 'E', description: "the engine that runs the job, one of the skill's engines; default: the daemon's default_engine where the skill runs on it, else the skill's first (skillctl skills show)", choices: ENGINE_NAMES },
    mode: { value: 'MODE', description: 'auto runs to the end unattended; interactive may stop and ask (see below); default: the skill\'s only mode, else auto', choices: EXECUTION_MODES },
    input: { value: 'k=v', description: 'one input field; the value is read as JSON when it parses (numbers, true, objects, quoted strings), else as text; k=@path is the text of a file, k=@- standard input, k=@@x the text @x' },
    param: { value: 'k=v', description: 'one parameter field, read as --input is' },
    'input-json': { value: 'JSON', description: 'the whole input as a JSON object (- reads it from standard input, @path from a file); --input fields go on top' },
    'param-json': { value: 'JSON', description: 'the whole parameter as a JSON object (- or @path as for --input-json); --param fields go on top' },
    model: { value: 'M', description: "the model the engine uses; default: the engine's own" },
    timeout: { value: 'SEC', description: "stop a turn that runs longer than SEC seconds (hard_timeout_sec); default: the daemon's hard_timeout_sec" },
    wait: { description: 'follow the job (on a terminal with a status line) and print its output as JSON (exit 1 if it fails); an interactive job stops at its first question' },
    share: { value: 'user:NAME|group:NAME', description: 'let this user or group see and act on the job too (docs/access.md); may be repeated' },
  },
  examples: [
    'run summarize-text --input text=@notes.txt --wait',
    'run summarize-text -i text=@- --wait < notes.txt',
    'run summarize-text -e codex --input-json - < input.json',
    'run summarize-text -e gemini --input-json \'{"text":"Hello"}\' --param max_words=50',
    'run plan-trip --engine gemini --mode interactive --input destination=Lisbon',
  ],
  details: [
    'Interactive runs (--mode interactive): on a terminal, without --json, run follows the job and asks each question here; type an answer, ' +
      "or an option's number to pick its value. Ctrl-D leaves the job waiting (answer later with skillctl reply).",
    'Otherwise run --wait stops at the first question, prints it (--json: the jobs/pending result) and exits 0.',
    'Ctrl-C while following stops following and leaves the job running (exit 130): come back with skillctl attach.',
  ],
});

const logs = withHelp(logsCommand, {
  options: {
    attempt: { value: 'N', description: 'which attempt (one engine run) to read; default: the current one' },
    raw: { description: "the engine's stdout as it came (its NDJSON events), not the agent's messages as text; control characters escaped as JSON escapes them" },
    stderr: { description: "print the engine's stderr instead of what the agent said" },
    follow: { description: 'keep printing as the attempt writes, until it ends' },
  },
  jobArg: 0,
  examples: ['logs 3f9c1d2', 'logs 3f9c1d2 -f', 'logs 3f9c1d2 --raw', 'logs 3f9c1d2 --stderr --attempt 1', 'logs 3f9c1d2 --json  # each jobs/logs answer as a JSON line'],
  details: [
    'What an engine prints never acts on your terminal, piped or not: line feeds and tabs are kept, and every other control character is shown as ' +
      'text instead, \\x1b for ESC (clear screen, cursor moves, titles, clipboard writes, hidden text), \\x0d for a carriage return that does not end a ' +
      'line, \\x9b for C1 controls, \\u202e for bidi overrides. --raw and --json escape them as JSON does (\\u001b): nothing is dropped.',
  ],
});

const attach = withHelp(attachCommand, {
  summary: 'rejoin a job where it stands: answer its question here, follow it to its end, print its result',
  details: [
    'On a terminal, the pending question is asked here (type an answer or an option number) and the job is followed to its end with a status line; ' +
      'then its result is printed as run --wait does. A finished job just prints its result. Without a terminal (or with --json) attach stops at ' +
      'the question and prints it, exit 0. Ctrl-C leaves the job running.',
  ],
  jobArg: 0,
  examples: ['attach 3f9c1d2', 'attach 3f9c1d2 --json  # without a terminal: stop at the question and print it'],
});

const watch = withHelp(watchCommand, {
  jobArg: 0,
  examples: ['watch 3f9c1d2', 'watch  # every job, from now on', 'watch 3f9c1d2 --json  # one job/event notification a line'],
  details: ['Without a job, the events of every job from now on, until interrupted.'],
});

const pending = withHelp(pendingCommand, {
  jobArg: 0,
  examples: ['pending 3f9c1d2', 'pending 3f9c1d2 --json'],
});

const reply = withHelp(replyCommand, {
  options: {
    interaction: { value: 'N', description: 'the interaction to answer (its id from pending or history); default: the pending one' },
    'json-response': { description: 'read the words as one JSON value and send it as it is' },
    key: { value: 'K', description: 'an idempotency key: the same reply sent again with it is taken once' },
  },
  jobArg: 0,
  examples: [
    'reply 3f9c1d2 "Three days, museums and food"',
    'reply 3f9c1d2 2  # option 2, as at the prompt',
    'reply 3f9c1d2 y  # allow a tool approval (n denies)',
    'reply 3f9c1d2 -- --help me  # a reply that starts with dashes, verbatim',
    'reply 3f9c1d2 --json-response \'{"days":3}\'',
  ],
  details: ['The reply is the words joined by spaces; a reply that starts with - goes after --.'],
});

const history = withHelp(historyCommand, {
  jobArg: 0,
  examples: ['history 3f9c1d2', 'history 3f9c1d2 --json'],
});

/** Every command, in the order the help lists them. */
export const COMMANDS: readonly Command[] = [
  statusCommand,
  versionCommand,
  daemonCommand,
  hostsCommand,
  skillsCommand,
  enginesCommand,
  run,
  attach,
  jobsCommand,
  showCommand,
  pending,
  reply,
  history,
  resultCommand,
  artifactCommand,
  retryCommand,
  cancelCommand,
  rmCommand,
  logs,
  watch,
  notifyCommand,
  callCommand,
  mcpCommand,
  webCommand,
  socketCommand,
  completionCommand(() => COMMANDS),
  helpCommand(() => COMMANDS),
];
