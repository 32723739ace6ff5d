// The simulated merchants' processor set-up (docs/processors.md, docs/routing.md, docs/declines.md):
// a connector account at each simulated processor (reconciled every simulated night), and routing
// rules — priority, volume_split or success_rate, naming the simulators by name or through the
// merchant's accounts, most cascading some decline types over a few attempts. Some rules the API
// must refuse (a cascade on do_not_retry or fix_data): a 2xx to one is a wrong answer.
import { SIMULATED_PROCESSORS } from '../src/connectors/simulator/profiles.js';
import { record, type Merchant, type Model, type Op } from './merchant.js';
import type { Rng } from './rng.js';
import type { SimService } from './service.js';

const PROCESSORS = SIMULATED_PROCESSORS.map((p) => p.name);
const CASCADABLE = ['generic', 'retry_later', 'authentication_required'];
const NEVER_CASCADED = ['do_not_retry', 'fix_data'];

/** The merchant's connector accounts, one per simulated processor (creating them makes them its default route). */
export async function openConnectorAccounts(s: SimService, model: Model, m: Merchant) {
  for (const connector of PROCESSORS) {
    const a = await s.request('POST', '/v1/connector-accounts', { key: m.key, body: { connector, name: `${m.name}-${connector}`, credentials: {} }, idempotencyKey: `ca-${m.name}-${connector}` });
    if (a === 'crashed' || a.status !== 201) throw new Error(`${m.name}: connector account at ${connector} refused: ${a === 'crashed' ? a : a.text}`);
    record(model, a);
    m.connectorAccounts.push({ id: a.body.id, connector });
  }
}

function someOf<T>(rng: Rng, items: readonly T[]): T[] {
  const chosen = items.filter(() => rng.chance(0.5));
  return chosen.length ? chosen : [rng.pick(items)];
}

/** A card rule over both simulators (by name or by account), then a catch-all for mandates and payouts; `invalid`: a cascade the API must refuse. */
function rules(rng: Rng, m: Merchant, invalid: boolean) {
  const order = rng.chance(0.5) ? PROCESSORS : [...PROCESSORS].reverse();
  const strategy = rng.pick(['priority', 'success_rate', 'success_rate', 'volume_split', undefined] as const);
  const connectors = order.map((name) => {
    const account = m.connectorAccounts.find((a) => a.connector === name);
    const choice = account && rng.chance(0.5) ? { connector_account: account.id } : { name };
    return strategy === 'volume_split' || (strategy === undefined && rng.chance(0.3)) ? { ...choice, weight: rng.between(1, 9) * 10 } : choice;
  });
  const on = invalid ? [...someOf(rng, CASCADABLE), rng.pick(NEVER_CASCADED)] : someOf(rng, CASCADABLE);
  const cascade = invalid || rng.chance(0.75) ? { cascade: { on, max_attempts: rng.pick([1, 2, 2, 3, 5]) } } : {};
  return [
    { name: 'cards', payment_method_types: ['card'], ...(strategy ? { strategy } : {}), connectors, ...cascade },
    { name: 'rest', connectors: PROCESSORS.map((name) => ({ name })) },
  ];
}

/** New rules for the merchant; about one in ten the API must refuse. */
export const setRouting: Op = async (s, model, rng, m) => {
  const invalid = rng.chance(0.1);
  const body = { rules: rules(rng, m, invalid) };
  const a = await s.request('PUT', '/v1/routing', { key: m.key, body });
  if (a === 'crashed') return;
  if (invalid && a.status < 300) model.wrongAnswers.push(`PUT /v1/routing took a cascade on ${JSON.stringify((body.rules[0] as { cascade?: unknown }).cascade)}: ${a.status}`);
  if (!invalid && a.status !== 200) model.wrongAnswers.push(`PUT /v1/routing refused valid rules ${JSON.stringify(body.rules)}: ${a.status} ${a.text}`);
};

export const ROUTING_OPS: [number, string, Op][] = [[2, 'routing', setRouting]];
