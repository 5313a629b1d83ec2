import t from 'tap';
import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execError } from '../../daemon/sandbox/executable.js';

const dir = await mkdtemp(join(tmpdir(), 'skilld-exec-'));
t.teardown(() => rm(dir, { recursive: true, force: true }));
await mkdir(join(dir, 'bin'));
await mkdir(join(dir, 'other'));
await writeFile(join(dir, 'bin', 'engine'), '#!/bin/sh\n');
await chmod(join(dir, 'bin', 'engine'), 0o755);
await writeFile(join(dir, 'other', 'engine'), 'not a program');
await chmod(join(dir, 'other', 'engine'), 0o644);
await mkdir(join(dir, 'other', 'folder'));

t.test('a name is looked up along PATH like a shell does: the first executable file wins', async (t) => {
  t.equal(execError('engine', `${join(dir, 'other')}:${join(dir, 'bin')}`, '/'), null, 'a file that cannot run earlier on the path is skipped');
  t.equal(execError('engine', join(dir, 'other'), '/'), 'EACCES', 'only a file that cannot run: EACCES');
  t.equal(execError('folder', join(dir, 'other'), '/'), 'EACCES', 'a folder cannot run either');
  t.equal(execError('missing', join(dir, 'bin'), '/'), 'ENOENT');
  t.equal(execError('engine', ':/nonexistent', join(dir, 'bin')), null, 'an empty PATH entry is the working folder');
});

t.test('a name with a slash is taken as a path, relative to the working folder', async (t) => {
  t.equal(execError(join(dir, 'bin', 'engine'), '', '/'), null);
  t.equal(execError('./engine', '/nonexistent', join(dir, 'bin')), null);
  t.equal(execError('/nonexistent/codex', join(dir, 'bin'), '/'), 'ENOENT');
  t.equal(execError('sh', undefined, '/'), null, 'without PATH, the shell default path');
});
