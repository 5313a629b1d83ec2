import { createHash, createHmac } from 'node:crypto';
import type { NotifyEvent } from '../base/config-notify.js';
import type { Pending } from '../model/gate.js';
import type { Job, JobOwner } from '../model/job.js';

/** What a receiver gets as the body of each POST (docs/notify.md, "Payload"). */
export interface NotifyPayload {
  event: NotifyEvent;
  /** When the job entered the status. */
  ts: string;
  job: {
    job_id: string;
    skill_id: string;
    /** The status it entered (the event's), not whatever it has moved on to since. */
    status: NotifyEvent;
    owner: JobOwner | null;
    /** The question, as `jobs/pending` gives it, for `waiting_user`; else null. */
    pending: Pending | null;
  };
}

export function buildPayload(event: NotifyEvent, ts: string, job: Pick<Job, 'job_id' | 'skill_id' | 'owner'>, pending: Pending | null): NotifyPayload {
  return { event, ts, job: { job_id: job.job_id, skill_id: job.skill_id, status: event, owner: job.owner ?? null, pending: event === 'waiting_user' ? pending : null } };
}

/** GitHub's scheme: `sha256=` and the hex HMAC-SHA256 of the raw body, keyed with the webhook's secret. */
export function signature(body: string, secret: string): string {
  return `sha256=${createHmac('sha256', secret).update(body, 'utf8').digest('hex')}`;
}

/** The headers of one attempt; the same delivery id on every attempt of a delivery, so that a receiver can drop repeats. */
export function deliveryHeaders(delivery: { id: string; event: NotifyEvent; body: string }, secret: string, userAgent: string): Record<string, string> {
  return {
    'Content-Type': 'application/json',
    'User-Agent': userAgent,
    'X-Skilld-Event': delivery.event,
    'X-Skilld-Delivery': delivery.id,
    'X-Skilld-Signature-256': signature(delivery.body, secret),
  };
}

/**
 * A webhook's URL as it may be shown (`notify/log`, the daemon's log): scheme, host, port and
 * path. Userinfo and query are left out: they often carry the receiver's credentials.
 */
export function shownUrl(url: string): string {
  const parsed = new URL(url);
  return `${parsed.protocol}//${parsed.host}${parsed.pathname}`;
}

/** The name a webhook goes by in the outbox: a digest of its URL, which may hold credentials and is not stored itself. */
export function hookKey(url: string): string {
  return createHash('sha256').update(url, 'utf8').digest('hex').slice(0, 32);
}
