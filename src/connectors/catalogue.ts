// The catalogue of processors a connector account can be opened at (GET /v1/connectors): what each
// can do, in which modes, and the credentials it takes with their light shape checks (docs/processors.md).
// It describes processors, not implementations: the registry (registry.ts) says which of them this
// version can already send requests to.
import { ApiError } from '../kernel/errors.js';
import { CURRENCY_CODES } from '../kernel/currencies.js';
import { MANDATE_SCHEMES, type Connector, type MandateScheme } from './types.js';
import { SIMULATED_PROCESSORS } from './simulator/profiles.js';
import { stripeAmountLimit } from './stripe/money.js';
import { ADYEN_CURRENCIES, adyenAmountLimit } from './adyen/money.js';

export type Mode = 'test' | 'live';

export interface Capabilities {
  card_payments: boolean;
  refunds: boolean;
  /** Authorise now, capture later (capture_method manual), and void an authorisation. */
  manual_capture: boolean;
  /** Several partial captures of one authorisation (final_capture false). */
  multiple_captures: boolean;
  /** The processor may ask for the customer (3-D Secure, a redirect). */
  customer_actions: boolean;
  /** Verifies a card to be saved with a zero-amount authorisation (POST /v1/payment-methods). */
  card_verification: boolean;
  mandate_schemes: MandateScheme[];
  payouts: boolean;
  currencies: string[];
}

export interface CredentialField {
  name: string;
  /** `live`: required with a live key and refused with a test key. */
  required: 'always' | 'live' | 'never';
  /** Verifies the processor's inbound webhooks: a rotation keeps the previous value for a grace period. */
  webhookSecret?: boolean;
  /** What is wrong with the value for this mode, in words naming the field but never the value. */
  check?: (value: string, mode: Mode) => string | undefined;
  description: string;
}

export interface CatalogueEntry {
  name: string;
  modes: Mode[];
  /** A built-in simulated processor: it reports to POST /v1/connectors/{name}/webhooks, not to the account's own URL. */
  simulated: boolean;
  capabilities: Capabilities;
  credentials: CredentialField[];
  /** Why the processor cannot take a payment of this size (it is left out of the route), or undefined. */
  amountLimit?: (amount: number, currency: string) => string | undefined;
  /**
   * Its card verification answers no network transaction id (a Stripe SetupIntent): a card verified
   * there is charged off session without one, so verifications try it after the connectors that give it.
   */
  verificationWithoutNetworkId?: true;
  /** Optional credential fields an account must have set to offer a capability (Adyen: payouts need their own key and balance account). */
  capabilityCredentials?: Partial<Record<'payouts', readonly string[]>>;
  /**
   * It cannot be asked about a charge whose answer was lost, but answers a send repeated under the
   * same key with its first answer (Connector.replaysSendsForMs): a card payment routed to it keeps
   * its card in the vault until final, for the worker to send it again (docs/vault.md).
   */
  replaysSends?: boolean;
}

const HEX = /^(?:[0-9a-fA-F]{2}){16,64}$/;
const ADYEN_LIVE_PREFIX = /^[0-9a-f]{16}-[A-Za-z0-9]+$/;
const VISIBLE = /^[\x21-\x7e]+$/;

const visible = (value: string) => (VISIBLE.test(value) ? undefined : 'must be printable ASCII without spaces');
const prefixed =
  (prefixes: Record<Mode, string[]>) =>
  (value: string, mode: Mode): string | undefined => {
    const allowed = prefixes[mode];
    return allowed.some((p) => value.startsWith(p)) && visible(value) === undefined
      ? undefined
      : `must start with ${allowed.join(' or ')} with a ${mode} key`;
  };

const webhookSecret = (description: string, check?: CredentialField['check']): CredentialField => ({
  name: 'webhook_secret',
  required: 'never',
  webhookSecret: true,
  check: check ?? visible,
  description,
});

const ALL_CURRENCIES = [...CURRENCY_CODES];
/** The currency each mandate scheme debits in (src/domain/mandates). */
const SCHEME_CURRENCIES: Record<MandateScheme, string> = { sepa_core: 'EUR', bacs: 'GBP', ach: 'USD' };

