import t from 'tap';
import { checkChoices, GLOBAL_OPTIONS, parseCommandArgs, splitCommand, UsageError, type OptionSpecs } from '../../clients/args.js';
import { ENGINE_NAMES, EXECUTION_MODES, JOB_STATUSES } from '../../clients/choices.js';
import { withHelp, type Command } from '../../clients/command.js';
import { COMMANDS } from '../../clients/table.js';
import { commandHelp, optionDescription, usageText, wrap, HELP_WIDTH } from '../../clients/usage.js';
import * as daemonJob from '../../daemon/model/job.js';
import { JOB_STATUSES as DAEMON_STATUSES } from '../../daemon/model/states.js';

/** Help text on one line, so that a wrapped description can be found whole. */
const flat = (text: string): string => text.replace(/\s+/g, ' ');
const byName = (name: string): Command => {
  const command = COMMANDS.find((c) => c.name === name);
  if (command === undefined) throw new Error(`no command ${name}`);
  return command;
};

t.test('every command has a summary, examples of itself and a description for every option, and its synopsis names every option', async (t) => {
  const names = COMMANDS.map((c) => c.name);
  t.same([...new Set(names)], names, 'no name twice');
  for (const command of COMMANDS) {
    t.ok(command.summary.length > 0, `${command.name}: summary`);
    t.ok((command.examples ?? []).length > 0, `${command.name}: at least one example`);
    for (const example of command.examples ?? []) t.ok(names.includes(example.split(' ')[0] as string), `${command.name}: "${example}" runs a command of the table`);
    t.match(command.usage, new RegExp(`^${command.name}\\b`), `${command.name}: the synopsis starts with the name`);
    for (const [name, spec] of Object.entries(command.options)) {
      t.ok((spec.description ?? '').length > 0, `${command.name} --${name}: described`);
      t.match(command.usage, `--${name}`, `${command.name}: the synopsis names --${name}`);
      t.notOk(name in GLOBAL_OPTIONS, `${command.name} --${name} is not a global option again`);
    }
    if (command.jobArg !== undefined) t.ok(command.jobArg < command.positionals[1], `${command.name}: the job id is one of its positionals`);
  }
  for (const spec of Object.values(GLOBAL_OPTIONS)) t.ok(spec.description.length > 0);
});

t.test("the option choices are the daemon's values", async (t) => {
  t.same(JOB_STATUSES, DAEMON_STATUSES);
  t.same(EXECUTION_MODES, daemonJob.EXECUTION_MODES);
  t.same(ENGINE_NAMES, daemonJob.ENGINE_NAMES);
  t.same(byName('jobs').options['status']?.choices, JOB_STATUSES);
  t.same(byName('run').options['mode']?.choices, EXECUTION_MODES);
  t.same(byName('run').options['engine']?.choices, ENGINE_NAMES);
});

t.test("a command's help: synopsis, summary, every option with its value, choices and default, the global options, examples", async (t) => {
  const run = byName('run');
  const help = commandHelp(run);
  t.match(help, /^usage: skillctl run <skill> \[--engine E\] /);
  t.match(flat(help), flat(run.summary));
  for (const [name, spec] of Object.entries(run.options)) {
    t.match(help, new RegExp(`^ {2}(-\\w, )? *--${name}\\b`, 'm'), `--${name} has a line`);
    t.match(flat(help), flat(optionDescription(spec)), `--${name}: its description, choices and default`);
  }
  t.match(help, /^ {2}-e, --engine E {2,}the engine/m, 'the short form and the value name');
  t.match(flat(help), 'one of: auto, interactive');
  t.match(flat(help), "default: the skill's only mode, else auto");
  t.match(flat(help), 'one input field; the value is read as JSON when it parses');
  t.match(flat(help), 'may be repeated');
  t.match(help, /^options for every command:\n {6}--socket PATH/m);
  t.match(help, /^examples:\n {2}skillctl run /m);
  t.match(flat(help), 'Interactive runs (--mode interactive)', 'the details the general help used to point to');
  for (const line of help.split('\n')) if (!line.startsWith('usage:') && !line.startsWith('  skillctl ')) t.ok(line.length <= HELP_WIDTH, `fits: ${line}`);
});

