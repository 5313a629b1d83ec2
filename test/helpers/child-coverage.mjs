// Coverage for the processes the tests start (daemons, skillctl, the engines and helpers they
// start), without tap's module loader.
//
// tap gives every process below a test file `--import` of @tapjs/processinfo, which records the
// process, collects its V8 coverage and, on Node 20, registers a module loader: every ES module
// then loads through a hooks thread. A daemon loads ~350 of them, so each daemon a test starts
// took ~450 ms longer to be ready (~920 ms instead of ~460), a skillctl command ~220 ms, a fake
// engine ~95 ms. The loader only records which files a process loaded (for `tap --changed`);
// coverage needs none of it.
//
// This module, given to test files by .taprc's `node-arg`, puts itself in place of that import in
// the environment of every process a test (or a process below it) starts. In such a process it
// does what processinfo does minus the loader: the process's record, its coverage in
// .tap/coverage (the files tap's report reads, filtered as processinfo filters them, with the
// source maps that lead back to the TypeScript), and the same for the processes it starts.
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const esm = (file) => new URL(`../../node_modules/@tapjs/processinfo/dist/esm/${file}`, import.meta.url).href;
const { importMatch } = await import(esm('loader-paths.js'));
const { argvToNodeOptions, nodeOptionsToArgv } = await import('node-options-to-argv');
const onSpawn = require('process-on-spawn');

const ours = `--import=${import.meta.url}`;
/** NODE_OPTIONS with processinfo's import replaced by this module (once). */
function swapped(options) {
  const kept = nodeOptionsToArgv(options ?? '').filter((arg) => arg !== ours && !(arg.startsWith('--import=') && importMatch(arg.slice('--import='.length))));
  return argvToNodeOptions([...kept, ours]);
}

// As processinfo does, every child gets the hook and processinfo's settings (those its own
// environment does not set). In a test file this runs after processinfo's own listener
// (registered by its import, which comes first), so the child gets this module, not the loader.
onSpawn.addListener((spawned) => {
  const env = spawned.env;
  const settings = Object.entries(process.env).filter(([name]) => name.startsWith('_TAPJS_PROCESSINFO_') && !Object.hasOwn(env, name));
  spawned.env = { ...env, ...Object.fromEntries(settings), NODE_OPTIONS: swapped(env.NODE_OPTIONS) };
});

const kProcessInfo = Symbol.for('@tapjs/processinfo.ProcessInfoNodeData');
if (globalThis[kProcessInfo] === undefined) {
  // A process below a test: processinfo's record and coverage, registered by hand so that its
  // environment hook (which would give the children the loader again) stays out.
  process.env.__TAPJS_PROCESSINFO_TESTING_NO_REGISTER__ = String(process.pid);
  const { getProcessInfo } = await import(esm('get-process-info.js'));
  getProcessInfo();
  delete process.env.__TAPJS_PROCESSINFO_TESTING_NO_REGISTER__;
  (await import(esm('register-coverage.js'))).register();
  (await import(esm('register-process-end.js'))).register();
}
