import t from 'tap';
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SkillLoadError, effectiveEngines, loadSkill, type SkillDefinition } from '../../daemon/skills/manifest.js';
import { SkillRegistry, view } from '../../daemon/skills/registry.js';

const OUTPUT_SCHEMA = { type: 'object', required: ['greeting'], properties: { greeting: { type: 'string' } } };

const root = await mkdtemp(join(tmpdir(), 'skilld-skills-'));
t.teardown(() => rm(root, { recursive: true, force: true }));

let dirCount = 0;
/** A fresh skills directory under the test's temp folder. */
async function skillsDir(): Promise<string> {
  dirCount += 1;
  const dir = join(root, `skills-${dirCount}`);
  await mkdir(dir);
  return dir;
}

interface SkillFiles {
  runner?: unknown;
  skillMd?: string | null;
  output?: unknown;
  input?: unknown;
  extra?: Record<string, string>;
}

/** Writes a skill folder; `runner`/`output` given as strings are written verbatim (for broken JSON). */
async function writeSkill(dir: string, folder: string, files: SkillFiles = {}): Promise<string> {
  const skill = join(dir, folder);
  await mkdir(join(skill, 'assets'), { recursive: true });
  const runner = files.runner ?? { id: folder, version: '1.0.0', execution_modes: ['auto'] };
  await writeFile(join(skill, 'assets', 'runner.json'), typeof runner === 'string' ? runner : JSON.stringify(runner));
  if (files.skillMd !== null) await writeFile(join(skill, 'SKILL.md'), files.skillMd ?? `# ${folder}\n`);
  const output = files.output ?? OUTPUT_SCHEMA;
  await writeFile(join(skill, 'assets', 'output.schema.json'), typeof output === 'string' ? output : JSON.stringify(output));
  if (files.input !== undefined) await writeFile(join(skill, 'assets', 'input.schema.json'), JSON.stringify(files.input));
  for (const [path, text] of Object.entries(files.extra ?? {})) {
    await mkdir(join(skill, path, '..'), { recursive: true });
    await writeFile(join(skill, path), text);
  }
  return skill;
}

/** The SkillLoadError a load rejects with; anything else fails the test. */
async function loadError(promise: Promise<SkillDefinition>): Promise<SkillLoadError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof SkillLoadError) return error;
    throw error;
  }
  throw new Error('expected a SkillLoadError, but the skill loaded');
}

t.test('a valid skill loads with defaults filled in', async (t) => {
  const dir = await skillsDir();
  const path = await writeSkill(dir, 'echo', { runner: { id: 'echo', version: '1.2.3', execution_modes: ['auto', 'interactive'], artifacts: [{ role: 'report', pattern: '*.md' }] } });
  const skill = await loadSkill(path);
  t.equal(skill.id, 'echo');
  t.equal(skill.version, '1.2.3');
  t.equal(skill.name, 'echo', 'name defaults to the id');
  t.equal(skill.description, '');
  t.same(skill.execution_modes, ['auto', 'interactive']);
  t.equal(skill.engines, null);
  t.same(skill.unsupported_engines, []);
  t.same(skill.effective_engines, ['codex', 'gemini', 'iflow', 'claude'], 'API-12 every known engine when engines is absent');
  t.equal(skill.max_attempt, null);
  t.equal(skill.path, path);
  t.same(skill.artifacts, [{ role: 'report', pattern: '*.md', required: false }]);
  t.same(skill.prompts, {});
  t.same(skill.input_paths, {}, 'no input names a path');
  t.same(skill.schemas, { input: null, parameter: null, output: OUTPUT_SCHEMA });
  t.equal(skill.validators.input, null);
  t.equal(skill.validators.parameter, null);
  t.same(skill.validators.output?.({ greeting: 'hi' }), [], 'the output validator accepts valid output');
  t.same(skill.validators.output?.({}), [{ path: '/', message: "must have required property 'greeting'" }]);
});

