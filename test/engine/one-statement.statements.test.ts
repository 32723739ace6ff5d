// The one-statement paths' texts are rendered from the state tables and the shared rules
// (src/domain/payments/one-statement.ts, src/domain/payment-orders/one-statement.ts), and each goes to
// PostgreSQL as a named prepared statement: a name must never change meaning. These are the texts
// the names stand for (test/support/fixtures/one-statement-texts.sql), written out as they were when the
// rules still sat in them literally; a rule whose change alters a text must give that statement a
// new name (and a new entry there).
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { AT_ONCE_PREPARED } from '../../src/domain/payments/one-statement.js';
import { CREATE_ORDER } from '../../src/domain/payment-orders/one-statement.js';
import { defineStateMachine, sqlStatusIn } from '../../src/kernel/state-machine.js';

/** test/support/fixtures/one-statement-texts.sql: each name's text after its `-- statement: <name>` line. */
function namedTexts(): Record<string, string> {
  const file = readFileSync(new URL('../support/fixtures/one-statement-texts.sql', import.meta.url), 'utf8');
  const parts = file.split(/^-- statement: (\S+)\n/m).slice(1);
  const texts: Record<string, string> = {};
  for (let i = 0; i < parts.length; i += 2) texts[parts[i]!] = parts[i + 1]!.replace(/\n$/, '');
  return texts;
}

describe('the one-statement paths, rendered from the rules', () => {
  it('send, under each prepared-statement name, the very text that name stood for', () => {
    const rendered = Object.fromEntries([CREATE_ORDER, ...AT_ONCE_PREPARED].map((s) => [s.name, s.text]));
    const named = namedTexts();
    expect(Object.keys(rendered).sort()).toEqual(['create_payment_orders_v5', 'payment_create_v5', 'payment_finish_succeeded_v7', 'payment_read_orders_v5']);
    expect(Object.keys(named).sort()).toEqual(Object.keys(rendered).sort());
    for (const [name, text] of Object.entries(named)) expect(rendered[name], name).toBe(text);
  });

  it('render a status condition from a table, and refuse a move the table does not have', () => {
    const states = defineStateMachine<'a' | 'b' | 'c'>('thing', { a: ['c'], b: ['c'], c: [] });
    expect(sqlStatusIn(states.sourcesOf('c'))).toBe("status IN ('a', 'b')");
    expect(sqlStatusIn(['a'], 'o.status')).toBe("o.status = 'a'");
    expect(states.edge('a', 'c')).toEqual({ from: 'a', to: 'c' });
    expect(() => states.edge('c', 'a')).toThrow('the thing state table has no move c → a');
    expect(() => sqlStatusIn(["a'; DROP TABLE x; --"])).toThrow('not a status');
  });
});
