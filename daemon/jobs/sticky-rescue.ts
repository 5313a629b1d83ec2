import { APPROVAL_KIND } from './approvals.js';
import type { Job } from '../model/job.js';

/**
 * The opt-in rescue of a waiting sticky job whose live process is lost (`engines.<name>.
 * sticky_recovery: "resume"`): the job keeps waiting, and from then on it is resumable — each
 * reply resumes the stored session in a new one-shot process (Codex `exec resume`, Gemini
 * `--resume`, never ACP's `session/load`, which damages the session; Claude Code `--resume`).
 */

/** What the job becomes, or why it cannot be rescued. */
export type Rescue = { patch: Partial<Job> } | { reason: string };

/** The job's rescue after its process `how` (e.g. "was killed by SIGKILL"), when its pending round is of `pendingKind`. */
export function rescueOf(job: Job, pendingKind: string | null, how: string): Rescue {
  if (job.session_handle === null) return { reason: 'no session id is stored to resume' };
  // An approval is asked inside a turn: the turn died with the process, and nothing can answer it.
  if (pendingKind === APPROVAL_KIND) return { reason: 'it waited for an approval, which the lost turn cannot receive' };
  return {
    patch: {
      interactive_profile: { kind: 'resumable', reason: `sticky_recovery "resume": the live engine process ${how}; each reply resumes session ${job.session_handle.handle_value} in a new process` },
      // A resumable strict wait has no deadline; a non-strict one keeps its own.
      wait_deadline_at: job.interactive_require_user_reply ? null : job.wait_deadline_at,
      warnings: [...new Set([...job.warnings, 'INTERACTION_PROCESS_RESCUED' as const])],
    },
  };
}
