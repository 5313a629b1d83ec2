import t from 'tap';
import { execFileSync } from 'node:child_process';
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bashCompletion } from '../../clients/completion-bash.js';
import { fishCompletion } from '../../clients/completion-fish.js';
import { zshCompletion } from '../../clients/completion-zsh.js';
import { COMMANDS } from '../../clients/table.js';
import { hasTool } from '../helpers/tools.js';

const dir = await mkdtemp(join(tmpdir(), 'skillctl-completion-'));
t.teardown(() => rm(dir, { recursive: true, force: true }));
const script = join(dir, 'skillctl.bash');
await writeFile(script, bashCompletion(COMMANDS));
// A stand-in skillctl on the PATH for the job ids: it records its arguments.
const bin = join(dir, 'bin');
await mkdir(bin);
await writeFile(
  join(bin, 'skillctl'),
  `#!/bin/sh\necho "$@" > ${join(dir, 'args')}\ncase "$1" in skills) printf 'echo-auto\\necho-both\\n' ;; *) printf 'job-0mbdz1c00-1111111111\\njob-0mbdz1c99-2222222222\\n' ;; esac\n`,
);
/** What the completions offer for job ids: without "job-", as skillctl takes them. */
const SHORT_IDS = ['0mbdz1c00-1111111111', '0mbdz1c99-2222222222'];
await chmod(join(bin, 'skillctl'), 0o755);

