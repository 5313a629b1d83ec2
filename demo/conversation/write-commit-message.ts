import type { ModelReply } from '../../clients/skill-test/model-server.js';
import { readDiff, type DiffSummary } from './diff.js';
import { artifactsDir, finalAnswer, isInteractive, outputOf, question, ran, readSkillMd, shellWord, type SkillTurn } from './turn.js';

/**
 * `write-commit-message`: reads SKILL.md, runs `git diff --staged` (then `git diff` when nothing
 * is staged) in the given repository, asks the purpose in an interactive run, writes the message
 * to COMMIT_MSG.txt in the artifacts folder, and answers with its subject and body.
 */
export function writeCommitMessage(turn: SkillTurn): ModelReply {
  const skillMd = outputOf(turn, 'cat ');
  if (skillMd === null) return { toolCall: { command: readSkillMd(turn) } };
  const repo = shellWord(typeof turn.input['repository'] === 'string' ? turn.input['repository'] : '.');
  const staged = outputOf(turn, `git -C ${repo} diff --staged`);
  if (staged === null) return { toolCall: { command: `git -C ${repo} diff --staged` } };
  const unstaged = outputOf(turn, `git -C ${repo} diff --no-ext-diff`);
  if (staged.trim() === '' && unstaged === null) return { toolCall: { command: `git -C ${repo} diff --no-ext-diff` } };
  const diff = readDiff(staged.trim() === '' ? (unstaged ?? '') : staged);
  if (diff.files.length === 0) return finalAnswer('There is nothing to commit: the repository has no changes.', { subject: 'No changes to commit', body: `git diff shows no change in ${repo}.` });
  const [purpose] = turn.replies;
  if (isInteractive(skillMd) && purpose === undefined) {
    return question(`The change touches ${describeFiles(diff)}.`, 'What is the purpose of this change? One sentence is enough; I will use it in the body.');
  }
  const style = turn.parameter['style'] === 'plain' ? 'plain' : 'conventional';
  const subject = subjectLine(diff, style);
  const body = bodyText(diff, purpose);
  const folder = artifactsDir(skillMd);
  if (folder !== null && !ran(turn, 'mkdir -p ')) {
    const file = shellWord(`${folder}/COMMIT_MSG.txt`);
    return { toolCall: { command: `mkdir -p ${shellWord(folder)} && printf '%s\\n\\n%s\\n' ${shellWord(subject)} ${shellWord(body)} > ${file}` } };
  }
  return finalAnswer(`Here is the message${folder === null ? '' : ', also saved as COMMIT_MSG.txt'}.`, { subject, body });
}

/** At most 72 characters: `type: what` (conventional) or `What` (plain). */
export function subjectLine(diff: DiffSummary, style: 'conventional' | 'plain'): string {
  const what = whatChanged(diff);
  const line = style === 'conventional' ? `${diff.kind}: ${what.charAt(0).toLowerCase()}${what.slice(1)}` : what;
  return line.length <= 72 ? line : `${line.slice(0, 71).trimEnd()}…`;
}

function whatChanged(diff: DiffSummary): string {
  const [file] = diff.files;
  const [name] = diff.newNames;
  if (name !== undefined && file !== undefined) return `Add ${name}${diff.files.length === 1 ? ` to ${file.path}` : ''}`;
  if (diff.files.length === 1 && file !== undefined) return `${file.status === 'added' ? 'Add' : file.status === 'deleted' ? 'Remove' : 'Update'} ${file.path}`;
  return `Update ${describeFiles(diff)}`;
}

function bodyText(diff: DiffSummary, purpose: string | undefined): string {
  const why = purpose === undefined ? 'Written unattended: the diff does not say why, so the reason is left for you to add.' : sentence(purpose);
  const lines = diff.files.map((f) => `- ${f.path}: ${f.status}, +${f.added} -${f.removed}`);
  return [why, '', ...lines].join('\n');
}

function describeFiles(diff: DiffSummary): string {
  const paths = diff.files.map((f) => f.path);
  if (paths.length <= 2) return paths.join(' and ');
  return `${paths.slice(0, 2).join(', ')} and ${paths.length - 2} more`;
}

/** A reply as a sentence: capitalized, with a full stop. */
function sentence(text: string): string {
  const trimmed = text.trim().replace(/^./, (c) => c.toUpperCase());
  return /[.!?]$/.test(trimmed) ? trimmed : `${trimmed}.`;
}
