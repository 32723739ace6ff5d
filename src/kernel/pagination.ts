// Cursor pagination shared by every list endpoint: newest first, by the time-ordered id.
import { and, asc, desc, gt, gte, lt, lte, type SQL } from 'drizzle-orm';
import type { PgColumn } from 'drizzle-orm/pg-core';
import { ApiError } from './errors.js';
import { parseId, type IdPrefix } from './ids.js';

export interface ListParams {
  limit?: number;
  starting_after?: string;
  ending_before?: string;
  'created[gte]'?: string;
  'created[lte]'?: string;
}

export interface Page<T> {
  object: 'list';
  data: T[];
  has_more: boolean;
}

export interface PagePlan {
  where: SQL | undefined;
  orderBy: SQL;
  /** Rows to fetch: one more than asked, to learn has_more without counting. */
  fetch: number;
  limit: number;
  backwards: boolean;
}

/** A query parameter holding an id of `prefix`, as a UUID; a typed 400 naming the parameter otherwise. */
export function idParam(prefix: IdPrefix, param: string, value: string): string {
  const uuid = parseId(prefix, value);
  if (!uuid) throw new ApiError('parameter_invalid', { param, message: `${param} must be an id starting with ${prefix}_.` });
  return uuid;
}

export function planPage(prefix: IdPrefix, id: PgColumn, createdAt: PgColumn, params: ListParams): PagePlan {
  if (params.starting_after && params.ending_before) {
    throw new ApiError('parameter_invalid', {
      param: 'ending_before',
      message: 'starting_after and ending_before cannot be used together.',
    });
  }
  const limit = params.limit ?? 10;
  const conditions: (SQL | undefined)[] = [];
  if (params.starting_after) conditions.push(lt(id, idParam(prefix, 'starting_after', params.starting_after)));
  if (params.ending_before) conditions.push(gt(id, idParam(prefix, 'ending_before', params.ending_before)));
  if (params['created[gte]']) conditions.push(gte(createdAt, new Date(params['created[gte]'])));
  if (params['created[lte]']) conditions.push(lte(createdAt, new Date(params['created[lte]'])));
  const backwards = Boolean(params.ending_before);
  return { where: and(...conditions), orderBy: backwards ? asc(id) : desc(id), fetch: limit + 1, limit, backwards };
}

export function toPage<R, T>(rows: R[], plan: PagePlan, view: (row: R) => T): Page<T> {
  const has_more = rows.length > plan.limit;
  const kept = rows.slice(0, plan.limit);
  if (plan.backwards) kept.reverse();
  return { object: 'list', data: kept.map(view), has_more };
}