t.test('optional schemas, declared schema paths and entrypoint prompts', async (t) => {
  const dir = await skillsDir();
  const path = await writeSkill(dir, 'custom', {
    runner: {
      id: 'custom',
      version: '1',
      name: 'Custom',
      description: 'd',
      execution_modes: ['auto'],
      schemas: { parameter: 'schemas/params.json' },
      entrypoint: { prompts: { common: 'Do it.', codex: 'Do it, codex.' } },
    },
    input: { type: 'object', properties: { n: { type: 'integer' } }, additionalProperties: false },
    extra: { 'schemas/params.json': JSON.stringify({ type: 'object', required: ['lang'] }) },
  });
  const skill = await loadSkill(path);
  t.equal(skill.name, 'Custom');
  t.equal(skill.description, 'd');
  t.same(skill.prompts, { common: 'Do it.', codex: 'Do it, codex.' });
  t.same(skill.validators.input?.({ n: 1 }), []);
  t.equal(skill.validators.input?.({ n: 'x' }).length, 1);
  t.same(skill.schemas.parameter, { type: 'object', required: ['lang'] });
  t.equal(skill.validators.parameter?.({}).length, 1);
});

t.test('API-12 an engine listed in engines is effective', async (t) => {
  const dir = await skillsDir();
  const skill = await loadSkill(await writeSkill(dir, 'two', { runner: { id: 'two', version: '1', execution_modes: ['auto'], engines: ['codex', 'gemini'] } }));
  t.same(skill.engines, ['codex', 'gemini']);
  t.same(skill.effective_engines, ['codex', 'gemini']);
});

t.test('API-13 unsupported_engines removes an engine', async (t) => {
  const dir = await skillsDir();
  const skill = await loadSkill(await writeSkill(dir, 'no-gemini', { runner: { id: 'no-gemini', version: '1', execution_modes: ['auto'], unsupported_engines: ['gemini'] } }));
  t.same(skill.unsupported_engines, ['gemini']);
  t.same(skill.effective_engines, ['codex', 'iflow', 'claude']);
});

t.test('API-14 an engines allow-list without the engine excludes it', async (t) => {
  const dir = await skillsDir();
  const skill = await loadSkill(await writeSkill(dir, 'codex-only', { runner: { id: 'codex-only', version: '1', execution_modes: ['auto'], engines: ['codex'] } }));
  t.same(skill.effective_engines, ['codex']);
  t.notOk(skill.effective_engines.includes('gemini'));
});

t.test('effectiveEngines = (engines ?? all) - unsupported, known engines only', async (t) => {
  t.same(effectiveEngines(undefined, undefined), ['codex', 'gemini', 'iflow', 'claude']);
  t.same(effectiveEngines(['iflow', 'codex'], undefined), ['codex', 'iflow'], 'in the daemon\'s engine order');
  t.same(effectiveEngines(['codex', 'gemini'], ['codex']), ['gemini']);
  t.same(effectiveEngines(['codex', 'aider'], []), ['codex'], 'unknown names are dropped');
  t.same(effectiveEngines(['claude', 'codex'], undefined), ['codex', 'claude'], 'claude comes last');
  t.same(effectiveEngines([], undefined), []);
  t.same(effectiveEngines(undefined, ['codex', 'gemini', 'iflow', 'claude']), []);
});

