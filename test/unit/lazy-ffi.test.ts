// Nothing loads koffi (libc through an FFI) by being imported: the daemon's modules and skillctl's
// import it not; the state folder's lock imports it when it is taken, and the daemon when it
// starts, for peer credentials and user lookups. A file of its
// own: a process cannot unload a native module once another test has loaded it.
import t from 'tap';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const koffiLoaded = (): boolean => Object.keys(require.cache).some((path) => path.includes('/node_modules/koffi/') || path.includes('/node_modules/@koromix/'));

t.test('daemon/main, the lock\'s module and the command table load without koffi; taking the lock loads it (the check sees it)', async (t) => {
  await import('../../daemon/main.js');
  await import('../../clients/table.js');
  const { loadFlock } = await import('../../daemon/state-lock.js');
  t.notOk(koffiLoaded(), 'not loaded by importing them');
  await loadFlock();
  t.ok(koffiLoaded(), 'loaded once flock is wanted');
});
