import t from 'tap';
import { defaultEngine, defaultMode } from '../../daemon/skills/defaults.js';

const ALL = ['codex', 'gemini', 'iflow', 'claude'];

t.test('defaultEngine: the configured default_engine where the skill runs on it', async (t) => {
  t.equal(defaultEngine({ engines: null, effective_engines: ALL }, 'claude'), 'claude');
  t.equal(defaultEngine({ engines: ['claude', 'gemini'], effective_engines: ['gemini', 'claude'] }, 'gemini'), 'gemini');
});

t.test("defaultEngine: else the first of the skill's runner.json engines it runs on, in that list's order", async (t) => {
  t.equal(defaultEngine({ engines: ['claude', 'gemini'], effective_engines: ['gemini', 'claude'] }, null), 'claude', "runner.json's order, not the daemon's");
  t.equal(defaultEngine({ engines: ['claude', 'gemini'], effective_engines: ['gemini', 'claude'] }, 'codex'), 'claude', 'a default the skill does not run on falls back to it');
  t.equal(defaultEngine({ engines: ['claude', 'iflow'], effective_engines: ['iflow'] }, null), 'iflow', 'one its unsupported_engines leave out is passed over');
  t.equal(defaultEngine({ engines: ['aider', 'gemini'], effective_engines: ['gemini'] }, null), 'gemini', 'so is a name the daemon does not know');
});

t.test("defaultEngine: without runner.json engines, the first effective engine in the daemon's order; null when it runs on none", async (t) => {
  t.equal(defaultEngine({ engines: null, effective_engines: ALL }, null), 'codex');
  t.equal(defaultEngine({ engines: null, effective_engines: ['codex', 'iflow', 'claude'] }, 'gemini'), 'codex');
  t.equal(defaultEngine({ engines: [], effective_engines: [] }, 'codex'), null);
});

t.test('defaultMode: a skill with one mode runs in it; with both, auto', async (t) => {
  t.equal(defaultMode(['interactive']), 'interactive');
  t.equal(defaultMode(['auto']), 'auto');
  t.equal(defaultMode(['interactive', 'auto']), 'auto');
});
