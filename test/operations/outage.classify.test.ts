// What counts as the database going away (a 503 and a retry) and what is an ordinary error.
import { expect, it } from 'vitest';
import { isDatabaseUnavailable, outageCause } from '../../src/kernel/outage.js';

it('tells an outage from other database errors, through what drizzle and checks in parallel wrap', () => {
  const pgError = (code: string, message: string) => Object.assign(new Error(message), { code });
  const wrapped = (cause: unknown) => Object.assign(new Error('Failed query: SELECT …\nparams: secret'), { cause });
  for (const err of [
    pgError('ECONNREFUSED', 'connect ECONNREFUSED 127.0.0.1:5432'),
    pgError('57P01', 'terminating connection due to administrator command'),
    pgError('57P03', 'the database system is starting up'),
    pgError('08006', 'connection failure'),
    new Error('Connection terminated unexpectedly'),
    new Error('timeout exceeded when trying to connect'),
    wrapped(new Error('Client has encountered a connection error and is not queryable')),
    new AggregateError([new Error('a decline'), wrapped(pgError('ECONNRESET', 'read ECONNRESET'))], '2 checks failed'),
  ]) {
    expect(isDatabaseUnavailable(err), String(err)).toBe(true);
  }
  // The cause named in logs is the driver's, never drizzle's message with the query's parameters.
  expect(outageCause(wrapped(pgError('57P01', 'terminating connection')))?.message).toBe('terminating connection');
  for (const err of [pgError('23505', 'duplicate key value'), pgError('40001', 'could not serialize access'), wrapped(new Error('boom')), new Error('x'), 'text', undefined]) {
    expect(isDatabaseUnavailable(err), String(err)).toBe(false);
  }
});