t.test('help for a command that takes a job id says short ids do; one without options has no options section', async (t) => {
  const show = commandHelp(byName('show'));
  t.match(show, 'A job id may be shortened to any unique start of it');
  t.notMatch(show, /^options:$/m);
  t.match(show, /^example(s)?:$/m);
  t.notMatch(commandHelp(byName('status')), 'A job id may be shortened');
});

t.test('a details paragraph with a line break is printed as it is: a command line stays whole', async (t) => {
  t.match(commandHelp(byName('socket')), /^In scripts:\n {2}echo .* \| socat -t 30 - UNIX-CONNECT:"\$\(skillctl socket\)"$/m);
});

t.test('the general help lists every command and the global options once', async (t) => {
  const help = usageText(COMMANDS);
  for (const command of COMMANDS) t.match(help, new RegExp(`^ {2}${command.name}\\b`, 'm'));
  t.match(help, /^ {2}-V, --version/m);
  t.equal(help.match(/--socket PATH {2}/g)?.length, 1);
  t.match(help, 'skillctl help <command>');
  t.match(help, /^exit codes: /m);
});

t.test('choices: a value outside them is a usage error listing them', async (t) => {
  const options: OptionSpecs = { status: { type: 'string', choices: ['a', 'b'] }, many: { type: 'string', multiple: true, choices: ['x'] }, free: { type: 'string' } };
  t.doesNotThrow(() => checkChoices({ status: 'a', many: ['x', 'x'], free: 'anything' }, options));
  t.doesNotThrow(() => checkChoices({}, options));
  t.throws(() => checkChoices({ status: 'bogus' }, options), new UsageError('--status must be one of: a, b (got "bogus")'));
  t.throws(() => checkChoices({ many: ['x', 'y'] }, options), new UsageError('--many must be one of: x (got "y")'));
});

t.test('parsing: help fields never reach parseArgs (a default is not filled in); unknown flags are usage errors', async (t) => {
  const options: OptionSpecs = { limit: { type: 'string', default: '50', description: 'd' }, quiet: { type: 'boolean', short: 'q' } };
  t.same(parseCommandArgs(['-q', 'x'], options), { values: { quiet: true }, positionals: ['x'] });
  t.throws(() => parseCommandArgs(['--nope'], options), UsageError);
});

t.test('splitCommand: the name wherever global options stand; --version and -V only before it', async (t) => {
  t.match(splitCommand(['--socket', '/s', 'jobs', '--json']), { name: 'jobs', rest: ['--socket', '/s', '--json'], help: false, version: false });
  t.match(splitCommand(['--version']), { name: undefined, version: true });
  t.match(splitCommand(['-V']), { version: true });
  t.match(splitCommand(['reply', 'j', '--', '--version', '--help']), { name: 'reply', help: false, version: false });
  t.match(splitCommand(['run', '-h']), { name: 'run', help: true });
});

t.test('withHelp adds help to a command from elsewhere; help for a missing option is a mistake', async (t) => {
  const bare: Command = { name: 'x', usage: 'x [--y N]', summary: 's', options: { y: { type: 'string' } }, positionals: [0, 0], run: async () => 7 };
  const helped = withHelp(bare, { options: { y: { value: 'N', description: 'why', choices: ['1'] } }, examples: ['x --y 1'], jobArg: 0 });
  t.same(helped.options, { y: { type: 'string', value: 'N', description: 'why', choices: ['1'] } });
  t.same(helped.examples, ['x --y 1']);
  t.equal(helped.jobArg, 0);
  t.equal(await helped.run({} as never, { values: {}, positionals: [] }), 7);
  t.throws(() => withHelp(bare, { options: { z: { description: 'no such option' } } }), /unknown option --z/);
});

t.test('wrap keeps words whole and lines within the width', async (t) => {
  const text = Array.from({ length: 60 }, (_, i) => `word${i}`).join(' ');
  const lines = wrap(text, '    ');
  t.ok(lines.length > 1);
  for (const line of lines) t.ok(line.length <= HELP_WIDTH && line.startsWith('    '));
  t.equal(lines.join(' ').replace(/\s+/g, ' ').trim(), text);
  t.same(wrap('', '  '), []);
});
