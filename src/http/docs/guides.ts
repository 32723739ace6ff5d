// The guides at the top of the API reference (/docs), written into the OpenAPI document's
// description so that the page, the served document and generated clients say the same thing.
// The tables come from the code that decides them (test cards, test bank accounts, the error
// catalogue), so a guide cannot drift from what the service does.
import { TEST_CARDS } from '../../connectors/simulator/cards.js';
import { TEST_BANK_ACCOUNTS, TEST_BANK_ACCOUNT_SCENARIOS } from '../../domain/bank-accounts/test-accounts.js';
import { ERROR_CATALOGUE, type ErrorType } from '../../kernel/errors.js';

const row = (cells: string[]) => `| ${cells.join(' | ')} |`;
const table = (head: string[], rows: string[][]) => [row(head), row(head.map(() => '---')), ...rows.map(row)].join('\n');
const code = (text: string) => '`' + text + '`';

const QUICK_START = `## Quick start

Every request carries a secret key: \`Authorization: Bearer sk_test_…\` (test mode) or
\`sk_live_…\` (live mode). The two modes never see each other's objects. Amounts are integers in
the minor unit of their currency (\`1000\` EUR is €10.00).

\`\`\`sh
KEY=sk_test_…   # printed by npm start, or by npm run cli -- accounts create
curl -s localhost:3000/v1/payment-orders -H "Authorization: Bearer $KEY" \\
  -H "Idempotency-Key: order-1" -H "Content-Type: application/json" \\
  -d '{"amount":1000,"currency":"EUR","reference":"order-1",
       "customer":{"email":"jane@example.com"}}'
curl -s localhost:3000/v1/payments -H "Authorization: Bearer $KEY" \\
  -H "Idempotency-Key: pay-1" -H "Content-Type: application/json" \\
  -d '{"payment_order":"ord_…","payment_method":{"type":"card","card":
       {"number":"4242424242424242","exp_month":12,"exp_year":2030,"cvc":"123"}}}'
curl -s localhost:3000/v1/refunds -H "Authorization: Bearer $KEY" \\
  -H "Idempotency-Key: refund-1" -H "Content-Type: application/json" \\
  -d '{"payment":"pay_…","amount":400}'
\`\`\`

A payment answers \`201\` in the state it reached: \`succeeded\`, \`failed\` (a decline is no HTTP
error: \`failure_code\` says why) or \`pending\` (the outcome arrives by webhook, or ask with
\`GET /v1/payments/{id}?refresh=true\`).`;

const IDEMPOTENCY = `## Idempotency

Every POST that creates or moves money needs an \`Idempotency-Key\` header (1 to 255 visible ASCII
characters; a UUID is a good choice). Retrying with the same key and the same body answers the
stored response byte for byte, with \`Idempotent-Replayed: true\`, and never acts twice — so after a
timeout or a lost connection, retry with the same key. The same key with a different body answers
\`422 idempotency_key_reused\`; while the first request is still running, \`409
idempotency_key_in_use\` (retry after \`Retry-After\`). Keys are kept for 24 hours (IDEMPOTENCY_RETENTION_S).`;

function testData(): string {
  const cards = Object.entries(TEST_CARDS).map(([number, card]) => [code(number), card.scenario, card.description]);
  const scenarios = Object.entries(TEST_BANK_ACCOUNT_SCENARIOS).map(([scenario, ending]) => {
    const accounts = TEST_BANK_ACCOUNTS[ending];
    return [code(ending), scenario, code(accounts.iban.iban!), `${code(accounts.gb.sort_code!)} / ${code(accounts.gb.account_number!)}`];
  });
  return `## Test cards and bank accounts

The simulated processors of test mode (its default route) accept only these card numbers (any
future expiry, any CVC); each behaves the same way every time. A test-mode route to a real
processor's sandbox (a connector account) takes any valid number, and that processor's own test
cards apply there.

${table(['number', 'scenario', 'what happens'], cards)}

Beneficiaries' and mandates' bank accounts in test mode behave by the last four digits of the
account number (or of the IBAN's account part); any other ending succeeds.

${table(['ending', 'scenario', 'IBAN (DE)', 'sort code / account (GB)'], scenarios)}`;
}

const WEBHOOKS = `## Webhooks and signature verification

Create an endpoint with \`POST /v1/webhook-endpoints\`; its \`secret\` (\`whsec_…\`) is shown once.
Deliveries follow [Standard Webhooks](https://www.standardwebhooks.com/): headers \`webhook-id\`
(the event id, the same on every retry: deduplicate by it), \`webhook-timestamp\` and
\`webhook-signature\` (\`v1,<base64 HMAC-SHA256 of "{id}.{timestamp}.{body}">\`, several
space-separated while a rotated secret is still valid). Verify the raw body before parsing it,
refuse timestamps more than five minutes away, answer 2xx quickly, and order updates by
\`data.object.version\`, not by arrival.

With the published library (\`npm install standardwebhooks\`):

\`\`\`js
import { Webhook } from 'standardwebhooks';
const event = new Webhook(process.env.WEBHOOK_SECRET).verify(rawBody, headers); // throws if forged or stale
\`\`\`

Or by hand, with Node's crypto:

\`\`\`js
import crypto from 'node:crypto';
function verify(secret, rawBody, headers) {
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  const id = headers['webhook-id'], timestamp = headers['webhook-timestamp'];
  if (Math.abs(Date.now() / 1000 - Number(timestamp)) > 300) throw new Error('stale timestamp');
  const expected = crypto.createHmac('sha256', key).update(\`\${id}.\${timestamp}.\${rawBody}\`).digest();
  const valid = headers['webhook-signature'].split(' ').some((part) => {
    const given = Buffer.from(part.replace(/^v1,/, ''), 'base64');
    return given.length === expected.length && crypto.timingSafeEqual(given, expected);
  });
  if (!valid) throw new Error('bad signature');
  return JSON.parse(rawBody);
}
\`\`\`

In test mode, \`POST /v1/test-helpers/webhook-endpoints/{id}/send\` sends a scenario (a forged
signature, a stale timestamp, a duplicate, versions out of order) and reports what your endpoint
answered.`;

function errors(): string {
  const types: ErrorType[] = ['validation', 'authentication', 'eligibility', 'processing', 'rate-limit'];
  const rows = types.flatMap((type) =>
    Object.entries(ERROR_CATALOGUE)
      .filter(([, entry]) => entry.type === type)
      .map(([name, entry]) => [code(type), String(entry.status), code(name), entry.message]),
  );
  return `## Errors

Every error has one body: \`{"error": {"type", "code", "message", "request_id", "param"?}}\`.
\`type\` is the category to branch on, \`code\` the precise reason, \`request_id\` the
\`Request-Id\` header to quote when you ask for help. A \`Retry-After\` header says when to retry
(rate limits, a key in use, the service briefly unavailable).

${table(['type', 'status', 'code', 'meaning'], rows)}`;
}

/** The document's description: the introduction, then every guide, each a heading of its own. */
export function apiDescription(): string {
  return [
    'Payment orders, payments, refunds, payouts, mandates and signed webhooks over one JSON API.',
    QUICK_START,
    IDEMPOTENCY,
    testData(),
    WEBHOOKS,
    errors(),
  ].join('\n\n');
}
