import type { ExecutionMode } from './job.js';

/**
 * Runtime patches appended to the run's copy of SKILL.md (TP-4..TP-7): artifact redirection in both
 * modes, the completion contract, and the mode patch. Pure text builders.
 */
export function patchSkillMd(original: string, mode: ExecutionMode, artifactsDir: string): string {
  return [original.trimEnd(), artifactPatch(artifactsDir), completionPatch(), mode === 'auto' ? autoPatch() : interactivePatch()].join('\n\n') + '\n';
}

function artifactPatch(artifactsDir: string): string {
  return [
    '## Runtime: where to write files',
    `Write every deliverable file (reports, images, generated code meant for the user) under \`${artifactsDir}\`.`,
    'Create sub-folders there as needed. Files written anywhere else are not collected as artifacts.',
  ].join('\n');
}

function completionPatch(): string {
  return [
    '## Runtime: how to finish',
    'When the task is complete, end your final message with a single JSON object that matches the output schema,',
    'and include the key `"__SKILL_DONE__": true` in that object. The key marks completion; it is removed before validation.',
  ].join('\n');
}

function autoPatch(): string {
  return [
    '## Runtime: unattended run',
    'Nobody is available to answer questions during this run. Do not ask the user anything and do not wait for input:',
    'make reasonable assumptions, note them in your result, and finish in this single turn.',
  ].join('\n');
}

function interactivePatch(): string {
  return [
    '## Runtime: interactive run',
    'A person follows this run and can answer you. When you need a decision or information you cannot infer,',
    'ask for it: one question per turn, then end your turn and wait for the reply.',
    'You may describe the question in a hint block, in YAML, anywhere in your message:',
    '',
    '<ASK_USER_YAML>',
    'prompt: The question, in one or two sentences',
    'kind: open_text        # or choose_one, confirm',
    'options:               # optional, for choices',
    '  - label: A readable choice',
    '    value: a-value',
    'ui_hints: {}           # optional',
    '</ASK_USER_YAML>',
    '',
    'The hint is optional; a plain question works too. Once you have what you need, finish as described above.',
  ].join('\n');
}

export interface FirstTurnPromptInput {
  skillId: string;
  skillVersion: string;
  skillMdPath: string;
  template: string | null;
  input: Record<string, unknown>;
  parameter: Record<string, unknown>;
}

/** The first turn's prompt: names the skill and its patched SKILL.md, then one `- name: <JSON>` line per value. */
export function firstTurnPrompt(p: FirstTurnPromptInput): string {
  const intro = p.template ?? `Run the skill "${p.skillId}" (version ${p.skillVersion}). Read ${p.skillMdPath} and follow its instructions exactly.`;
  return [intro, '', 'Inputs:', ...valueLines(p.input), '', 'Parameters:', ...valueLines(p.parameter)].join('\n');
}

function valueLines(values: Record<string, unknown>): string[] {
  const entries = Object.entries(values);
  return entries.length === 0 ? ['(none)'] : entries.map(([name, value]) => `- ${name}: ${JSON.stringify(value)}`);
}

/** A reply turn's prompt: the reply text itself, or the JSON of a non-string response. */
export function replyPrompt(response: unknown): string {
  return typeof response === 'string' ? response : JSON.stringify(response);
}
