import Joi from 'joi';

/** A filter of a list as words and the value asked for: ['of rig', 'r7'], ['since', a Date]. */
export type FilterWords = [words: string, value: string | number | Date | undefined][];

const text = (v: string | number | Date) => (v instanceof Date ? v.toISOString() : String(v));

/**
 * What an empty list says, naming every filter it was asked with: "no captures of rig r7 in state
 * failed", "no reports of rig r7 since 2026-11-20T00:00:00.000Z"; "no captures yet" only without one.
 */
export function emptyText(what: string, filters: FilterWords): string {
  const given = filters.filter((f): f is [string, string | number | Date] => f[1] !== undefined).map(([words, v]) => `${words} ${text(v)}`);
  return given.length ? `no ${what} ${given.join(' ')}` : `no ${what} yet`;
}

/** A filter of a list: its query parameter, its words in a sentence, the value asked for (undefined: not given). */
export type ListFilter = [param: string, words: string, value: string | number | Date | undefined];

/**
 * The parts every filtered list answers besides its items: `filters` (what was asked, by query
 * parameter, times ISO 8601 UTC ending in Z) and `empty` (null, or the sentence naming the filters
 * when nothing matched).
 */
export function listNotes(count: number, what: string, filters: ListFilter[]) {
  const given = filters.flatMap(([param, , v]) => (v === undefined ? [] : [[param, text(v)] as const]));
  return { filters: Object.fromEntries(given), empty: count === 0 ? emptyText(what, filters.map(([, words, v]) => [words, v])) : null };
}

/** Their schema, for the route's response (and the OpenAPI document). */
export const listNotesSchema = {
  filters: Joi.object().pattern(Joi.string(), Joi.alternatives(Joi.string(), Joi.number())).required().description('The filters the list was asked with (times ISO 8601 UTC ending in Z).'),
  empty: Joi.string().allow(null).required().description('null, or when nothing matched a sentence naming the filters ("no captures of rig r7 in state failed").'),
};
