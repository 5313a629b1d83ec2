import type { ModelReply } from '../../clients/skill-test/model-server.js';
import { finalAnswer, outputOf, question, readSkillMd, type SkillTurn } from './turn.js';
import { itinerary, type Budget, type Interest } from './itinerary.js';

/**
 * `plan-trip` (interactive): reads SKILL.md, asks how long and what the traveller enjoys, asks the
 * budget unless the first reply said it, then proposes a day-by-day plan built from the replies.
 */
export function planTrip(turn: SkillTurn): ModelReply {
  if (outputOf(turn, 'cat ') === null) return { toolCall: { command: readSkillMd(turn) } };
  const destination = typeof turn.input['destination'] === 'string' ? turn.input['destination'] : 'your destination';
  const [first, second] = turn.replies;
  if (first === undefined) {
    return question(`Happy to plan your trip to ${destination}. First, a little about you.`, `How many days will you spend in ${destination}, and what do you enjoy most: museums, food, walking or nightlife? Anything to avoid?`);
  }
  const wishes = readWishes(first);
  const budget = budgetIn(first) ?? (second === undefined ? null : (budgetIn(second) ?? 'moderate'));
  if (budget === null) {
    return question(`Noted: ${wishes.days} ${wishes.days === 1 ? 'day' : 'days'}, ${listed(wishes.interests)}.`, 'What budget should I plan for?', BUDGET_OPTIONS);
  }
  const days = itinerary(destination, wishes.days, wishes.interests, budget);
  const notes = [
    `${wishes.days} ${wishes.days === 1 ? 'day' : 'days'} in ${destination} for someone who enjoys ${listed(wishes.interests)}, on a ${budget} budget. ${BUDGET_TIPS[budget]}`,
    'Allow 20 to 30 minutes between neighbourhoods on public transport, and check opening hours: many museums close one day a week.',
    wishes.avoid === null ? '' : `Kept clear of ${wishes.avoid}, as you asked.`,
    `Your answers: ${turn.replies.map((r) => JSON.stringify(r)).join('; ')}.`,
  ];
  return finalAnswer(`Here is a ${wishes.days}-day plan for ${destination}.`, { destination, days, notes: notes.filter((n) => n !== '').join(' ') });
}

const BUDGET_OPTIONS = [
  { label: 'Shoestring: free sights and street food', value: 'shoestring' },
  { label: 'Moderate: some paid entries and sit-down meals', value: 'moderate' },
  { label: 'Comfortable: guided tours and well-known restaurants', value: 'comfortable' },
];

const BUDGET_TIPS: Record<Budget, string> = {
  shoestring: 'Most viewpoints, churches and markets are free, and many museums have a free-entry day.',
  moderate: 'A day pass for public transport pays off from the third ride.',
  comfortable: 'Book the restaurants and any guided tour a few days ahead.',
};

const INTERESTS: Array<[Interest, RegExp]> = [
  ['museums', /museum|\bart\b|galler|histor/i],
  ['food', /food|\beat|restaurant|cuisine|market|wine/i],
  ['walking', /walk|hik|\bparks?\b|outdoor|nature|stroll/i],
  ['nightlife', /nightlife|night out|\bbars?\b|club|music|drink|party/i],
];

const NUMBERS: Record<string, number> = { one: 1, two: 2, three: 3, four: 4, five: 5, six: 6, seven: 7, a: 1 };

/** Days, interests and anything to avoid, from a free-text reply. */
export function readWishes(reply: string): { days: number; interests: Interest[]; avoid: string | null } {
  const count = /\b(\d+|one|two|three|four|five|six|seven|a)[\s-]*(day|night|week)s?\b/i.exec(reply);
  let days = 3;
  if (count !== null) {
    const n = Number.parseInt(count[1] as string, 10) || NUMBERS[(count[1] as string).toLowerCase()] || 1;
    const unit = (count[2] as string).toLowerCase();
    days = unit === 'week' ? 7 * n : unit === 'night' ? n + 1 : n;
  } else if (/weekend/i.test(reply)) days = 2;
  const avoided = /\b(?:avoid|no|not|without|skip)\s+([^,.;!?]+)/i.exec(reply);
  const avoid = avoided?.[1]?.trim() ?? null;
  // What to avoid is no interest: "no museums" must not plan museums.
  const wanted = avoided === null ? reply : reply.replace(avoided[0], '');
  const found = INTERESTS.map(([name, pattern]) => ({ name, at: wanted.search(pattern) })).filter((i) => i.at >= 0);
  return {
    days: Math.min(Math.max(days, 1), 7),
    interests: found.length === 0 ? ['walking', 'food', 'museums'] : found.sort((a, b) => a.at - b.at).map((i) => i.name),
    avoid,
  };
}

/** The budget a reply names, or null. */
export function budgetIn(reply: string): Budget | null {
  if (/shoestring|cheap|tight|on a budget|low[\s-]cost|student/i.test(reply)) return 'shoestring';
  if (/comfortable|luxur|splurge|high[\s-]end|generous/i.test(reply)) return 'comfortable';
  if (/moderate|mid|medium|reasonable|average/i.test(reply)) return 'moderate';
  return null;
}

function listed(items: readonly string[]): string {
  return items.length <= 1 ? (items[0] ?? '') : `${items.slice(0, -1).join(', ')} and ${items[items.length - 1] as string}`;
}
