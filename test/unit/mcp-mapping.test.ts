import t from 'tap';
import { join } from 'node:path';
import { formFor } from '../../clients/mcp/elicit.js';
import { JOB_TOOL, REPLY_TOOL, skillTool, toolName, type SkillDetail } from '../../clients/mcp/tools.js';
import { artifactName, artifactUri, parseUri, resultUri } from '../../clients/mcp/uris.js';

function skill(over: Partial<SkillDetail> = {}): SkillDetail {
  return {
    id: 'greeter',
    version: '1.0.0',
    name: 'Greeter',
    description: 'Says hello.',
    status: 'ok',
    execution_modes: ['auto'],
    effective_engines: ['codex', 'gemini'],
    schemas: { input: { type: 'object' }, parameter: null, output: { type: 'object', properties: { greeting: { type: 'string' } } } },
    instructions: '# Greeter\n\nSay hello.\n',
    ...over,
  };
}

t.test('tool names: a safe id is the name; any other id gets its safe start and a hash, within 50 characters, never a job tool name', async (t) => {
  t.equal(toolName('summarize-text'), 'summarize-text');
  t.equal(toolName('a_b-C9'), 'a_b-C9');
  const dotted = toolName('team.summarize');
  t.match(dotted, /^team_summarize_[0-9a-f]{8}$/);
  t.not(toolName('team.summarize'), toolName('team_summarize'), 'two ids that sanitise alike keep distinct names');
  const long = 'x'.repeat(64);
  t.equal(toolName(long).length, 50);
  t.equal(toolName(long), toolName(long), 'stable');
  t.not(toolName('x'.repeat(63)), toolName(long));
  t.match(toolName(REPLY_TOOL), /^skilld_reply_[0-9a-f]{8}$/);
  t.match(toolName(JOB_TOOL), /^skilld_job_[0-9a-f]{8}$/);
});