export const CATALOGUE: readonly CatalogueEntry[] = [
  {
    name: 'stripe',
    modes: ['test', 'live'],
    simulated: false,
    amountLimit: stripeAmountLimit,
    verificationWithoutNetworkId: true,
    // Stripe captures a PaymentIntent once (a partial capture releases the rest); several captures
    // need its multicapture feature (request_multicapture), which this connector does not ask for.
    capabilities: { card_payments: true, refunds: true, manual_capture: true, multiple_captures: false, customer_actions: true, card_verification: true, mandate_schemes: [], payouts: false, currencies: ALL_CURRENCIES },
    credentials: [
      {
        name: 'secret_key',
        required: 'always',
        check: prefixed({ test: ['sk_test_', 'rk_test_'], live: ['sk_live_', 'rk_live_'] }),
        description: 'A secret (sk_) or restricted (rk_) API key of the mode: sk_test_… with a test key, sk_live_… with a live key.',
      },
      webhookSecret('The signing secret (whsec_…) of the Stripe webhook endpoint pointing at webhook_url.', (value) =>
        value.startsWith('whsec_') && visible(value) === undefined ? undefined : 'must be the signing secret Stripe shows for the endpoint (whsec_…)',
      ),
    ],
  },
  {
    name: 'adyen',
    modes: ['test', 'live'],
    simulated: false,
    amountLimit: adyenAmountLimit,
    replaysSends: true,
    capabilities: { card_payments: true, refunds: true, manual_capture: true, multiple_captures: true, customer_actions: true, card_verification: true, mandate_schemes: [], payouts: true, currencies: [...ADYEN_CURRENCIES] },
    capabilityCredentials: { payouts: ['payout_api_key', 'balance_account_id'] },
    credentials: [
      { name: 'api_key', required: 'always', check: visible, description: 'The API key of an Adyen web service user with the Checkout API role.' },
      { name: 'merchant_account', required: 'always', check: visible, description: 'The Adyen merchant account the payments are booked to.' },
      {
        name: 'hmac_key',
        required: 'never',
        webhookSecret: true,
        check: (value) => (HEX.test(value) ? undefined : 'must be the hexadecimal HMAC key of the Adyen webhook (32 to 128 hex digits)'),
        description: 'The HMAC key (hex) of the Adyen standard webhook pointing at webhook_url.',
      },
      {
        name: 'live_url_prefix',
        required: 'live',
        check: (value) => (ADYEN_LIVE_PREFIX.test(value) ? undefined : 'must look like [random]-[company name] (16 lower-case hex digits, a dash, letters and digits)'),
        description: "Live only: the account's live endpoint prefix ([random]-[company name]), which becomes part of the live host name.",
      },
      {
        name: 'payout_api_key',
        required: 'never',
        check: visible,
        description: 'Payouts: the balance platform API key of a web service user with the TransferService Webservice Initiate role (Transfers API).',
      },
      { name: 'balance_account_id', required: 'never', check: visible, description: 'Payouts: the balance account (BA…) the payouts are sent from.' },
      {
        name: 'payout_hmac_key',
        required: 'never',
        check: (value) => (HEX.test(value) ? undefined : 'must be the hexadecimal HMAC key of the Adyen balance platform webhook (32 to 128 hex digits)'),
        description: 'Payouts: the HMAC key (hex) of the balance platform webhook (transfer events) pointing at webhook_url; unset: hmac_key verifies them too.',
      },
    ],
  },
  {
    name: 'gocardless',
    modes: ['test', 'live'],
    simulated: false,
    capabilities: {
      card_payments: false,
      // Not offered by this connector yet (docs/processors.md, GoCardless): refund a debit in GoCardless's dashboard.
      refunds: false,
      // Direct debits are collected, never authorised and held.
      manual_capture: false,
      multiple_captures: false,
      customer_actions: false,
      card_verification: false,
      mandate_schemes: [...MANDATE_SCHEMES],
      payouts: false,
      currencies: [...new Set(MANDATE_SCHEMES.map((s) => SCHEME_CURRENCIES[s]))].sort(),
    },
    credentials: [
      {
        name: 'access_token',
        required: 'always',
        check: prefixed({ test: ['sandbox_'], live: ['live_'] }),
        description: 'An access token of the mode: sandbox_… with a test key, live_… with a live key.',
      },
      webhookSecret('The secret of the GoCardless webhook endpoint pointing at webhook_url.'),
    ],
  },
  ...SIMULATED_PROCESSORS.map(
    (profile): CatalogueEntry => ({
      name: profile.name,
      modes: ['test'],
      simulated: true,
      capabilities: {
        card_payments: true,
        refunds: true,
        manual_capture: true,
        multiple_captures: true,
        customer_actions: false,
        card_verification: true,
        mandate_schemes: [...MANDATE_SCHEMES],
        payouts: true,
        currencies: ALL_CURRENCIES,
      },
      credentials: [],
    }),
  ),
];

