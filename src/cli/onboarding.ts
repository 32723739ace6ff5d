// The operator's commands: migrations, accounts (onboarding, live activation, suspension, rate
// budgets, payout settings) and API keys (issue, list, revoke, roll). Each checks its arguments
// before the database is opened, then calls the same domain function the service would.
import {
  accountPlan,
  activateLive,
  createAccount,
  getAccount,
  issueKey,
  listAccounts,
  listKeys,
  reinstateAccount,
  revokeKey,
  rollKey,
  setPayoutSettings,
  setRateLimit,
  suspendAccount,
  updateProfile,
} from '../domain/accounts/service.js';
import { AccountProfileError, checkProfile, NAME_MAX_LENGTH, type AccountProfile } from '../domain/accounts/profile.js';
import { MAX_AMOUNT } from '../kernel/currencies.js';
import { UsageError, parseRfc3339, requireFuture, requireInteger, requireText } from './args.js';
import { TERMS_COMMANDS } from './terms.js';
import type { Command, Values } from './command.js';

export type { Command, OptionSpec, Prepared, Values } from './command.js';

export const PROGRAM = 'npm run cli --';
const DAY_S = 24 * 3600;
const MAX_ROLL_S = 365 * DAY_S;
const MAX_RATE = 1_000_000;
const CACHE_NOTE =
  'a running service applies this within its API-key cache TTL (API_KEY_CACHE_TTL_MS, default 5000 ms)';

const str = (values: Values, name: string) => values[name] as string | undefined;

/** --name and --support-email (`none` removes it), checked by the rules every caller of the domain shares. */
function profileFlags(values: Values): AccountProfile {
  const email = str(values, 'support-email');
  try {
    return checkProfile({ name: str(values, 'name'), supportEmail: email === 'none' ? null : email });
  } catch (err) {
    if (err instanceof AccountProfileError) throw new UsageError(`--${err.field.replace('_', '-')} ${err.problem}`);
    throw err;
  }
}
const PROFILE_DETAILS =
  `The name (1..${NAME_MAX_LENGTH} characters) is what the hosted checkout and the dashboard show; the support email is\n` +
  'offered to customers on the checkout (`none` removes it).';

