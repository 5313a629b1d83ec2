import { isIP, type Socket } from 'node:net';
import { plainAnswer, refusedAnswer, type Answer } from './proxy-answer.js';
import type { ProxyTarget } from './proxy-target.js';

/** What the egress proxy asks about each target, and tells of each refusal; the allow-list implements it. */
export interface ProxyPolicy {
  /** Where a connection asked for host:port may go: the address to dial, or why not (a short reason code and a detail in words). */
  decide(host: string, port: number): Promise<{ address: string; family: 4 | 6 } | { refused: string; detail: string }>;
  /** Told of each refusal, once the client has its answer. */
  refused(host: string, port: number, reason: string, detail: string): void;
}

/**
 * How long a dial may take before the client gets a 504. The proxy's only timer: once connected,
 * a tunnel or a request lasts as long as its two ends keep it (a model's streamed answer can take
 * minutes).
 */
export const DIAL_TIMEOUT_MS = 10_000;

/** What a tunnel or a forwarded request needs of the proxy: its policy, and a place to register each connection it opens (so that close() ends it). */
export interface ProxyParts {
  policy: ProxyPolicy;
  track(socket: Socket): void;
}

/** Where to connect: an IP address of the family given, never a name to resolve again. */
export interface Dial {
  host: string;
  port: number;
  family: 4 | 6;
}

/** What to do for a target: dial, or give an answer and then run `after` (which tells the policy of a refusal). */
export type Verdict = { dial: Dial } | { answer: Answer; after: () => void };

/** Asks `policy` about `target`; a policy that fails, or names no IP address, gets the client a 500 rather than a guess. */
export async function judge(policy: ProxyPolicy, target: ProxyTarget): Promise<Verdict> {
  let decision: Awaited<ReturnType<ProxyPolicy['decide']>>;
  try {
    decision = await policy.decide(target.host, target.port);
  } catch {
    return { answer: plainAnswer(500, `the proxy could not decide on ${target.authority}`), after: () => undefined };
  }
  if ('refused' in decision) {
    const { refused, detail } = decision;
    return { answer: refusedAnswer(target.authority, refused, detail), after: () => policy.refused(target.host, target.port, refused, detail) };
  }
  // A name here would be resolved again by the dial, to an address the policy never saw.
  if (isIP(decision.address) !== decision.family) {
    return { answer: plainAnswer(500, `the proxy has no address to dial for ${target.authority}`), after: () => undefined };
  }
  return { dial: { host: decision.address, port: target.port, family: decision.family } };
}