const quote = (word: string): string => `'${word.replace(/'/g, `'\\''`)}'`;

/** What bash offers for the last of `words` (or for word `cword`), as the real completion would. */
function complete(words: string[], cword = words.length - 1): string[] {
  const program = `source ${quote(script)}; COMP_WORDS=(${words.map(quote).join(' ')}); COMP_CWORD=${cword}; _skillctl; printf '%s\\n' "\${COMPREPLY[@]}"`;
  const out = execFileSync('bash', ['--norc', '--noprofile', '-c', program], { env: { PATH: `${bin}:${process.env['PATH'] ?? ''}`, HOME: dir }, encoding: 'utf8' });
  return out.split('\n').filter((line) => line !== '').sort();
}

t.test('bash: commands, then each command\'s options, their choices, argument choices', async (t) => {
  t.same(complete(['skillctl', '']), COMMANDS.map((c) => c.name).sort());
  t.same(complete(['skillctl', 'jo']), ['jobs']);
  t.same(complete(['skillctl', 're']), ['reply', 'result', 'retry']);
  t.same(complete(['skillctl', '--socket', '/s', 'sh']), ['show'], 'a global option and its value before the command');
  t.same(complete(['skillctl', '-']), ['--help', '--json', '--socket', '--version', '-V', '-h']);
  t.same(complete(['skillctl', 'jobs', '--']), ['--before', '--dry-run', '--force', '--help', '--json', '--limit', '--older-than', '--quiet', '--skill', '--socket', '--status']);
  t.same(complete(['skillctl', 'jobs', '']), ['prune'], 'its verb');
  t.same(complete(['skillctl', 'jobs', '--status', '']), ['canceled', 'failed', 'queued', 'running', 'succeeded', 'waiting_user']);
  t.same(complete(['skillctl', 'jobs', '--status', 'f']), ['failed']);
  t.same(complete(['skillctl', 'jobs', '--status', '=', 'w']), ['waiting_user'], '--status=w, as bash splits it');
  t.same(complete(['skillctl', 'jobs', '--status', 'failed', '--li']), ['--limit']);
  t.same(complete(['skillctl', 'run', 'echo', '-e', '']), ['claude', 'codex', 'gemini', 'iflow']);
  t.same(complete(['skillctl', 'run', 'echo', '--engine', 'codex', '--mode', 'i']), ['interactive']);
  t.same(complete(['skillctl', 'run', 'echo', '--input', '']), [], 'a value without choices: nothing to offer');
  t.same(complete(['skillctl', 'completion', '']), ['bash', 'fish', 'zsh']);
  t.same(complete(['skillctl', 'help', 'ru']), ['run']);
  t.same(complete(['skillctl', 'skills', '']), ['new', 'show', 'test', 'validate']);
  t.same(complete(['skillctl', 'status', '']), [], 'no arguments');
});

t.test('bash: job ids where a command takes one, from skillctl jobs -q (with the --socket given), without job- unless it is typed; skill ids after run and --skill', async (t) => {
  const ids = SHORT_IDS;
  t.same(complete(['skillctl', 'show', '']), ids);
  t.same(complete(['skillctl', 'show', '0mbdz1c0']), [ids[0]]);
  t.same(complete(['skillctl', 'cancel', 'job-0mbdz1c9']), ['job-0mbdz1c99-2222222222'], 'the whole id when job- is typed');
  t.match(await readFile(join(dir, 'args'), 'utf8'), /^jobs -q --limit \d+\n$/);
  t.same(complete(['skillctl', '--socket', '/s/x.sock', 'logs', '-f', '']), ids, 'after a flag');
  t.match(await readFile(join(dir, 'args'), 'utf8'), 'jobs -q --limit 100 --socket /s/x.sock');
  t.same(complete(['skillctl', 'logs', '--attempt', '2', '']), ids, "after an option's value");
  t.same(complete(['skillctl', 'reply', 'job-0mbdz1c00-1111111111', '']), [], 'the reply text is not a job id');
  t.same(complete(['skillctl', 'show', 'x', '']), [], 'one job only');
  t.same(complete(['skillctl', 'rm', 'x', '--force', '']), ids, 'rm takes job ids, one after another');
  t.same(complete(['skillctl', 'run', '']), ['echo-auto', 'echo-both']);
  t.match(await readFile(join(dir, 'args'), 'utf8'), /^skills -q\n$/);
  t.same(complete(['skillctl', 'jobs', '--skill', 'echo-b']), ['echo-both']);
  t.same(complete(['skillctl', 'run', 'echo-auto', '']), [], 'one skill only');
});

t.test('bash: --socket completes file names', async (t) => {
  await writeFile(join(dir, 'here.sock'), '');
  t.same(complete(['skillctl', 'status', '--socket', join(dir, 'here.s')]), [join(dir, 'here.sock')]);
});

const ZSH_SKIP = hasTool('zsh') ? false : 'zsh is not installed (apt-get install zsh to run this check)';

t.test('zsh: the script parses and registers the completion', { skip: ZSH_SKIP }, async (t) => {
  const file = join(dir, '_skillctl');
  await writeFile(file, zshCompletion(COMMANDS));
  execFileSync('zsh', ['-n', file]);
  const out = execFileSync('zsh', ['-f', '-c', `autoload -U compinit && compinit -u -d ${quote(join(dir, 'zcompdump'))} && source ${quote(file)} && print -r -- $_comps[skillctl] && whence -w _skillctl _skillctl_job_ids`], {
    env: { PATH: process.env['PATH'] ?? '', HOME: dir },
    encoding: 'utf8',
  });
  t.equal(out, '_skillctl\n_skillctl: function\n_skillctl_job_ids: function\n');
});

t.test('zsh: what a Tab offers at a real prompt', { skip: ZSH_SKIP }, async (t) => {
  const file = join(dir, '_skillctl_zsh');
  await writeFile(file, zshCompletion(COMMANDS));
  const lines = [
    'skillctl re',
    'skillctl -',
    'skillctl jobs --',
    'skillctl jobs --status ',
    'skillctl jobs --status=f',
    'skillctl run echo -e ',
    'skillctl run echo --engine codex --mode i',
    'skillctl completion ',
    'skillctl help ru',
    'skillctl run ',
    'skillctl jobs --skill echo-b',
    'skillctl show ',
    'skillctl rm 0mbdz1c00-1111111111 ',
    'skillctl logs --socket /s/z.sock -f ',
  ];
  const helper = join(import.meta.dirname, '..', 'helpers', 'zsh-complete.zsh');
  const out = execFileSync('zsh', ['-f', helper, file, ...lines], { env: { PATH: `${bin}:${process.env['PATH'] ?? ''}`, HOME: dir }, encoding: 'utf8', timeout: 60_000 });
  const offered = out.split('<end>\n').slice(0, lines.length).map((block) => block.split('\n').filter((l) => l.startsWith('<hit>')).map((l) => l.slice(5)));
  const ids = SHORT_IDS;
  t.same(offered, [
    ['reply', 'result', 'retry'],
    ['--help', '--json', '--socket', '--version', '-V', '-h'],
    ['--before', '--dry-run', '--force', '--help', '--json', '--limit', '--older-than', '--quiet', '--skill', '--socket', '--status'],
    ['canceled', 'failed', 'queued', 'running', 'succeeded', 'waiting_user'],
    ['failed'],
    ['claude', 'codex', 'gemini', 'iflow'],
    ['interactive'],
    ['bash', 'fish', 'zsh'],
    ['run'],
    ['echo-auto', 'echo-both'],
    ['echo-both'],
    ids,
    ids,
    ids,
  ]);
  t.match(await readFile(join(dir, 'args'), 'utf8'), 'jobs -q --limit 100 --socket /s/z.sock', 'the job ids come from the socket given');
});

const FISH_SKIP = hasTool('fish') ? false : 'fish is not installed (.ci/run installs it)';

t.test('fish: what a Tab offers, from the script skillctl prints', { skip: FISH_SKIP }, async (t) => {
  const file = join(dir, 'skillctl.fish');
  await writeFile(file, fishCompletion(COMMANDS));
  execFileSync('fish', ['--no-config', '-n', file]);
  /** What fish offers for the line, as `complete -C` lists it. */
  const offer = (line: string): string[] =>
    execFileSync('fish', ['--no-config', '-c', `source ${quote(file)}; complete -C ${quote(line)}`], { env: { PATH: `${bin}:${process.env['PATH'] ?? ''}`, HOME: dir }, encoding: 'utf8' })
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => l.split('\t')[0] as string)
      .sort();
  t.same(offer('skillctl re'), ['reply', 'result', 'retry']);
  t.same(offer('skillctl jobs --status f'), ['failed']);
  t.same(offer('skillctl run echo-auto -e '), ['claude', 'codex', 'gemini', 'iflow']);
  t.same(offer('skillctl completion '), ['bash', 'fish', 'zsh']);
  t.same(offer('skillctl show '), SHORT_IDS, 'job ids without job-');
  t.same(offer('skillctl show job-0mbdz1c9'), ['job-0mbdz1c99-2222222222'], 'the whole id when job- is typed');
  t.same(offer('skillctl logs --attempt 2 '), SHORT_IDS, "after an option's value");
  t.same(offer('skillctl --socket /s/f.sock cancel '), SHORT_IDS);
  t.match(await readFile(join(dir, 'args'), 'utf8'), 'jobs -q --limit 100 --socket /s/f.sock', 'the job ids come from the socket given');
  t.same(offer('skillctl reply 0mbdz1c00-1111111111 '), [], 'the reply text is not a job id');
  t.same(offer('skillctl rm 0mbdz1c00-1111111111 -f '), SHORT_IDS, 'rm takes job ids, one after another');
  t.same(offer('skillctl run '), ['echo-auto', 'echo-both']);
  t.same(offer('skillctl jobs --skill echo-b'), ['echo-both']);
});
