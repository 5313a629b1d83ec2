// skillctl's command table loads neither the MCP SDK nor the daemon's schema compiler: only
// `skillctl mcp` and `skillctl skills validate|new` need them, and every other command would pay
// for them at each start (about 30 MiB resident and half a second on a small machine). A file of
// its own (not lazy-driver's): the daemon loads Ajv, and a process cannot unload it.
import t from 'tap';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const ajvLoaded = (): boolean => Object.keys(require.cache).some((path) => path.includes('/node_modules/ajv/'));

t.test('the command table loads without ajv; the MCP server loads it (the check sees it)', async (t) => {
  await import('../../clients/table.js');
  t.notOk(ajvLoaded(), 'not loaded by the command table');
  await import('../../clients/mcp/server.js');
  t.ok(ajvLoaded(), 'loaded with the MCP server');
});
