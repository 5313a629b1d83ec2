/** What a traveller may enjoy, as `plan-trip`'s SKILL.md lists it. */
export type Interest = 'museums' | 'food' | 'walking' | 'nightlife';
export type Budget = 'shoestring' | 'moderate' | 'comfortable';

/** One day of the plan, as the skill's output schema has it. */
export interface PlanDay {
  day: number;
  morning: string;
  afternoon: string;
  evening: string;
}

type Slot = 'morning' | 'afternoon' | 'evening';
const SLOTS: readonly Slot[] = ['morning', 'afternoon', 'evening'];

/** Activities per interest and part of the day; `{d}` is the destination, `{meal}` a place to eat on the budget. */
const ACTIVITIES: Record<Interest, Record<Slot, string[]>> = {
  museums: {
    morning: ['The main art museum of {d}, right at opening, before the tour groups', 'The city history museum, for the story behind what you will see', 'A smaller gallery or house museum away from the main squares'],
    afternoon: ["A walk past the old quarter's churches and monuments, going into the ones that are open", 'A second museum; most close around 6 pm, so be there by 3 pm', 'The design or contemporary art museum, usually quieter than the big ones'],
    evening: ["A concert or an evening opening, if one is on (check the week's listings), then dinner at {meal}", 'An early dinner near the museums, at {meal}', 'A guided night tour of the old town, then dinner at {meal}'],
  },
  food: {
    morning: ['Breakfast at a neighbourhood bakery, then the central market while the stalls are full', 'Coffee and pastries where the locals stand at the counter, then a round of the food shops', 'The fish market early, then a late breakfast nearby'],
    afternoon: ['A food walk through the old town: snack bars, a cheese shop, a wine bar', 'A cooking class of local dishes (about three hours, lunch included)', 'A long lunch at {meal}, the way the locals take it'],
    evening: ['Dinner at {meal}; book a day ahead', 'Small plates and a glass of local wine, bar to bar, in a busy quarter of {d}', 'A food hall for dinner: many small counters, one table'],
  },
  walking: {
    morning: ['A walk from the highest viewpoint of {d} down through the old streets', 'A self-guided walk through the oldest neighbourhood, with stops at its squares', 'An early walk through the botanical garden or the biggest park, before the heat'],
    afternoon: ['A long walk along the waterfront', 'A tram or bus out to a quieter district, and a walk back through it', 'A walk between the viewpoints on the other side of the centre'],
    evening: ['Sunset at a viewpoint, then a stroll back through the lit-up centre and dinner at {meal}', 'An evening walk along the river or the old walls, then dinner at {meal}', 'A walk across the main square and the avenues at dusk, then dinner at {meal}'],
  },
  nightlife: {
    morning: ['A slow start: a late breakfast near where you stay', 'A late, easy morning: a café terrace and a short walk', 'A lazy morning, then brunch at a café'],
    afternoon: ['A walk through the quarter known for its bars, to pick tonight’s places', 'A rooftop or terrace bar for the late afternoon', 'A nap; tonight starts late'],
    evening: ['Dinner at {meal}, then drinks in the liveliest quarter of {d}; things get going after 11 pm', 'Live music (a small club or a traditional music house) after dinner at {meal}', 'Dinner at {meal}, then a club until late'],
  },
};

const MEALS: Record<Budget, string> = {
  shoestring: 'a cheap local canteen',
  moderate: 'a family-run restaurant serving local dishes',
  comfortable: 'one of the well-known restaurants of the city',
};

/**
 * A plan of `days` days in `destination`: the interests take turns through the mornings,
 * afternoons and evenings, shifted by one each day, with a different activity each time one comes back.
 */
export function itinerary(destination: string, days: number, interests: readonly Interest[], budget: Budget): PlanDay[] {
  const plan: PlanDay[] = [];
  const used = new Map<string, number>();
  for (let day = 1; day <= days; day += 1) {
    const parts = SLOTS.map((slot, s) => {
      const interest = interests[(day - 1 + s) % interests.length] as Interest;
      const pool = ACTIVITIES[interest][slot];
      const key = `${interest}/${slot}`;
      const n = used.get(key) ?? 0;
      used.set(key, n + 1);
      const text = (pool[n % pool.length] as string).replaceAll('{d}', destination).replaceAll('{meal}', MEALS[budget]);
      return text.charAt(0).toUpperCase() + text.slice(1);
    });
    const [morning = '', afternoon = '', evening = ''] = parts;
    plan.push({ day, morning: day === 1 ? `Arrive and drop your bags. ${morning}` : morning, afternoon, evening: day === days && days > 1 ? `Last evening: ${lower(evening)}` : evening });
  }
  return plan;
}

function lower(text: string): string {
  return text.charAt(0).toLowerCase() + text.slice(1);
}
