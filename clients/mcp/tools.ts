import { createHash } from 'node:crypto';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import type { SkillView } from '../wire.js';

/** A skill as `skills/get` answers it: the view, its schemas and its SKILL.md. */
export interface SkillDetail extends SkillView {
  name: string;
  description: string;
  schemas: { input: unknown; parameter: unknown; output: unknown };
  instructions?: string | null;
}

/** The tool that answers a waiting job's question. */
export const REPLY_TOOL = 'skilld_reply';
/** The tool that tells where a job stands. */
export const JOB_TOOL = 'skilld_job';

/** Tool names stay within what every agent CLI keeps as it is: Gemini prefixes `mcp_<server>_` and caps at 63, Codex caps at 64 bytes. */
const TOOL_NAME_MAX = 50;
const PLAIN_NAME = /^[A-Za-z0-9_-]+$/;
/** How much of SKILL.md a tool's description carries. */
const INSTRUCTIONS_MAX_CHARS = 4000;

/**
 * The tool name of a skill: its id where that is already a safe name; otherwise (a `.` in it, too
 * long, or one of the server's own tool names) the id's safe start and a hash of the whole id, so
 * that the name stays stable and distinct.
 */
export function toolName(skillId: string): string {
  if (PLAIN_NAME.test(skillId) && skillId.length <= TOOL_NAME_MAX && skillId !== REPLY_TOOL && skillId !== JOB_TOOL) return skillId;
  const hash = createHash('sha256').update(skillId).digest('hex').slice(0, 8);
  return `${skillId.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, TOOL_NAME_MAX - hash.length - 1)}_${hash}`;
}

/** The execution mode a call gets when it names none: auto where the skill offers it (nobody is asked anything), else its first. */
export function defaultMode(skill: SkillView): string {
  return skill.execution_modes.includes('auto') ? 'auto' : (skill.execution_modes[0] ?? 'auto');
}

/**
 * One skill as an MCP tool (docs/mcp.md, "Tools"). `runnable`: the engines that can run on the
 * daemon now (engines/list); only those are offered. Not given: every engine of the skill.
 */
export function skillTool(skill: SkillDetail, runnable?: ReadonlySet<string>): Tool {
  const output = outputSchemaOf(skill);
  return {
    name: toolName(skill.id),
    title: skill.name,
    description: describe(skill),
    inputSchema: inputSchemaOf(skill, runnable),
    ...(output === undefined ? {} : { outputSchema: output }),
    annotations: { title: skill.name, readOnlyHint: false, openWorldHint: true },
  };
}

/** The engines offered, the daemon's choice first where it is one of them; none can run: said so, and the daemon's answer will say why. */
function engineProperty(engines: readonly string[], chosen: string | null | undefined): Record<string, unknown> {
  if (engines.length === 0) return { type: 'string', description: 'The coding agent that runs the skill. None of its engines can run on the daemon now (skillctl engines says why).' };
  const first = typeof chosen === 'string' && engines.includes(chosen) ? chosen : engines[0];
  return { type: 'string', enum: engines, default: first, description: 'The coding agent that runs the skill.' };
}

function inputSchemaOf(skill: SkillDetail, runnable: ReadonlySet<string> | undefined): Tool['inputSchema'] {
  const { input, parameter } = skill.schemas;
  const engines = skill.effective_engines.filter((engine) => runnable === undefined || runnable.has(engine));
  return {
    type: 'object',
    properties: {
      input: nested(input, '/properties/input', "The skill's input."),
      ...(parameter === null ? {} : { parameter: nested(parameter, '/properties/parameter', "The skill's parameters.") }),
      engine: engineProperty(engines, skill.default_engine),
      execution_mode: {
        type: 'string',
        enum: skill.execution_modes,
        default: defaultMode(skill),
        description: 'auto runs to the end unattended; interactive may ask questions on the way.',
      },
    },
    // Without an input schema any object will do, and none means an empty one.
    ...(input === null ? {} : { required: ['input'] }),
    additionalProperties: false,
  };
}

