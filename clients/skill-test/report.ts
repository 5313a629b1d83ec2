import { terminalText } from '../terminal-text.js';
import { diffLines } from './case-check.js';
import type { CaseResult } from './run-case.js';
import type { SkillTestReport } from './run-tests.js';

/** One case as `skills test` prints it: `ok` or `FAIL`, its name, engine, mode and job, then what differed. */
export function caseText(result: CaseResult): string {
  const { testCase, engine, mode } = result.planned;
  const head = `${result.differences.length === 0 ? 'ok  ' : 'FAIL'}  ${terminalText(testCase.name)}  (${engine}, ${mode}${result.jobId === null ? ', refused' : `, ${result.jobId}`})`;
  return [head, ...diffLines(result.differences).map((line) => `      ${terminalText(line)}`)].join('\n');
}

/** The last line: how many passed and failed. */
export function summaryText(skillId: string, results: readonly CaseResult[]): string {
  const failed = results.filter((r) => r.differences.length > 0).length;
  return `${terminalText(skillId)}: ${results.length - failed} passed, ${failed} failed`;
}

/** What `--keep` left: the private daemon's folder and what is in it, or the test jobs on the user's daemon; nothing without `--keep`. */
export function keptLines(report: SkillTestReport, keep: boolean): string[] {
  if (report.kept !== null) return keptFolderLines(report.kept);
  const ids = report.results.flatMap((r) => (r.jobId === null ? [] : [r.jobId]));
  if (!keep || ids.length === 0) return [];
  return [`kept the test jobs on the daemon: ${ids.join(' ')}`, `see one with: skillctl show ${ids[0]}; remove them with: skillctl rm ${ids.join(' ')}`];
}

function keptFolderLines(dir: string): string[] {
  return [
    `kept ${terminalText(dir)}:`,
    '  skilld.log             the test daemon\'s log',
    '  state/runs/<job id>/   each case\'s run folder: the prompt, the workspace, attempts/<n>/stdout.log and stderr.log',
    `remove it with: rm -rf ${terminalText(dir)}`,
  ];
}

/** The report as `--json` prints it; `daemon`: the socket of the user's daemon the cases ran on, else null; `kept`: the folder `--keep` left, else null. */
export function reportJson({ skillId, results, daemon, kept }: SkillTestReport): Record<string, unknown> {
  const cases = results.map((r) => ({
    name: r.planned.testCase.name,
    file: r.planned.testCase.file,
    engine: r.planned.engine,
    mode: r.planned.mode,
    job_id: r.jobId,
    passed: r.differences.length === 0,
    status: r.outcome.status,
    error: r.outcome.error,
    differences: r.differences,
  }));
  return { skill_id: skillId, passed: cases.filter((c) => c.passed).length, failed: cases.filter((c) => !c.passed).length, cases, daemon, kept };
}
