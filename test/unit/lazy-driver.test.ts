// A daemon with the files store never loads the PostgreSQL driver: it is imported only when the
// store is a PostgreSQL URL (cluster/shared-storage.ts), which keeps every other start smaller.
import t from 'tap';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const pgLoaded = (): boolean => Object.keys(require.cache).some((path) => path.includes('/node_modules/pg/'));

t.test('daemon/main loads without pg; opening a shared store loads it', async (t) => {
  await import('../../daemon/main.js');
  t.notOk(pgLoaded(), 'not loaded by the daemon itself');
  await import('../../daemon/cluster/shared-storage.js');
  t.ok(pgLoaded(), 'loaded with the shared store (the check sees it)');
});