t.test('a name in engines or unsupported_engines that is not an engine is an error naming it and the nearest engine; so is no engine left', async (t) => {
  const dir = await skillsDir();
  const typo = await loadError(loadSkill(await writeSkill(dir, 'typo', { runner: { id: 'typo', version: '1', execution_modes: ['auto'], engines: ['codex', 'claude-code'] } })));
  t.equal(typo.code, 'SKILL_MANIFEST_INVALID');
  t.equal(typo.message, 'runner.json: engines: "claude-code" is not an engine (the engines: codex, gemini, iflow, claude); did you mean "claude"?');
  const excluded = await loadError(loadSkill(await writeSkill(dir, 'excluded', { runner: { id: 'excluded', version: '1', execution_modes: ['auto'], unsupported_engines: ['aider'] } })));
  t.match(excluded.message, /^runner.json: unsupported_engines: "aider" is not an engine \(the engines: [^)]*\)$/, 'no near engine: no guess');
  const none = await loadError(loadSkill(await writeSkill(dir, 'none', { runner: { id: 'none', version: '1', execution_modes: ['auto'], engines: ['codex'], unsupported_engines: ['codex'] } })));
  t.equal(none.message, 'runner.json: engines less unsupported_engines leaves no engine to run it');
});

t.test('an unknown key in runner.json loads the skill with a warning naming the key and the nearest known one', async (t) => {
  const dir = await skillsDir();
  const skill = await loadSkill(await writeSkill(dir, 'extra', { runner: { id: 'extra', version: '1', execution_modes: ['interactive'], max_attempts: 3, x_team: 'ops' } }));
  t.same(skill.warnings, ['runner.json: unknown key "max_attempts", ignored; did you mean "max_attempt"?', 'runner.json: unknown key "x_team", ignored']);
  t.equal(skill.max_attempt, null, 'the misspelt key sets nothing');
  const registry = new SkillRegistry([dir]);
  await registry.loadAll();
  t.same(view(registry.get('extra') as NonNullable<ReturnType<SkillRegistry['get']>>).warnings, skill.warnings, 'skills/list and skills/get show them');
  t.equal(view(registry.get('extra') as NonNullable<ReturnType<SkillRegistry['get']>>).status, 'ok');
});

t.test('D-6 max_attempt is allowed with interactive mode and must be an integer >= 1', async (t) => {
  const dir = await skillsDir();
  const ok = await loadSkill(await writeSkill(dir, 'ia', { runner: { id: 'ia', version: '1', execution_modes: ['interactive'], max_attempt: 1 } }));
  t.equal(ok.max_attempt, 1);
  const both = await loadSkill(await writeSkill(dir, 'ib', { runner: { id: 'ib', version: '1', execution_modes: ['auto', 'interactive'], max_attempt: 5 } }));
  t.equal(both.max_attempt, 5);

  const autoOnly = await loadError(loadSkill(await writeSkill(dir, 'ic', { runner: { id: 'ic', version: '1', execution_modes: ['auto'], max_attempt: 3 } })));
  t.equal(autoOnly.code, 'SKILL_MANIFEST_INVALID');
  t.match(autoOnly.message, /max_attempt applies to interactive mode only/);
  t.equal(autoOnly.path, join(dir, 'ic', 'assets', 'runner.json'));

  for (const [folder, value] of [['id0', 0], ['id1', -1], ['id2', 1.5], ['id3', '3']] as const) {
    const error = await loadError(loadSkill(await writeSkill(dir, folder, { runner: { id: folder, version: '1', execution_modes: ['interactive'], max_attempt: value } })));
    t.equal(error.code, 'SKILL_MANIFEST_INVALID', `max_attempt ${JSON.stringify(value)}`);
    t.match(error.message, /max_attempt/);
  }
});

t.test('input_paths: each input named read_only or read_write', async (t) => {
  const dir = await skillsDir();
  const ok = await loadSkill(await writeSkill(dir, 'ip', { runner: { id: 'ip', version: '1', execution_modes: ['auto'], input_paths: { repository: 'read_only', out: 'read_write' } } }));
  t.same(ok.input_paths, { repository: 'read_only', out: 'read_write' });
  const bad = await loadError(loadSkill(await writeSkill(dir, 'iq', { runner: { id: 'iq', version: '1', execution_modes: ['auto'], input_paths: { repository: 'read' } } })));
  t.equal(bad.code, 'SKILL_MANIFEST_INVALID');
  t.match(bad.message, /input_paths/);
});