export const COMMANDS: Command[] = [
  {
    name: 'migrate',
    synopsis: '',
    summary: 'Apply pending database migrations and exit',
    details: 'Every other command applies pending migrations too, so a fresh database works straight away.',
    positionals: [],
    options: {},
    prepare: () => ({ run: async () => ({ migrated: true }) }),
  },
  {
    name: 'accounts create',
    synopsis: '--name NAME [--support-email EMAIL]',
    summary: 'Create an account (test mode only until activate-live), with a test key and its implementation plan',
    details:
      'Prints one JSON object: the account (its `id` at the top level), `test_key` (its secret shown only this once)\n' +
      'and `plan`, the implementation plan that live activation checks (see accounts plan).\n' +
      PROFILE_DETAILS,
    positionals: [],
    options: { name: { type: 'string' }, 'support-email': { type: 'string' } },
    prepare({ values }) {
      if (str(values, 'name') === undefined) throw new UsageError('--name is required');
      const profile = profileFlags(values);
      return {
        run: async (db) => {
          const account = await createAccount(db, profile.name!, profile.supportEmail ?? null);
          const testKey = await issueKey(db, account.id, { livemode: false, name: 'onboarding' });
          return { ...account, test_key: testKey, plan: await accountPlan(db, account.id) };
        },
        notes: () => [
          "the test key's secret is shown only this once and stored only as a hash: keep it somewhere safe now",
          `work through the plan in test mode; ${PROGRAM} accounts plan ACCT_ID shows where it stands`,
        ],
      };
    },
  },
  {
    name: 'accounts update',
    synopsis: 'ACCT_ID [--name NAME] [--support-email EMAIL|none]',
    summary: "Rename an account or change its support contact (the checkout's and the dashboard's merchant)",
    details: `${PROFILE_DETAILS}\nOptions left out keep their value; the next page a customer or the dashboard loads shows the change.`,
    positionals: ['ACCT_ID'],
    options: { name: { type: 'string' }, 'support-email': { type: 'string' } },
    prepare({ values, positionals: [id] }) {
      if (str(values, 'name') === undefined && str(values, 'support-email') === undefined) throw new UsageError('give --name, --support-email or both');
      const profile = profileFlags(values);
      return { run: (db) => updateProfile(db, id!, profile) };
    },
  },
  {
    name: 'accounts list',
    synopsis: '',
    summary: 'List every account, newest first',
    positionals: [],
    options: {},
    prepare: () => ({ run: (db) => listAccounts(db) }),
  },
  {
    name: 'accounts show',
    synopsis: 'ACCT_ID',
    summary: 'Show one account',
    positionals: ['ACCT_ID'],
    options: {},
    prepare: ({ positionals: [id] }) => ({ run: (db) => getAccount(db, id!) }),
  },
  {
    name: 'accounts plan',
    synopsis: 'ACCT_ID',
    summary: "Show the account's implementation plan: each item, whether it is required, done, and its evidence",
    positionals: ['ACCT_ID'],
    options: {},
    prepare: ({ positionals: [id] }) => ({ run: (db) => accountPlan(db, id!) }),
  },
  {
    name: 'accounts activate-live',
    synopsis: 'ACCT_ID [--force]',
    summary: 'Enable live mode (onboarding done): live keys can then be issued',
    details:
      'Refused (exit code 2, naming them) while required items of the implementation plan are open.\n' +
      '--force activates anyway; the account records when (live_forced_at).',
    positionals: ['ACCT_ID'],
    options: { force: { type: 'boolean' } },
    prepare: ({ values, positionals: [id] }) => ({
      run: (db) => activateLive(db, id!, { force: values.force === true }),
      notes: () => [`live keys can now be issued: ${PROGRAM} keys create ${id} --mode live`],
    }),
  },
  {
    name: 'accounts suspend',
    synopsis: 'ACCT_ID',
    summary: 'Suspend an account: every one of its keys answers 403 account_suspended',
    positionals: ['ACCT_ID'],
    options: {},
    prepare: ({ positionals: [id] }) => ({ run: (db) => suspendAccount(db, id!), notes: () => [CACHE_NOTE] }),
  },
  {
    name: 'accounts reinstate',
    synopsis: 'ACCT_ID',
    summary: 'Lift a suspension',
    positionals: ['ACCT_ID'],
    options: {},
    prepare: ({ positionals: [id] }) => ({ run: (db) => reinstateAccount(db, id!), notes: () => [CACHE_NOTE] }),
  },
  {
    name: 'accounts set-rate-limit',
    synopsis: 'ACCT_ID (--per-second N --burst N | --default)',
    summary: "Give an account's keys their own token-bucket budget, or return to the defaults",
    details:
      `--per-second is the refill rate and --burst the bucket size (both 1..${MAX_RATE}); each key of the\n` +
      'account gets this budget. --default clears it, so the configured RATE_LIMIT_* defaults apply again.',
    positionals: ['ACCT_ID'],
    options: { 'per-second': { type: 'string' }, burst: { type: 'string' }, default: { type: 'boolean' } },
    prepare({ values, positionals: [id] }) {
      const perSecond = str(values, 'per-second');
      const burst = str(values, 'burst');
      let budget: { perSecond: number; burst: number } | null;
      if (values.default) {
        if (perSecond !== undefined || burst !== undefined) throw new UsageError('--default cannot be combined with --per-second or --burst');
        budget = null;
      } else {
        if (perSecond === undefined || burst === undefined) {
          throw new UsageError('--per-second and --burst are both required (or --default to return to the configured defaults)');
        }
        budget = { perSecond: requireInteger('per-second', perSecond, 1, MAX_RATE), burst: requireInteger('burst', burst, 1, MAX_RATE) };
      }
      return { run: (db) => setRateLimit(db, id!, budget), notes: () => [CACHE_NOTE] };
    },
  },
  {
    name: 'accounts set-payouts',
    synopsis: 'ACCT_ID [--enabled true|false] [--max-amount N|none]',
    summary: "Turn live-mode payouts on or off and set the account's largest single payout",
    details:
      '--enabled decides whether live keys may create payouts (off until onboarding turns it on; test mode always\n' +
      `has payouts). --max-amount caps one payout, in the minor unit of its currency (1..${MAX_AMOUNT}), in both modes;\n` +
      '`none` removes the cap. Options left out keep their value. Applies to the next payout request.',
    positionals: ['ACCT_ID'],
    options: { enabled: { type: 'string' }, 'max-amount': { type: 'string' } },
    prepare({ values, positionals: [id] }) {
      const enabled = str(values, 'enabled');
      const max = str(values, 'max-amount');
      if (enabled === undefined && max === undefined) throw new UsageError('give --enabled, --max-amount or both');
      if (enabled !== undefined && enabled !== 'true' && enabled !== 'false') {
        throw new UsageError(`--enabled must be true or false, got ${JSON.stringify(enabled)}`);
      }
      const settings = {
        liveEnabled: enabled === undefined ? undefined : enabled === 'true',
        maxAmount: max === undefined ? undefined : max === 'none' ? null : requireInteger('max-amount', max, 1, MAX_AMOUNT),
      };
      return { run: (db) => setPayoutSettings(db, id!, settings) };
    },
  },
  ...TERMS_COMMANDS,
  {
    name: 'keys create',
    synopsis: 'ACCT_ID --mode test|live [--name NAME] [--expires-at RFC3339]',
    summary: 'Issue an API key; the secret is printed once and stored only as a hash',
    details: 'Live keys can be issued only after `accounts activate-live`.',
    positionals: ['ACCT_ID'],
    options: { mode: { type: 'string' }, name: { type: 'string' }, 'expires-at': { type: 'string' } },
    prepare({ values, positionals: [id], now }) {
      const mode = str(values, 'mode');
      if (mode === undefined) throw new UsageError('--mode is required (test or live)');
      if (mode !== 'test' && mode !== 'live') throw new UsageError(`--mode must be test or live, got ${JSON.stringify(mode)}`);
      const name = str(values, 'name');
      const expiresAtRaw = str(values, 'expires-at');
      const opts = {
        livemode: mode === 'live',
        name: name === undefined ? undefined : requireText('name', name, 100),
        expiresAt: expiresAtRaw === undefined ? undefined : requireFuture('expires-at', parseRfc3339('expires-at', expiresAtRaw), now),
      };
      return {
        run: (db) => issueKey(db, id!, opts),
        notes: () => ['the secret is shown only this once and stored only as a hash: keep it somewhere safe now'],
      };
    },
  },
  {
    name: 'keys list',
    synopsis: 'ACCT_ID',
    summary: "List an account's keys (redacted; secrets are never shown again)",
    positionals: ['ACCT_ID'],
    options: {},
    prepare: ({ positionals: [id] }) => ({ run: (db) => listKeys(db, id!) }),
  },
  {
    name: 'keys revoke',
    synopsis: 'KEY_ID',
    summary: 'Revoke a key: it answers 401 api_key_invalid from then on',
    positionals: ['KEY_ID'],
    options: {},
    prepare: ({ positionals: [id] }) => ({ run: (db) => revokeKey(db, id!), notes: () => [CACHE_NOTE] }),
  },
  {
    name: 'keys roll',
    synopsis: 'KEY_ID [--expires-in SECONDS | --expires-at RFC3339]',
    summary: 'Issue a replacement key; the old one keeps working until the chosen time (default 24 hours)',
    details:
      `--expires-in 0 retires the old key at once. The old key's validity is at most ${MAX_ROLL_S / DAY_S} days, and never\n` +
      'longer than an expiry it already had. The new key has the same mode and name; its secret is printed once.',
    positionals: ['KEY_ID'],
    options: { 'expires-in': { type: 'string' }, 'expires-at': { type: 'string' } },
    prepare({ values, positionals: [id], now }) {
      const expiresIn = str(values, 'expires-in');
      const expiresAt = str(values, 'expires-at');
      if (expiresIn !== undefined && expiresAt !== undefined) throw new UsageError('give --expires-in or --expires-at, not both');
      let until: Date;
      if (expiresAt !== undefined) {
        until = requireFuture('expires-at', parseRfc3339('expires-at', expiresAt), now);
        if (until.getTime() - now.getTime() > MAX_ROLL_S * 1000) {
          throw new UsageError(`--expires-at must be at most ${MAX_ROLL_S / DAY_S} days ahead; issue a second key with keys create instead`);
        }
      } else {
        until = new Date(now.getTime() + (expiresIn === undefined ? DAY_S : requireInteger('expires-in', expiresIn, 0, MAX_ROLL_S)) * 1000);
      }
      return {
        run: (db) => rollKey(db, id!, until),
        notes: (result: Awaited<ReturnType<typeof rollKey>>) => [
          `the new key's secret is shown only this once and stored only as a hash: keep it somewhere safe now`,
          `the old key ${result.old.id} keeps working until ${result.old.expires_at}`,
        ],
      };
    },
  },
];