const BY_NAME = new Map(CATALOGUE.map((entry) => [entry.name, entry]));

export function catalogueEntry(name: string): CatalogueEntry | undefined {
  return BY_NAME.get(name);
}

/** Whether a card verification at processor `connector` answers the card scheme's network transaction id. */
export function verificationGivesNetworkId(connector: string): boolean {
  return catalogueEntry(connector)?.verificationWithoutNetworkId !== true;
}

/** What an account of `entry` with these credential fields set can do: a capability lacking its credentials is off. */
export function accountCapabilities(entry: CatalogueEntry, fields: readonly string[]): Capabilities {
  const needs = entry.capabilityCredentials?.payouts;
  const payouts = entry.capabilities.payouts && (needs ?? []).every((field) => fields.includes(field));
  return { ...entry.capabilities, payouts };
}

/**
 * What a route target of processor `connector` can do — the one answer routing asks: its catalogue
 * entry (for an account, less what its credential fields leave off). Only a connector the catalogue
 * does not describe (a double a test registers beside the built-ins) is read from what it
 * implements; test/connectors/catalogue.test.ts holds every catalogued implementation to its entry.
 */
export function capabilitiesOf(connector: string, template: Connector | undefined, fields?: readonly string[]): Capabilities | undefined {
  const entry = catalogueEntry(connector);
  if (entry) return fields ? accountCapabilities(entry, fields) : entry.capabilities;
  return template && implementedCapabilities(template);
}

/** What a connector implements, in the catalogue's terms. */
export function implementedCapabilities(c: Connector): Capabilities {
  const mandates = c.paymentMethodTypes.includes('mandate') && c.setupMandate !== undefined;
  return {
    card_payments: c.paymentMethodTypes.includes('card'),
    refunds: true,
    manual_capture: typeof c.capture === 'function' && typeof c.cancelAuthorization === 'function',
    // What a connector sends cannot say whether its processor takes several captures: only a catalogue entry promises it.
    multiple_captures: false,
    customer_actions: c.completeAction !== undefined,
    card_verification: c.verifyCard !== undefined,
    mandate_schemes: mandates ? [...MANDATE_SCHEMES] : [],
    payouts: typeof c.payout === 'function',
    currencies: ALL_CURRENCIES,
  };
}

/** The field that verifies the processor's webhooks, if the processor has one. */
export function webhookSecretField(entry: CatalogueEntry): string | undefined {
  return entry.credentials.find((field) => field.webhookSecret)?.name;
}

/**
 * Checks credentials for shape (required fields present, prefixes and formats of the mode); throws
 * the typed 400 of the first problem, naming the field (`credentials.<field>`) and never its value.
 */
export function checkCredentials(entry: CatalogueEntry, credentials: Record<string, string>, mode: Mode): void {
  const known = new Set(entry.credentials.map((field) => field.name));
  for (const name of Object.keys(credentials)) {
    if (!known.has(name)) {
      const accepted = entry.credentials.length ? `accepts ${[...known].join(', ')}` : 'takes no credentials';
      throw new ApiError('parameter_unknown', { param: `credentials.${name}`, message: `credentials.${name} is not a credential of ${entry.name}, which ${accepted}.` });
    }
  }
  for (const field of entry.credentials) {
    const param = `credentials.${field.name}`;
    const value = credentials[field.name];
    if (value === undefined) {
      if (field.required === 'always' || (field.required === 'live' && mode === 'live')) {
        throw new ApiError('parameter_missing', { param, message: `Missing required parameter: ${param} (${entry.name}, ${mode} mode).` });
      }
      continue;
    }
    if (field.required === 'live' && mode === 'test') {
      throw new ApiError('parameter_invalid', { param, message: `${param} is for live mode only; a test key reaches the ${entry.name} sandbox.` });
    }
    const problem = field.check?.(value, mode);
    if (problem) throw new ApiError('parameter_invalid', { param, message: `${param} ${problem}.` });
  }
}
