// Which one-statement payment texts (src/domain/payments/one-statement.ts) went to the database
// while a test's requests ran, and how many of them it refused: the pool's query is wrapped for
// the duration, the statements still go through.
import type { Db } from '../../src/storage/db.js';
import { AT_ONCE_STATEMENTS } from '../../src/domain/payments/one-statement.js';

export interface SentStatements<T> {
  result: T;
  /** The statements' names (AT_ONCE_STATEMENTS' keys), in the order they were sent. */
  sent: string[];
  /** How many times each was sent. */
  counts: Record<string, number>;
  /** How many of them the database refused. */
  refused: number;
}

export async function atOnceStatementsDuring<T>(db: Db, fn: () => Promise<T>): Promise<SentStatements<T>> {
  const client = (db as unknown as { $client: { query: (...args: unknown[]) => unknown } }).$client;
  const original = client.query;
  const names = new Map(Object.entries(AT_ONCE_STATEMENTS).map(([name, text]) => [text, name]));
  const sent: string[] = [];
  let refused = 0;
  client.query = function (this: unknown, ...args: unknown[]) {
    const q = args[0] as string | { text?: string };
    const name = names.get(typeof q === 'string' ? q : (q?.text ?? ''));
    if (name) sent.push(name);
    const answer = original.apply(this, args);
    if (name && answer instanceof Promise) answer.catch(() => refused++);
    return answer;
  };
  try {
    const result = await fn();
    const counts: Record<string, number> = {};
    for (const name of sent) counts[name] = (counts[name] ?? 0) + 1;
    return { result, sent, counts, refused };
  } finally {
    client.query = original;
  }
}