t.test('the id must equal the folder name', async (t) => {
  const dir = await skillsDir();
  const error = await loadError(loadSkill(await writeSkill(dir, 'folder-name', { runner: { id: 'other-name', version: '1', execution_modes: ['auto'] } })));
  t.equal(error.code, 'SKILL_MANIFEST_INVALID');
  t.match(error.message, /"other-name" must equal the folder name "folder-name"/);
});

t.test('the id must match the id pattern', async (t) => {
  const dir = await skillsDir();
  for (const id of ['Upper', '-dash-first', '.dot-first', 'has space', 'x'.repeat(65)]) {
    const error = await loadError(loadSkill(await writeSkill(dir, id, { runner: { id, version: '1', execution_modes: ['auto'] } })));
    t.equal(error.code, 'SKILL_MANIFEST_INVALID', JSON.stringify(id));
    t.match(error.message, /must match/);
  }
  for (const id of ['a', '0x', 'a.b_c-d', 'x'.repeat(64)]) {
    t.equal((await loadSkill(await writeSkill(dir, id, { runner: { id, version: '1', execution_modes: ['auto'] } }))).id, id, `${id} is valid`);
  }
});

t.test('runner.json rules: required fields and execution_modes values', async (t) => {
  const dir = await skillsDir();
  const cases: Array<[string, Record<string, unknown>, RegExp]> = [
    ['r1', { id: 'r1', version: '1' }, /execution_modes/],
    ['r2', { id: 'r2', version: '1', execution_modes: [] }, /execution_modes/],
    ['r3', { id: 'r3', version: '1', execution_modes: ['batch'] }, /execution_modes/],
    ['r4', { id: 'r4', execution_modes: ['auto'] }, /version/],
    ['r5', { id: 'r5', version: '1', execution_modes: ['auto'], engines: 'codex' }, /engines/],
    ['r6', { id: 'r6', version: '1', execution_modes: ['auto'], schemas: { output: 'o.json', extra: 'x' } }, /schemas/],
  ];
  for (const [folder, runner, pattern] of cases) {
    const error = await loadError(loadSkill(await writeSkill(dir, folder, { runner })));
    t.equal(error.code, 'SKILL_MANIFEST_INVALID', folder);
    t.match(error.message, pattern, folder);
  }
});

t.test('a NUL character in any string of runner.json (its version, a prompt, a key) -> SKILL_MANIFEST_INVALID naming where', async (t) => {
  const dir = await skillsDir();
  const nul = '\u0000';
  const cases: Array<[string, Record<string, unknown>, string]> = [
    ['n1', { id: 'n1', version: `1.0${nul}`, execution_modes: ['auto'] }, '/version'],
    ['n2', { id: 'n2', version: '1', execution_modes: ['auto'], entrypoint: { prompts: { start: `Go${nul}` } } }, '/entrypoint/prompts/start'],
    ['n3', { id: 'n3', version: '1', execution_modes: ['auto'], description: 'ok', notes: { [`a${nul}`]: 1 } }, '/notes'],
  ];
  for (const [folder, runner, path] of cases) {
    const error = await loadError(loadSkill(await writeSkill(dir, folder, { runner })));
    t.equal(error.code, 'SKILL_MANIFEST_INVALID', folder);
    t.match(error.message, `runner.json: ${path} must not`, folder);
    t.match(error.message, 'a NUL character (\\u0000)', folder);
  }
});

t.test('missing SKILL.md -> SKILL_FILE_MISSING naming the file', async (t) => {
  const dir = await skillsDir();
  const path = await writeSkill(dir, 'no-md', { skillMd: null });
  const error = await loadError(loadSkill(path));
  t.equal(error.code, 'SKILL_FILE_MISSING');
  t.equal(error.path, join(path, 'SKILL.md'));
  await mkdir(join(path, 'SKILL.md'));
  t.equal((await loadError(loadSkill(path))).code, 'SKILL_FILE_MISSING', 'a folder named SKILL.md is not the file');
});

