import t from 'tap';
import { chooseSocket, socketPath, sourceText, SYSTEM_SOCKET } from '../../clients/socket-path.js';

const SYSTEM = '/run/test-skilld/skilld.sock';
const none = (): boolean => false;
const only = (...paths: string[]) => (path: string): boolean => paths.includes(path);

t.test('the flag, then SKILLD_SOCKET, then the per-user default; empty values count as unset', async (t) => {
  const env = { SKILLD_SOCKET: '/s/env.sock', XDG_RUNTIME_DIR: '/run/user/7' };
  t.same(chooseSocket('/s/flag.sock', { env, exists: none }), { path: '/s/flag.sock', source: 'flag' });
  t.same(chooseSocket(undefined, { env, exists: none }), { path: '/s/env.sock', source: 'SKILLD_SOCKET' });
  t.same(chooseSocket('', { env: { ...env, SKILLD_SOCKET: '' }, exists: none }), { path: '/run/user/7/skilld/skilld.sock', source: 'runtime_dir' });
  t.same(chooseSocket(undefined, { env: { XDG_RUNTIME_DIR: '' }, uid: 42, exists: none }), { path: '/tmp/skilld-42/skilld.sock', source: 'fallback' });
  t.equal(chooseSocket('rel.sock', { env: {}, exists: none }).path, `${process.cwd()}/rel.sock`, 'a relative path is made absolute');
  t.equal(socketPath(undefined, { XDG_RUNTIME_DIR: '/run/user/7' }, 7), '/run/user/7/skilld/skilld.sock');
});

t.test('the system socket when the per-user default is absent and it exists', async (t) => {
  const env = { XDG_RUNTIME_DIR: '/run/user/7' };
  const own = '/run/user/7/skilld/skilld.sock';
  t.same(chooseSocket(undefined, { env, systemSocket: SYSTEM, exists: only(SYSTEM) }), { path: SYSTEM, source: 'system', absent: own });
  t.same(chooseSocket(undefined, { env, systemSocket: SYSTEM, exists: only(SYSTEM, own) }), { path: own, source: 'runtime_dir' }, 'the per-user socket wins when both exist');
  t.same(chooseSocket(undefined, { env, systemSocket: SYSTEM, exists: none }), { path: own, source: 'runtime_dir' }, 'neither: the per-user default, for the error to name');
  t.same(chooseSocket(undefined, { env: {}, uid: 3, systemSocket: SYSTEM, exists: only(SYSTEM) }), { path: SYSTEM, source: 'system', absent: '/tmp/skilld-3/skilld.sock' });
  t.equal(chooseSocket(undefined, { env: { SKILLD_SOCKET: '/s/e.sock' }, systemSocket: SYSTEM, exists: only(SYSTEM) }).source, 'SKILLD_SOCKET', 'never instead of a socket asked for');
  t.equal(chooseSocket('/s/f.sock', { env: {}, systemSocket: SYSTEM, exists: only(SYSTEM) }).source, 'flag');
  t.equal(SYSTEM_SOCKET, '/run/skilld/skilld.sock', "the systemd unit's socket");
});

t.test('where the socket came from, in words', async (t) => {
  t.equal(sourceText({ path: '/x', source: 'flag' }), 'from --socket');
  t.equal(sourceText({ path: '/x', source: 'SKILLD_SOCKET' }), 'from $SKILLD_SOCKET');
  t.match(sourceText({ path: '/x', source: 'runtime_dir' }, { env: { XDG_RUNTIME_DIR: '/run/user/7' } }), '$XDG_RUNTIME_DIR (/run/user/7)');
  t.match(sourceText({ path: '/x', source: 'fallback' }, { uid: 9 }), 'when $XDG_RUNTIME_DIR is unset (uid 9)');
  t.match(sourceText({ path: SYSTEM, source: 'system', absent: '/tmp/skilld-9/skilld.sock' }), 'the per-user default /tmp/skilld-9/skilld.sock does not exist');
});
