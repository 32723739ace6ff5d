// The test-card table (docs/test-mode.md): in test mode the card number chooses the scenario, so that
// integration code is the same in both modes. Other numbers are a validation error in test mode.
export const TEST_CARD_SCENARIOS = ['success', 'decline', 'pending', 'timeout', 'processor_error', 'challenge'] as const;
export type TestCardScenario = (typeof TEST_CARD_SCENARIOS)[number];

export interface TestCard {
  scenario: TestCardScenario;
  /** Declines: the processor's reason, mapped onto our failure code by the connector. */
  decline?: 'card_declined' | 'insufficient_funds' | 'stolen_card';
  /** Declined by this simulated processor only; every other one approves it (a decline another processor recovers). */
  declinedOnlyBy?: string;
  /** Manual capture: authorised, then every capture is declined (capture_declined). */
  captureDeclined?: true;
  /** Manual capture: authorised, then every capture stays pending until the test helper resolves it. */
  capturePending?: true;
  /** Succeeds, then the cardholder disputes it (fraudulent) within SIMULATOR_PENDING_DELAY_MS. */
  disputed?: true;
  /** 3-D Secure only when asked for: the issuer soft-declines (authentication_required) a payment that does not request it. */
  softDecline?: true;
  description: string;
}

export const TEST_CARDS: Readonly<Record<string, TestCard>> = {
  '4242424242424242': { scenario: 'success', description: 'Succeeds at once.' },
  '4000000000000366': {
    scenario: 'success',
    captureDeclined: true,
    description: 'Succeeds at once; under manual capture it is authorised, then its capture is declined (capture_declined).',
  },
  '4000000000000580': {
    scenario: 'success',
    capturePending: true,
    description:
      'Succeeds at once; under manual capture it is authorised, then each capture stays pending, as a processor confirming later would leave it, until POST /v1/test-helpers/captures/{id}/resolve.',
  },
  '4000000000000259': {
    scenario: 'success',
    disputed: true,
    description:
      'Succeeds, then within seconds (SIMULATOR_PENDING_DELAY_MS) is disputed (fraudulent) with its funds withdrawn; evidence containing winning_evidence wins it, losing_evidence loses it.',
  },
  '4000000000000002': { scenario: 'decline', decline: 'card_declined', description: 'Declined: card_declined (decline type generic).' },
  '4000000000009995': { scenario: 'decline', decline: 'insufficient_funds', description: 'Declined: insufficient_funds (decline type retry_later).' },
  '4000000000000440': {
    scenario: 'decline',
    decline: 'card_declined',
    declinedOnlyBy: 'simulator_a',
    description: 'Declined by simulator_a as do_not_honor (decline type generic); simulator_b approves it.',
  },
  '4000000000000853': { scenario: 'decline', decline: 'stolen_card', description: 'Declined by every simulator: stolen_card (decline type do_not_retry).' },
  '4000000000000077': {
    scenario: 'pending',
    description: 'Pending; succeeds after SIMULATOR_PENDING_DELAY_MS or POST /v1/test-helpers/payments/{id}/resolve, reported by webhook.',
  },
  '4000000000000101': {
    scenario: 'timeout',
    description:
      'The processor charges but never answers (in process the timeout comes at once): the payment stays pending until ?refresh=true, the worker, or the webhook sent SIMULATOR_PENDING_DELAY_MS after the caller gave up, tells it succeeded.',
  },
  '4000000000003220': {
    scenario: 'challenge',
    description:
      'Needs 3-D Secure: with a return_url the payment is requires_action and next_action.url opens the challenge page (Complete or Fail); without one it fails authentication_required.',
  },
  '4000000000003246': {
    scenario: 'challenge',
    softDecline: true,
    description:
      'Soft-declined authentication_required unless 3-D Secure is requested: a routing rule cascading authentication_required retries a payment with a return_url (customer present) at the same processor with 3-D Secure requested, which then opens the challenge page.',
  },
  '4000000000000119': {
    scenario: 'processor_error',
    description: 'simulator_a answers a processor error (HTTP 500); simulator_b accepts the card, so the default route falls back and succeeds.',
  },
};

/** Where every test card is issued, as the simulated processors report it (a processor's BIN list would say; the test cards are US cards). */
export const TEST_CARD_COUNTRY = 'US';

export function testCard(number: string): TestCard | undefined {
  return TEST_CARDS[number];
}

/**
 * The bank account endings of docs/test-mode.md (mandates and payouts): the last four digits of the
 * account number, or of an IBAN's account part, which ends the IBAN.
 */
export const TEST_ACCOUNT_ENDINGS: Readonly<Record<string, TestCardScenario>> = {
  '0000': 'success',
  '0002': 'decline',
  '0003': 'pending',
  '0004': 'timeout',
  '0005': 'processor_error',
};

/** Any other ending behaves like 0000. */
export function accountScenario(accountNumber: string): TestCardScenario {
  return TEST_ACCOUNT_ENDINGS[accountNumber.replace(/[^0-9]/g, '').slice(-4)] ?? 'success';
}