t.test('SKILL_LINK_OUTSIDE: a SKILL.md, a schema or a folder that links out of the skill folder makes it invalid, naming the link', async (t) => {
  const dir = await skillsDir();
  const secret = join(dir, 'secret.md');
  await writeFile(secret, 'SECRET\n');
  const md = await writeSkill(dir, 'md-out', { skillMd: null });
  await symlink(secret, join(md, 'SKILL.md'));
  const error = await loadError(loadSkill(md));
  t.match(error, { code: 'SKILL_LINK_OUTSIDE', path: join(md, 'SKILL.md'), message: /^SKILL\.md leads outside the skill folder/ });
  const schema = await writeSkill(dir, 'schema-out');
  await rm(join(schema, 'assets', 'output.schema.json'));
  await symlink(join(dir, 'md-out', 'assets', 'output.schema.json'), join(schema, 'assets', 'output.schema.json'));
  t.match(await loadError(loadSkill(schema)), { code: 'SKILL_LINK_OUTSIDE', path: join(schema, 'assets', 'output.schema.json') }, "another skill's folder is outside too");
  const folder = await writeSkill(dir, 'folder-out');
  await mkdir(join(dir, 'shared'));
  await writeFile(join(dir, 'shared', 'notes.md'), 'SECRET\n');
  await symlink(join(dir, 'shared'), join(folder, 'references'));
  t.match(await loadError(loadSkill(folder)), { code: 'SKILL_LINK_OUTSIDE', path: join(folder, 'references') }, 'a link to a folder outside, whatever it holds');
});

t.test('links that stay inside the skill folder are read as the files they name; dangling ones and links to folders add nothing', async (t) => {
  const dir = await skillsDir();
  const path = await writeSkill(dir, 'inside', { extra: { 'shared/output.json': JSON.stringify(OUTPUT_SCHEMA) } });
  await rm(join(path, 'assets', 'output.schema.json'));
  await symlink(join('..', 'shared', 'output.json'), join(path, 'assets', 'output.schema.json'));
  await symlink('SKILL.md', join(path, 'README.md'));
  await symlink('..', join(path, 'shared', 'up'));
  await symlink('user@host.1234:1700000000', join(path, '.#SKILL.md')); // an editor's lock file
  const skill = await loadSkill(path);
  t.same(skill.schemas.output, OUTPUT_SCHEMA);
  t.same([...skill.files.keys()], ['README.md', 'SKILL.md', join('assets', 'output.schema.json'), join('assets', 'runner.json'), join('shared', 'output.json')], 'the link to the folder above is not entered');
  t.equal(skill.files.get('README.md')?.toString(), '# inside\n');
  const linked = join(dir, 'linked');
  await symlink(path, linked);
  t.same([...(await loadSkill(linked, 'inside')).files.keys()], [...skill.files.keys()], 'a skill folder that is itself a link is read from its real place');
});

t.test('invalid JSON in runner.json -> SKILL_MANIFEST_INVALID naming runner.json', async (t) => {
  const dir = await skillsDir();
  const path = await writeSkill(dir, 'bad-json', { runner: '{"id": "bad-json", "version": ' });
  const error = await loadError(loadSkill(path));
  t.equal(error.code, 'SKILL_MANIFEST_INVALID');
  t.match(error.message, /runner\.json is not valid JSON/);
  t.equal(error.path, join(path, 'assets', 'runner.json'));
});

t.test('missing runner.json -> SKILL_MANIFEST_INVALID', async (t) => {
  const dir = await skillsDir();
  const path = join(dir, 'bare');
  await mkdir(path);
  await writeFile(join(path, 'SKILL.md'), '# bare\n');
  const error = await loadError(loadSkill(path));
  t.equal(error.code, 'SKILL_MANIFEST_INVALID');
  t.match(error.message, /runner\.json is missing/);
});

