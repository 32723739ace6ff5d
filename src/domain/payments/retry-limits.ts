// POST /v1/test-helpers/retry-limits/reset: test mode applies the networks' reattempt limits as
// live mode does (reattempts.ts); this clears the mode's counts so that tests can start again.
import { Type, type Static } from 'typebox';
import type { Db } from '../../storage/db.js';
import type { RequestContext } from '../../kernel/context.js';
import { testHelpersOnly } from '../../ledger/balance.js';
import { resetReattempts } from './reattempts.js';

export const RetryLimitsReset = Type.Object(
  {
    object: Type.Literal('retry_limits_reset'),
    livemode: Type.Literal(false),
    cleared: Type.Integer({ minimum: 0, description: 'How many counted declines and reattempts were forgotten.' }),
  },
  { title: 'RetryLimitsReset' },
);

export async function resetTestRetryLimits(db: Db, ctx: RequestContext): Promise<Static<typeof RetryLimitsReset>> {
  if (ctx.livemode) throw testHelpersOnly();
  const cleared = await db.transaction((tx) => resetReattempts(tx, ctx));
  return { object: 'retry_limits_reset', livemode: false, cleared };
}