/**
 * A skill schema placed below the tool's root: its `#…` references are moved along, and anything
 * that is not an object schema (none given, `true`) becomes "any object".
 */
function nested(schema: unknown, pointer: string, description: string): Record<string, unknown> {
  if (!isObject(schema)) return { type: 'object', description };
  const { $schema: _dialect, ...rest } = schema;
  return { description, ...(moveRefs(rest, pointer) as Record<string, unknown>) };
}

function moveRefs(value: unknown, pointer: string): unknown {
  if (Array.isArray(value)) return value.map((item) => moveRefs(item, pointer));
  if (!isObject(value)) return value;
  return Object.fromEntries(
    Object.entries(value).map(([key, item]) => [key, key === '$ref' && typeof item === 'string' && /^#(\/|$)/.test(item) ? `#${pointer}${item.slice(1)}` : moveRefs(item, pointer)]),
  );
}

/**
 * The skill's output schema where every result of the tool meets it: an object schema (as MCP
 * requires at the root), for a skill that runs auto only. An interactive run can end a call with
 * the waiting answer instead, which no skill schema describes (docs/mcp.md, "The waiting answer").
 */
function outputSchemaOf(skill: SkillDetail): Tool['outputSchema'] {
  const schema = skill.schemas.output;
  if (!isObject(schema) || schema['type'] !== 'object' || skill.execution_modes.includes('interactive')) return undefined;
  const properties = schema['properties'];
  if (properties !== undefined && !(isObject(properties) && Object.values(properties).every(isObject))) return undefined;
  const required = schema['required'];
  if (required !== undefined && !(Array.isArray(required) && required.every((item) => typeof item === 'string'))) return undefined;
  return schema as Tool['outputSchema'];
}

function describe(skill: SkillDetail): string {
  const interactive = skill.execution_modes.includes('interactive');
  const instructions = (skill.instructions ?? '').trim();
  const cut = instructions.length > INSTRUCTIONS_MAX_CHARS ? `${instructions.slice(0, INSTRUCTIONS_MAX_CHARS)}…` : instructions;
  const parts = [
    skill.description.trim() === '' ? skill.name : skill.description.trim(),
    cut === '' ? '' : `What the skill's agent is told (SKILL.md):\n${cut}`,
    `Runs the skilld skill "${skill.id}" (version ${skill.version ?? '-'}) as a job on the local skilld daemon and returns its output.` +
      (interactive
        ? ' With execution_mode interactive the skill may ask questions: they are put to the user when the client can ask, otherwise the call ' +
          `returns {job_id, status: "waiting_user", pending}; answer with ${REPLY_TOOL}.`
        : ''),
  ];
  return parts.filter((part) => part !== '').join('\n\n');
}

/** The server's own tools, offered beside the skills whatever the client can do. */
export const JOB_TOOLS: readonly Tool[] = [
  {
    name: REPLY_TOOL,
    title: 'Answer a skilld job',
    description:
      "Answers the question a waiting skilld job asks (the pending of a call that returned status waiting_user), then follows the job as the skill's own tool does: " +
      'it returns the output when the job ends, or the next question. response is sent to the job as it is: for a question with options send the option value; ' +
      'for an approval, allow or deny.',
    inputSchema: {
      type: 'object',
      properties: {
        job_id: { type: 'string', description: 'The job, as the waiting answer names it.' },
        response: { type: 'string', description: 'The answer, sent verbatim.' },
        interaction_id: { type: 'integer', minimum: 1, description: "The question's interaction_id; default: the one pending now." },
      },
      required: ['job_id', 'response'],
      additionalProperties: false,
    },
  },
  {
    name: JOB_TOOL,
    title: 'Show a skilld job',
    description: 'Where a skilld job stands: its status, the question it waits on (pending), and its output or error once it has ended. Does not wait.',
    inputSchema: {
      type: 'object',
      properties: { job_id: { type: 'string', description: 'The job.' } },
      required: ['job_id'],
      additionalProperties: false,
    },
    annotations: { readOnlyHint: true },
  },
];

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