t.test('broken schema -> SKILL_SCHEMA_INVALID naming the schema file', async (t) => {
  const dir = await skillsDir();
  const broken = await writeSkill(dir, 'broken-schema', { output: { type: 'nonsense-type' } });
  const error = await loadError(loadSkill(broken));
  t.equal(error.code, 'SKILL_SCHEMA_INVALID');
  t.match(error.message, /output schema/);
  t.equal(error.path, join(broken, 'assets', 'output.schema.json'));

  const notJson = await writeSkill(dir, 'schema-not-json', { output: '{"type": ' });
  const e2 = await loadError(loadSkill(notJson));
  t.equal(e2.code, 'SKILL_SCHEMA_INVALID');
  t.match(e2.message, /not valid JSON/);

  const notObject = await writeSkill(dir, 'schema-array', { output: '[]' });
  t.equal((await loadError(loadSkill(notObject))).code, 'SKILL_SCHEMA_INVALID');

  const missingDeclared = await writeSkill(dir, 'schema-missing', { runner: { id: 'schema-missing', version: '1', execution_modes: ['auto'], schemas: { input: 'nope.json' } } });
  const e3 = await loadError(loadSkill(missingDeclared));
  t.equal(e3.code, 'SKILL_SCHEMA_INVALID');
  t.equal(e3.path, join(missingDeclared, 'nope.json'));
});

// ---------------------------------------------------------------------------------------------
// registry

t.test('registry: loadAll lists every skill sorted, with counts; hidden folders are ignored', async (t) => {
  const dir = await skillsDir();
  await writeSkill(dir, 'beta');
  await writeSkill(dir, 'alpha', { runner: { id: 'alpha', version: '2', execution_modes: ['interactive'], max_attempt: 2, unsupported_engines: ['iflow'] } });
  await writeSkill(dir, 'broken', { skillMd: null });
  await mkdir(join(dir, '.git'));
  const registry = new SkillRegistry([dir]);
  await registry.loadAll();
  const list = registry.list();
  t.same(list.map((s) => [s.id, s.status]), [['alpha', 'ok'], ['beta', 'ok'], ['broken', 'invalid']]);
  t.same(registry.counts(), { ok: 2, invalid: 1 });
  t.same(list[0], {
    id: 'alpha',
    version: '2',
    name: 'alpha',
    description: '',
    execution_modes: ['interactive'],
    engines: null,
    unsupported_engines: ['iflow'],
    effective_engines: ['codex', 'gemini', 'claude'],
    default_engine: 'codex',
    max_attempt: 2,
    input_paths: {},
    path: join(dir, 'alpha'),
    status: 'ok',
    warnings: [],
  });
  t.same(list[2]?.error, { code: 'SKILL_FILE_MISSING', message: 'SKILL.md is missing', path: join(dir, 'broken', 'SKILL.md') });
  t.equal(list[2]?.version, null, 'never valid: no version');
});

t.test('registry: a missing skills directory is tolerated', async (t) => {
  const registry = new SkillRegistry([join(root, 'does-not-exist')]);
  await registry.loadAll();
  t.same(registry.list(), []);
  t.same(registry.counts(), { ok: 0, invalid: 0 });
});

t.test('registry: a folder name that is not a valid id is listed invalid', async (t) => {
  const dir = await skillsDir();
  await writeSkill(dir, 'Bad_Name');
  const registry = new SkillRegistry([dir]);
  await registry.loadAll();
  const entry = registry.get('Bad_Name');
  t.equal(entry?.current, null);
  t.equal(entry?.error?.code, 'SKILL_MANIFEST_INVALID');
  t.match(entry?.error?.message ?? '', /not a valid skill id/);
});

