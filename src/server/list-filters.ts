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

/** The filters a list was asked with, by query parameter name (times ISO 8601 UTC ending in Z); those not given left out. */
export function givenFilters(filters: Record<string, string | number | Date | undefined>): Record<string, string | number> {
  return Object.fromEntries(Object.entries(filters).flatMap(([k, v]) => (v === undefined ? [] : [[k, v instanceof Date ? v.toISOString() : v]])));
}

/**
 * The parts every filtered list answers besides its items: `filters` (what was asked) and `empty`
 * (null, or the sentence naming the filters when nothing matched).
 */
export function listNotes(count: number, what: string, words: FilterWords, byName: Record<string, string | number | Date | undefined>) {
  return { filters: givenFilters(byName), empty: count === 0 ? emptyText(what, words) : null };
}

/** Their schema, for the route's response (and the OpenAPI document). */
export const listNotesSchema = {
  filters: Joi.object().pattern(Joi.string(), Joi.alternatives(Joi.string(), Joi.number())).required().description('The filters the list was asked with (times ISO 8601 UTC ending in Z).'),
  empty: Joi.string().allow(null).required().description('null, or when nothing matched a sentence naming the filters ("no captures of rig r7 in state failed").'),
};
