import t from 'tap';
import { chmod, mkdir, mkdtemp, readdir, readFile, rm, symlink, utimes, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { realEngineBins } from '../../clients/skill-test/engine-homes.js';
import { copySeeds, ScriptedSeeds } from '../../daemon/engines/scripted-seeds.js';
import type { ShortRun } from '../../daemon/model/short-run.js';
import { runShort } from '../../daemon/process/run-short.js';
import { ROOT } from '../helpers/daemon.js';

/**
 * The databases a test job's Codex starts from (daemon/engines/scripted-seeds.ts): made once by
 * the real Codex CLI, made again when its program changes, none where the command makes none,
 * and copied into a home without ever touching a database already there or following a link.
 */
const codex = realEngineBins(join(ROOT, 'node_modules')).codex;
const noCodex = codex === null ? 'the real codex CLI is not installed in node_modules (npm ci installs it as a dev dependency); these tests did NOT run' : false;
t.setTimeout(120_000);

const scratch = await mkdtemp(join(tmpdir(), 'scripted-seeds-'));
t.teardown(() => rm(scratch, { recursive: true, force: true }));

/** Seeds whose runs are counted and can be awaited, with what they warned of. */
function seedsFor(dir: string, command: string[]): { seeds: ScriptedSeeds; runs: Promise<ShortRun>[]; warned: object[]; settled(): Promise<void> } {
  const runs: Promise<ShortRun>[] = [];
  const warned: object[] = [];
  const logger = { debug: () => undefined, info: () => undefined, warn: (obj: object) => void warned.push(obj), error: () => undefined };
  const seeds = new ScriptedSeeds({
    dir,
    command: () => command,
    envFor: (_engine, own) => ({ PATH: process.env['PATH'] ?? '/usr/bin:/bin', ...own }),
    run: (argv, env, timeoutMs) => {
      const run = runShort(argv, env, timeoutMs);
      runs.push(run);
      return run;
    },
    logger,
  });
  // The seeds read the run's end in a callback of their own: one turn of the loop after it.
  const settled = async (): Promise<void> => {
    await Promise.all(runs);
    await new Promise((resolve) => setImmediate(resolve));
  };
  return { seeds, runs, warned, settled };
}

t.test('the real Codex makes them once; they are made again when its program changes', { skip: noCodex }, async (t) => {
  // A program of this test's own in front of Codex: touching it is an upgrade.
  const wrapper = join(scratch, 'codex');
  await writeFile(wrapper, `#!/bin/sh\nexec ${JSON.stringify(process.execPath)} ${JSON.stringify(codex)} "$@"\n`);
  await chmod(wrapper, 0o755);
  const { seeds, runs, settled } = seedsFor(join(scratch, 'seeds'), [wrapper]);
  t.same(seeds.files('gemini'), [], 'Codex only');
  t.same(runs.length, 0);
  t.same(seeds.files('codex'), [], 'not made yet: a job does not wait for them');
  t.same(seeds.files('codex'), [], 'still being made');
  t.equal(runs.length, 1, 'made once');
  await settled();
  const files = seeds.files('codex');
  const names = files.map((file) => file.slice(file.lastIndexOf('/') + 1));
  t.ok(names.includes('state_5.sqlite') || names.some((name) => /^state_\d+\.sqlite$/.test(name)), `Codex's state database among ${names.join(' ')}`);
  t.ok(names.every((name) => /^[a-z_]+_\d+\.sqlite(-wal)?$/.test(name)), 'databases and their logs only: no settings, no shared-memory index');
  t.equal(runs.length, 1, 'asked again, not made again');

  const later = new Date(Date.now() + 60_000);
  await utimes(wrapper, later, later);
  t.same(seeds.files('codex'), [], 'another program: none until made for it');
  t.equal(runs.length, 2);
  await settled();
  const remade = seeds.files('codex');
  t.not(remade[0], files[0], 'in a folder of their own');
  t.equal(remade.length, files.length);
  t.notOk(existsSync(files[0] as string), "the program before it: its databases removed once the new ones are made");
});

t.test('a command that makes none: none, said once, not tried at every job', async (t) => {
  const { seeds, runs, warned, settled } = seedsFor(join(scratch, 'none'), ['true']);
  t.same(seeds.files('codex'), []);
  await settled();
  t.same(seeds.files('codex'), []);
  t.same(seeds.files('codex'), []);
  t.equal(runs.length, 1);
  t.match(warned, [{ engine: 'codex', code: 0 }]);
  // A folder that cannot be made (a file in its path): said, no run, and the job goes on without.
  await writeFile(join(scratch, 'a-file'), '');
  const unmade = seedsFor(join(scratch, 'a-file', 'seeds'), ['true']);
  t.same(unmade.seeds.files('codex'), []);
  t.equal(unmade.runs.length, 0);
  t.match(unmade.warned, [{ engine: 'codex', error: /ENOTDIR/ }]);
  const missing = seedsFor(join(scratch, 'missing'), [join(scratch, 'no-such-codex')]);
  t.same(missing.seeds.files('codex'), [], 'a command that is not there: nothing to run');
  t.equal(missing.runs.length, 0);
});

t.test('what the run left in its home: its databases and their logs when it ended, none when it ran out of time', async (t) => {
  const program = join(scratch, 'stand-in');
  await writeFile(program, '#!/bin/sh\nexit 1\n');
  await chmod(program, 0o755);
  const seedsWith = (timedOut: boolean): { seeds: ScriptedSeeds; done: Promise<void>; warned: object[] } => {
    const warned: object[] = [];
    let finish!: () => void;
    const done = new Promise<void>((resolve) => (finish = resolve));
    const seeds = new ScriptedSeeds({
      dir: join(scratch, timedOut ? 'late' : 'ended'),
      command: () => [program],
      envFor: (_engine, own) => ({ PATH: '/usr/bin:/bin', ...own }),
      // Leaves what Codex leaves in the home it is given (-C), then ends as told.
      run: async (argv) => {
        const home = argv[argv.indexOf('-C') + 1] as string;
        for (const name of ['state_5.sqlite', 'state_5.sqlite-wal', 'state_5.sqlite-shm', 'logs_2.sqlite', 'installation_id']) await writeFile(join(home, name), name);
        setImmediate(finish);
        return { ok: false, timedOut, code: timedOut ? null : 1, stdout: '', stderr: '', error: timedOut ? 'timed out after 15000 ms' : null };
      },
      logger: { debug: () => undefined, info: () => undefined, warn: (obj: object) => void warned.push(obj), error: () => undefined },
    });
    return { seeds, done, warned };
  };
  const ended = seedsWith(false);
  t.same(ended.seeds.files('codex'), []);
  await ended.done;
  t.same(ended.seeds.files('codex').map((file) => file.slice(file.lastIndexOf('/') + 1)), ['logs_2.sqlite', 'state_5.sqlite', 'state_5.sqlite-wal']);
  t.same(ended.warned, []);
  const late = seedsWith(true);
  late.seeds.files('codex');
  await late.done;
  t.same(late.seeds.files('codex'), [], 'a run cut off: nothing taken from it');
  t.match(late.warned, [{ engine: 'codex', error: 'timed out after 15000 ms' }]);
});

t.test('copied into a home: each database only where it has none, never through a link', async (t) => {
  const seed = join(scratch, 'made');
  await mkdir(seed);
  const files: string[] = [];
  for (const name of ['goals_1.sqlite', 'goals_1.sqlite-wal', 'state_5.sqlite', 'state_5.sqlite-wal', 'logs_2.sqlite']) {
    await writeFile(join(seed, name), `seed ${name}`);
    files.push(join(seed, name));
  }
  const home = join(scratch, 'home');
  await mkdir(home);
  copySeeds(files, home);
  t.same((await readdir(home)).sort(), ['goals_1.sqlite', 'goals_1.sqlite-wal', 'logs_2.sqlite', 'state_5.sqlite', 'state_5.sqlite-wal']);
  t.equal(await readFile(join(home, 'state_5.sqlite-wal'), 'utf8'), 'seed state_5.sqlite-wal');

  // The engine's own databases since: untouched, their logs too (one it checkpointed away stays away).
  await writeFile(join(home, 'state_5.sqlite'), 'the job\'s own');
  await rm(join(home, 'state_5.sqlite-wal'));
  await writeFile(join(home, 'goals_1.sqlite-wal'), 'the job\'s own log');
  copySeeds(files, home);
  t.equal(await readFile(join(home, 'state_5.sqlite'), 'utf8'), 'the job\'s own');
  t.notOk((await readdir(home)).includes('state_5.sqlite-wal'), 'no seed log put beside a database of the job\'s');
  t.equal(await readFile(join(home, 'goals_1.sqlite-wal'), 'utf8'), 'the job\'s own log');

  // A log left without its database (a copy cut short) is replaced, so that it is not read into the new one.
  const cut = join(scratch, 'cut');
  await mkdir(cut);
  await writeFile(join(cut, 'state_5.sqlite-wal'), 'left over');
  copySeeds(files, cut);
  t.equal(await readFile(join(cut, 'state_5.sqlite-wal'), 'utf8'), 'seed state_5.sqlite-wal');
  t.equal(await readFile(join(cut, 'state_5.sqlite'), 'utf8'), 'seed state_5.sqlite');

  // Links: a database's place taken by one counts as there; a log's is not written through.
  const linked = join(scratch, 'linked');
  await mkdir(linked);
  const target = join(scratch, 'target');
  await writeFile(target, 'not the seed\'s to write');
  await symlink(target, join(linked, 'state_5.sqlite'));
  await symlink(target, join(linked, 'goals_1.sqlite-wal'));
  copySeeds(files, linked);
  t.equal(await readFile(target, 'utf8'), 'not the seed\'s to write', 'nothing written through a link');
  t.same((await readdir(linked)).sort(), ['goals_1.sqlite-wal', 'logs_2.sqlite', 'state_5.sqlite'], 'the database whose log is a link is not copied; the others are');
});