t.test('registry: the first directory holding an id wins', async (t) => {
  const first = await skillsDir();
  const second = await skillsDir();
  await writeSkill(first, 'dup', { runner: { id: 'dup', version: 'first', execution_modes: ['auto'] } });
  await writeSkill(second, 'dup', { runner: { id: 'dup', version: 'second', execution_modes: ['auto'] } });
  await writeSkill(second, 'only-second');
  const registry = new SkillRegistry([first, second]);
  await registry.loadAll();
  t.equal(registry.get('dup')?.current?.version, 'first');
  t.equal(registry.get('dup')?.path, join(first, 'dup'));
  t.equal(registry.get('only-second')?.path, join(second, 'only-second'));
});

t.test('registry: a failed reload keeps the last valid version; a fix clears the error', async (t) => {
  const dir = await skillsDir();
  const path = await writeSkill(dir, 'live', { runner: { id: 'live', version: '1.0.0', execution_modes: ['auto'] } });
  const registry = new SkillRegistry([dir]);
  await registry.loadAll();
  t.equal(registry.get('live')?.current?.version, '1.0.0');

  await writeFile(join(path, 'assets', 'runner.json'), '{"id": "live", "vers');
  t.equal(await registry.reload('live'), true, 'what clients see changed');
  const entry = registry.get('live');
  t.equal(entry?.current?.version, '1.0.0', 'the last valid version is still served');
  t.equal(entry?.error?.code, 'SKILL_MANIFEST_INVALID');
  t.equal(entry?.error?.path, join(path, 'assets', 'runner.json'));
  const shown = entry === undefined ? undefined : view(entry);
  t.equal(shown?.status, 'invalid');
  t.equal(shown?.version, '1.0.0', 'listed with the last valid version');
  t.same(shown?.error, entry?.error);
  t.same(registry.counts(), { ok: 0, invalid: 1 });

  t.equal(await registry.reload('live'), false, 'reloading the same broken files changes nothing');

  await writeFile(join(path, 'assets', 'output.schema.json'), '{"type": "bogus"}');
  await writeFile(join(path, 'assets', 'runner.json'), JSON.stringify({ id: 'live', version: '1.0.0', execution_modes: ['auto'] }));
  await registry.reload('live');
  t.equal(registry.get('live')?.error?.code, 'SKILL_SCHEMA_INVALID', 'a different problem replaces the error');
  t.equal(registry.get('live')?.current?.version, '1.0.0', 'and the last valid version is still kept');

  await writeFile(join(path, 'assets', 'output.schema.json'), JSON.stringify(OUTPUT_SCHEMA));
  await writeFile(join(path, 'assets', 'runner.json'), JSON.stringify({ id: 'live', version: '1.1.0', execution_modes: ['auto'] }));
  t.equal(await registry.reload('live'), true);
  t.equal(registry.get('live')?.error, null);
  t.equal(registry.get('live')?.current?.version, '1.1.0');
  t.equal(registry.list()[0]?.status, 'ok');
  t.notOk('error' in (registry.list()[0] ?? {}), 'no error key when ok');
});

t.test('registry: an id whose folder is removed is dropped', async (t) => {
  const dir = await skillsDir();
  const gone = await writeSkill(dir, 'gone');
  await writeSkill(dir, 'stays');
  const registry = new SkillRegistry([dir]);
  await registry.loadAll();
  t.same(registry.list().map((s) => s.id), ['gone', 'stays']);
  await rm(gone, { recursive: true });
  t.equal(await registry.reload('gone'), true);
  t.equal(registry.get('gone'), undefined);
  t.same(registry.list().map((s) => s.id), ['stays']);
  t.same(registry.counts(), { ok: 1, invalid: 0 });
  t.equal(await registry.reload('gone'), false, 'dropping an unknown id again changes nothing');
});

t.test('registry: a new skill folder appears on reload', async (t) => {
  const dir = await skillsDir();
  const registry = new SkillRegistry([dir]);
  await registry.loadAll();
  t.same(registry.list(), []);
  await writeSkill(dir, 'fresh');
  t.equal(await registry.reload('fresh'), true);
  t.equal(registry.get('fresh')?.current?.id, 'fresh');
  t.equal(await registry.reload('fresh'), false, 'unchanged files: no change reported');
});
