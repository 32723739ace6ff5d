// `dashboard session ACCT_ID --mode test|live`: a one-time code that signs a browser in to the
// dashboard as that account and mode. The code is printed, never put in a URL: the person opens
// the sign-in page and types or pastes it, so it does not linger in history, logs or referrers.
import { createSignInCode, CODE_TTL_MS } from '../domain/dashboard/sessions.js';
import { UsageError } from './args.js';
import { PROGRAM, type Command } from './onboarding.js';

export const DASHBOARD_COMMANDS: Command[] = [
  {
    name: 'dashboard session',
    synopsis: 'ACCT_ID --mode test|live',
    summary: 'Print a one-time code that signs a browser in to the dashboard as this account, in this mode',
    details:
      `Open sign_in_url and enter the code within ${CODE_TTL_MS / 60_000} minutes; it works once. The session lasts 12 hours.\n` +
      'sign_in_url is built from PUBLIC_BASE_URL (default http://HOST:PORT). Live mode needs accounts activate-live first.',
    positionals: ['ACCT_ID'],
    options: { mode: { type: 'string' } },
    prepare({ values, positionals: [id], now }) {
      const mode = values.mode;
      if (mode === undefined) throw new UsageError('--mode is required (test or live)');
      if (mode !== 'test' && mode !== 'live') throw new UsageError(`--mode must be test or live, got ${JSON.stringify(mode)}`);
      return {
        run: async (db, config) => {
          const signIn = await createSignInCode(db, id!, mode === 'live', now);
          const base = config?.publicBaseUrl ?? `http://${config?.host ?? '127.0.0.1'}:${config?.port ?? 3000}`;
          return { ...signIn, sign_in_url: `${base.replace(/\/$/, '')}/dashboard/sign-in` };
        },
        notes: () => [`the code works once and is shown only this once; ${PROGRAM} dashboard session again makes another`],
      };
    },
  },
];
