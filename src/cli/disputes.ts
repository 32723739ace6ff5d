// `disputes unmatched`: the processors' dispute reports that named no payment the service knows
// (src/domain/disputes/unmatched.ts), so that an operator sees a chargeback nobody else would.
import { listUnmatchedDisputes } from '../domain/disputes/unmatched.js';
import { requireId, UsageError } from './args.js';
import type { Command } from './command.js';

export const DISPUTE_COMMANDS: Command[] = [
  {
    name: 'disputes unmatched',
    synopsis: '[--account ACCT_ID] [--limit N]',
    summary: "List processors' dispute reports that named no payment of the service, newest first",
    details:
      'Each was acknowledged to its processor and applied to nothing. --account keeps that account\'s connector accounts\' reports ' +
      "and the built-in connectors' (which report for no account). --limit: 1..1000, default 100.",
    positionals: [],
    options: { account: { type: 'string' }, limit: { type: 'string' } },
    prepare({ values }) {
      const limit = values.limit === undefined ? 100 : Number(values.limit);
      if (!Number.isInteger(limit) || limit < 1 || limit > 1000) throw new UsageError(`--limit must be an integer from 1 to 1000, got ${JSON.stringify(values.limit)}`);
      const account = values.account === undefined ? undefined : requireId('acct', values.account as string, '--account');
      return { run: async (db) => ({ object: 'list', data: await listUnmatchedDisputes(db, { account, limit }) }) };
    },
  },
];