t.test("a skill's schemas nested under input and parameter keep their references; an output schema only where every result meets it", async (t) => {
  const input = { $schema: 'https://json-schema.org/draft/2020-12/schema', type: 'object', properties: { a: { $ref: '#/$defs/a' }, b: { $ref: 'other.json#/x' } }, $defs: { a: { type: 'string' } } };
  const tool = skillTool(skill({ schemas: { input, parameter: true, output: { type: 'object', properties: { greeting: { type: 'string' } } } } }));
  t.match(tool.inputSchema.properties, {
    input: { type: 'object', properties: { a: { $ref: '#/properties/input/$defs/a' }, b: { $ref: 'other.json#/x' } } },
    parameter: { type: 'object' },
  });
  t.notOk('$schema' in (tool.inputSchema.properties?.['input'] ?? {}), 'no dialect below the root');
  t.match(tool.outputSchema, { type: 'object' });
  t.equal(skillTool(skill({ execution_modes: ['auto', 'interactive'] })).outputSchema, undefined, 'a run may end in the waiting answer');
  t.equal(skillTool(skill({ schemas: { input: null, parameter: null, output: { type: 'array' } } })).outputSchema, undefined, 'not an object');
  t.equal(skillTool(skill({ schemas: { input: null, parameter: null, output: { type: 'object', properties: { x: true } } } })).outputSchema, undefined, 'a boolean subschema MCP clients refuse');
  t.match(skillTool(skill()).description, /^Says hello\.\n\nWhat the skill's agent is told \(SKILL\.md\):\n# Greeter\n\nSay hello\.\n\nRuns the skilld skill "greeter"/);
  t.match(skillTool(skill({ instructions: 'y'.repeat(5000) })).description, `${'y'.repeat(4000)}…`);
});

t.test('input is required where the skill has an input schema; without one it may be left out (an empty object is sent)', async (t) => {
  t.same(skillTool(skill()).inputSchema.required, ['input']);
  const open = skillTool(skill({ schemas: { input: null, parameter: null, output: { type: 'object' } } })).inputSchema;
  t.equal(open.required, undefined, 'nothing is required');
  t.match(open.properties, { input: { type: 'object' } });
});

t.test('questions as forms: free text, a choice of labels answered with values, yes/no, allow/deny', async (t) => {
  const text = formFor({ interaction_id: 1, prompt: 'Why?', kind: 'open_text' });
  t.same(text.params, { message: 'Why?', requestedSchema: { type: 'object', properties: { answer: { type: 'string', title: 'Answer', minLength: 1 } }, required: ['answer'] } });
  t.equal(text.response({ answer: '--verbatim' }), '--verbatim');
  const options = [{ label: 'Paris', value: 'paris' }, { label: 'Paris', value: { city: 'paris', country: 'tx' } }, { label: 'Rome', value: undefined }];
  const choice = formFor({ interaction_id: 2, prompt: 'Which?', kind: 'choose_one', options });
  t.match(choice.params.requestedSchema.properties, { choice: { type: 'string', enum: ['Paris', 'Paris (2)', 'Rome'] } });
  t.same(choice.response({ choice: 'Paris (2)' }), { city: 'paris', country: 'tx' });
  t.equal(choice.response({ choice: 'Rome' }), 'Rome', 'an option without a value answers with its label');
  t.match(formFor({ interaction_id: 3, prompt: 'Sure?', kind: 'confirm' }).params.requestedSchema.properties, { choice: { enum: ['yes', 'no'] } });
  const approval = formFor({ interaction_id: 4, prompt: 'Allow the agent to run ls?', kind: 'approval', options: [{ label: 'allow', value: 'allow' }, { label: 'deny', value: 'deny' }] });
  t.match(approval.params.requestedSchema.properties, { choice: { enum: ['allow', 'deny'] } });
  t.equal(approval.response({ choice: 'deny' }), 'deny');
});

t.test('resource URIs: results and artifacts, names with folders and spaces, anything else refused', async (t) => {
  const job = 'job-0mhx2k9ab-3f9c1d2e4b';
  t.equal(resultUri(job), `skilld://jobs/${job}/result`);
  const path = join('/state', 'runs', job, 'workspace', 'artifacts', 'sub dir', 'a b.txt');
  t.equal(artifactName(job, path), 'sub dir/a b.txt');
  t.equal(artifactUri(job, 'sub dir/a b.txt'), `skilld://jobs/${job}/artifacts/sub%20dir/a%20b.txt`);
  t.same(parseUri(artifactUri(job, 'sub dir/a b.txt')), { jobId: job, kind: 'artifact', name: 'sub dir/a b.txt' });
  t.same(parseUri(resultUri(job)), { jobId: job, kind: 'result' });
  t.equal(parseUri(`skilld://jobs/${job}/logs`), null);
  t.equal(parseUri('file:///etc/passwd'), null);
  t.equal(parseUri(`skilld://jobs/${job}/artifacts/%E0%A4%A`), null, 'a broken escape');
});

t.test("the engine a tool offers first is the daemon's choice for the skill; without it, none is pressed on the caller", async (t) => {
  const engineOf = (over: Partial<SkillDetail>): { enum?: unknown; default?: unknown } => (skillTool(skill(over)).inputSchema.properties as Record<string, { enum?: unknown; default?: unknown }>)['engine'] ?? {};
  t.same(engineOf({ default_engine: 'gemini' }), { type: 'string', enum: ['codex', 'gemini'], default: 'gemini', description: 'The coding agent that runs the skill.' });
  t.equal(engineOf({}).default, 'codex', "a daemon that names no default: the skill's first");
});

t.test('a tool offers only the engines that can run now; none: it says so', async (t) => {
  const engineOf = (runnable: string[], over: Partial<SkillDetail> = {}): { enum?: unknown; default?: unknown; description?: unknown } =>
    (skillTool(skill(over), new Set(runnable)).inputSchema.properties as Record<string, { enum?: unknown; default?: unknown }>)['engine'] ?? {};
  t.match(engineOf(['gemini', 'claude']), { enum: ['gemini'], default: 'gemini' }, 'codex cannot run: gemini alone, and first');
  t.match(engineOf(['codex', 'gemini'], { default_engine: 'gemini' }), { enum: ['codex', 'gemini'], default: 'gemini' });
  const none = engineOf([]);
  t.notOk('enum' in none);
  t.match(none.description, /None of its engines can run on the daemon now/);
});
