// The pgbench script of the saved-card benchmark is built from a traced request
// (bench/lib/pgbench-script.ts): ids it made must be fresh per transaction and shared where the
// request shared them, bound values must become their expressions, and literals must travel as
// pgbench variables — written inline, pgbench would take a time's `:11` for a variable.
import { describe, expect, it } from 'vitest';
import { scriptFromTrace, type Override } from '../../bench/lib/pgbench-script.js';
import { statementSummary } from '../../bench/payments-saved.js';

const ACCOUNT = '01a21e33-f0a2-722c-9c70-c15619be22c6';
const PAYMENT = '01a21e34-1da3-722c-9c71-7d0903f6d515';
const EVENT = '01a21e34-1dc9-722c-9c71-8957bdd69a73';
const PAY_PUBLIC = 'pay_01m8f387d3e8p9rwbx141zdn8n';
const NOW = new Date('2026-11-27T18:11:01.660Z');

const statements = [
  { text: 'begin', values: [] },
  { text: 'insert into "payments" ("account_id", "id", "created_at", "next_status_check_at") values ($1, $2, $3, $4)', values: [ACCOUNT, PAYMENT, NOW, new Date(NOW.getTime() + 150_000)] },
  {
    text: 'insert into "events" ("account_id", "id", "object_id", "data") values ($1, $2, $3, $4)',
    values: [ACCOUNT, EVENT, PAY_PUBLIC, JSON.stringify({ object: { id: PAY_PUBLIC, created_at: '2026-11-27T18:11:01.660Z' } })],
  },
  { text: 'UPDATE idempotency_keys SET recovery_point = $1 WHERE account_id = $2', values: [`payment_created:${PAYMENT}`, ACCOUNT] },
  { text: 'commit', values: [] },
];
const types = [[], ['uuid', 'uuid', 'timestamp with time zone', 'timestamp with time zone'], ['uuid', 'uuid', 'text', 'jsonb'], ['text', 'uuid'], []];
const build = (overrides: Override[] = []) =>
  scriptFromTrace({
    statements,
    types,
    bindings: { [ACCOUNT]: ':acct' },
    freshPublicId: (prefix) => `('${prefix}_' || :r::text)`,
    freshChargeReference: `('ch_' || :r::text)`,
    overrides,
  });

describe('a pgbench script from a traced request', () => {
  it('makes the request’s own ids fresh, shared where the request shared them, and keeps the transaction', () => {
    const { script, freshUuids } = build();
    expect(freshUuids).toBe(2);
    expect(script).toMatch(/^SELECT .* AS u1, .* AS u2 \\gset$/m);
    const lines = script.trim().split('\n');
    expect(lines[1]).toBe('begin;');
    expect(lines.at(-1)).toBe('commit;');
    // the payment's uuid in its row and inside the recovery point is the same variable
    expect(lines[2]).toContain('(:u1)::uuid');
    expect(lines[4]).toContain("(:u1)::text");
    expect(script).not.toContain(PAYMENT);
    expect(script).not.toContain(ACCOUNT);
    expect(lines[2]).toContain('(:acct)::uuid');
    // the public id, alone and inside the event's JSON
    expect(script).not.toContain(PAY_PUBLIC);
    expect(lines[3]!.match(/\('pay_' \|\| :r::text\)/g)).toHaveLength(2);
  });

  it('turns timestamps into now() with their offset, and literals into pgbench variables', () => {
    const { script, vars } = build();
    expect(script).toContain("now(), (now() + interval '150 seconds')");
    expect(script).not.toMatch(/:11|18:11/);
    expect(Object.values(vars)).toContain('","created_at":"2026-11-27T18:11:01.660Z"}}');
    expect(Object.values(vars)).toContain('payment_created:');
  });

  it('refuses an override that no statement matches: the service’s statements changed', () => {
    expect(() => build([{ statement: /INSERT INTO ledger_balances/, params: { 1: ':s1' } }])).toThrow(/statements changed/);
  });

  it('summarises a statement by its verb, table and lock', () => {
    expect(statementSummary('select "id" from "payment_orders" where "id" = $1 for update')).toBe('select payment_orders for update');
    expect(statementSummary(' WITH entry AS ( INSERT INTO journal_entries (a) VALUES ($1) ) SELECT 1')).toBe('with journal_entries');
    expect(statementSummary('commit')).toBe('commit');
  });
});
