// The database schema. Every tenant-owned table is keyed by account_id first (primary key and
// indexes), so that each query is tenant-scoped by construction and the schema can be distributed
// by account (Citus): every unique key of such a table includes account_id, and what is found
// without an account goes through a small reference table. `npm run check:distribution` checks it
// on a migrated database (docs/operations.md#distributing-by-account-citus).
import { sql } from 'drizzle-orm';
import { DECLINE_TYPES } from '../kernel/decline-types.js';
import type { RoutingExplanation, StoredCascade } from './routing-rules.js';
import {
  type AnyPgColumn,
  bigint,
  boolean,
  index,
  integer,
  jsonb,
  pgTable,
  primaryKey,
  text,
  timestamp,
  uniqueIndex,
  uuid,
} from 'drizzle-orm/pg-core';

const ts = (name: string) => timestamp(name, { withTimezone: true, precision: 3, mode: 'date' });
const money = (name: string) => bigint(name, { mode: 'number' });

// Column groups that several tables share. They are functions because a column builder belongs to
// the one table it is given to. Each group keeps the names, types and order its tables had, so the
// database is the same as when the columns were written out (drizzle-kit generates nothing).

/** The key of an API object: its account first (every query is tenant-scoped by it), then its id, and its mode. */
const objectKey = () => ({
  accountId: uuid('account_id').notNull(),
  id: uuid('id').notNull(),
  livemode: boolean('livemode').notNull(),
});

/** The primary key and the list index (newest first within account and mode) of an API object's table. */
const objectIndexes = (table: string, t: { accountId: AnyPgColumn; livemode: AnyPgColumn; id: AnyPgColumn }) => [
  primaryKey({ columns: [t.accountId, t.id] }),
  index(`${table}_list_idx`).on(t.accountId, t.livemode, t.id),
];

/** An object that changes: its version (one more at every change) and when it was created and last changed. */
const versioned = () => ({
  version: integer('version').notNull().default(1),
  createdAt: ts('created_at').notNull(),
  updatedAt: ts('updated_at').notNull(),
});

const metadata = () => jsonb('metadata').$type<Record<string, string>>().notNull().default({});

const failure = () => ({
  failureCode: text('failure_code'),
  failureMessage: text('failure_message'),
});

/** An operation sent through connectors: its plan, the connector that took it, every call made, why it failed. */
const routed = () => ({
  /** Connectors to try, in order, fixed at creation so that a resumed request follows the same plan. */
  route: text('route').array().notNull(),
  /** The connector that took or answered it; null while none has (or while a submission is in flight). */
  connector: text('connector'),
  connectorReference: text('connector_reference'),
  attempts: jsonb('attempts').$type<Record<string, unknown>[]>().notNull().default([]),
  ...failure(),
});

/** A bank account as stored (src/domain/bank-accounts/rules.ts): the non-secret fields in clear, the secret part sealed. */
const bankAccount = () => ({
  bankCountry: text('bank_country').notNull(),
  bankCurrency: text('bank_currency').notNull(),
  bankLast4: text('bank_last4').notNull(),
  bankBic: text('bank_bic'),
  bankSortCode: text('bank_sort_code'),
  bankRoutingNumber: text('bank_routing_number'),
  bankIfsc: text('bank_ifsc'),
  /** Keyed fingerprint of the account (per merchant account): equal for the same account, useless without the key. */
  bankFingerprint: text('bank_fingerprint').notNull(),
  /** The IBAN or account number, sealed (src/kernel/encryption.ts, key id inside) with the row's id as context. */
  bankSecretEncrypted: text('bank_secret_encrypted').notNull(),
});

export const accounts = pgTable('accounts', {
  id: uuid('id').primaryKey(),
  /** The display name (src/domain/accounts/profile.ts): what the checkout and the dashboard show. */
  name: text('name').notNull(),
  /** The support contact the hosted checkout offers the customer; null: none. */
  supportEmail: text('support_email'),
  status: text('status', { enum: ['active', 'suspended'] }).notNull().default('active'),
  liveEnabled: boolean('live_enabled').notNull().default(false),
  rateLimitPerS: integer('rate_limit_per_s'),
  rateLimitBurst: integer('rate_limit_burst'),
  /** Live-mode payouts (onboarding turns them on; test mode always has them). */
  payoutsEnabled: boolean('payouts_enabled').notNull().default(false),
  /** Largest single payout, in the minor unit of the payout's currency; null: no limit of the account's own. */
  payoutMaxAmount: money('payout_max_amount'),
  /** When an operator activated live mode with required plan items still open (accounts activate-live --force). */
  liveForcedAt: ts('live_forced_at'),
  createdAt: ts('created_at').notNull().defaultNow(),
  updatedAt: ts('updated_at').notNull().defaultNow(),
});

/**
 * What an account did in test mode that leaves no object of its own behind (a replayed request, a
 * receiver refusing a forged signature): the first occurrence of each, for its implementation plan.
 */
export const integrationEvidence = pgTable(
  'integration_evidence',
  {
    accountId: uuid('account_id').notNull(),
    item: text('item').notNull(),
    evidence: text('evidence'),
    recordedAt: ts('recorded_at').notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.accountId, t.item] })],
);

export const apiKeys = pgTable(
  'api_keys',
  {
    accountId: uuid('account_id').notNull().references(() => accounts.id),
    id: uuid('id').notNull(),
    livemode: boolean('livemode').notNull(),
    /** SHA-256 of the whole key, hex. Keys carry 190 bits of entropy, so a fast hash is enough. */
    keyHash: text('key_hash').notNull(),
    /** First characters and last four, for people to tell keys apart; never enough to use. */
    redacted: text('redacted').notNull(),
    name: text('name'),
    expiresAt: ts('expires_at'),
    revokedAt: ts('revoked_at'),
    createdAt: ts('created_at').notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.accountId, t.id] })],
);

/**
 * Finds a key's account by the key's hash, which is all a request carries: a small reference table
 * (docs/operations.md#distributing-by-account-citus), one row per key, written in the transaction
 * that writes the key. It repeats what authentication judges (mode, expiry, revocation), so that
 * authenticating is one indexed read of it joined to the key's account, on any node.
 */
export const apiKeyLookups = pgTable(
  'api_key_lookups',
  {
    /** SHA-256 of the whole key, hex. */
    keyHash: text('key_hash').primaryKey(),
    accountId: uuid('account_id').notNull(),
    keyId: uuid('key_id').notNull(),
    livemode: boolean('livemode').notNull(),
    expiresAt: ts('expires_at'),
    revokedAt: ts('revoked_at'),
  },
  // Dashboard sessions signed in with a key end with it: they read it here by its id.
  (t) => [uniqueIndex('api_key_lookups_key_key').on(t.accountId, t.keyId)],
);

export const idempotencyKeys = pgTable(
  'idempotency_keys',
  {
    accountId: uuid('account_id').notNull(),
    livemode: boolean('livemode').notNull(),
    key: text('key').notNull(),
    fingerprint: text('fingerprint').notNull(),
    /** Where a multi-phase operation got to; `started` until the first phase commits, `finished` at the end. */
    recoveryPoint: text('recovery_point').notNull().default('started'),
    lockedAt: ts('locked_at'),
    responseStatus: integer('response_status'),
    responseBody: text('response_body'),
    requestId: text('request_id').notNull(),
    createdAt: ts('created_at').notNull().defaultNow(),
    expiresAt: ts('expires_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.accountId, t.livemode, t.key] }), index('idempotency_keys_expires_at_idx').on(t.expiresAt)],
);

export const paymentOrders = pgTable(
  'payment_orders',
  {
    ...objectKey(),
    status: text('status', { enum: ['open', 'processing', 'paid', 'cancelled', 'expired'] }).notNull(),
    amount: money('amount').notNull(),
    amountPaid: money('amount_paid').notNull().default(0),
    currency: text('currency').notNull(),
    reference: text('reference').notNull(),
    customerEmail: text('customer_email').notNull(),
    customerName: text('customer_name'),
    /** The customer (cus_) the order named, if it named one; email and name above are copied from it at creation. */
    customerId: uuid('customer_id'),
    description: text('description'),
    metadata: metadata(),
    expiresAt: ts('expires_at').notNull(),
    /**
     * The hosted checkout's secret (src/domain/checkout): the account's id, then 256 random bits
     * unrelated to the order, so that the customer's browser, which holds nothing else, finds the
     * order within its account. Tokens made before migration 0029 carry no account: their owners are
     * found in checkout_token_routes. Null for orders created before the checkout existed.
     */
    checkoutToken: text('checkout_token'),
    /** The checkout_url handed out, built from PUBLIC_BASE_URL when the order was created. */
    checkoutUrl: text('checkout_url'),
    successUrl: text('success_url'),
    cancelUrl: text('cancel_url'),
    /** How the order's payments take the money (the hosted checkout's); a payment may name its own. */
    captureMethod: text('capture_method', { enum: ['automatic', 'manual'] }).notNull().default('automatic'),
    /** Whether the hosted checkout offers to save the card for the order's customer (behind a consent box), and for what use; null: it does not. */
    setupFutureUsage: text('setup_future_usage', { enum: ['on_session', 'off_session'] }),
    ...versioned(),
  },
  (t) => [
    ...objectIndexes('payment_orders', t),
    index('payment_orders_reference_idx').on(t.accountId, t.livemode, t.reference),
    index('payment_orders_open_expiry_idx').on(t.expiresAt).where(sql`status = 'open'`),
    uniqueIndex('payment_orders_checkout_token_account_key').on(t.accountId, t.checkoutToken),
  ],
);

/**
 * The accounts of the checkout tokens made before migration 0029, which carry no account: a
 * reference table, filled once by that migration and only read since (newer tokens name their account).
 */
export const checkoutTokenRoutes = pgTable('checkout_token_routes', {
  token: text('token').primaryKey(),
  accountId: uuid('account_id').notNull(),
});

export const events = pgTable(
  'events',
  {
    ...objectKey(),
    type: text('type').notNull(),
    objectId: text('object_id').notNull(),
    data: jsonb('data').$type<{ object: Record<string, unknown> }>().notNull(),
    requestId: text('request_id'),
    idempotencyKey: text('idempotency_key'),
    createdAt: ts('created_at').notNull(),
    /** Outbox marker: null until the delivery worker has fanned the event out to endpoints. */
    dispatchedAt: ts('dispatched_at'),
  },
  // Range-partitioned by created_at (migrations/0030_partitioned_history.sql, written by hand:
  // drizzle-kit cannot express PARTITION BY); this describes the parent's columns and keys, so
  // drizzle-kit generates nothing further. Every unique key of a partitioned table holds the
  // partition key, hence created_at in the primary key (src/storage/partitions.ts says why
  // event ids stay unique anyway).
  (t) => [
    primaryKey({ columns: [t.accountId, t.id, t.createdAt] }),
    index('events_list_idx').on(t.accountId, t.livemode, t.id),
    index('events_undispatched_idx').on(t.createdAt).where(sql`dispatched_at IS NULL`),
  ],
);

export const webhookEndpoints = pgTable(
  'webhook_endpoints',
  {
    ...objectKey(),
    url: text('url').notNull(),
    description: text('description'),
    /** Event types, with `*` wildcards (`payment.*`, `*`). */
    enabledEvents: text('enabled_events').array().notNull(),
    status: text('status', { enum: ['enabled', 'disabled'] }).notNull(),
    /** Why a disabled endpoint is disabled: asked for, answered 410 Gone, or failing for days. */
    disabledReason: text('disabled_reason', { enum: ['requested', 'gone', 'failing'] }),
    metadata: metadata(),
    /** The signing secret, encrypted (src/kernel/encryption.ts: AES-256-GCM, key id inside). */
    secretEncrypted: text('secret_encrypted').notNull(),
    /** The secret before the last rotation, still signing until previous_secret_expires_at. */
    previousSecretEncrypted: text('previous_secret_encrypted'),
    previousSecretExpiresAt: ts('previous_secret_expires_at'),
    /** Start of the current run of failed attempts; null after any success. */
    failingSince: ts('failing_since'),
    ...versioned(),
    deletedAt: ts('deleted_at'),
  },
  (t) => objectIndexes('webhook_endpoints', t),
);

/** One event to deliver to one endpoint: a small queue row, claimed with SKIP LOCKED and leased. */
export const webhookDeliveries = pgTable(
  'webhook_deliveries',
  {
    ...objectKey(),
    eventId: uuid('event_id').notNull(),
    endpointId: uuid('endpoint_id').notNull(),
    /** `event`: fanned out when the event was dispatched; `redeliver`: asked for through the API. */
    trigger: text('trigger', { enum: ['event', 'redeliver'] }).notNull(),
    status: text('status', { enum: ['pending', 'succeeded', 'failed', 'cancelled'] }).notNull(),
    /** Attempts whose outcome was recorded (an attempt lost in a crash does not count). */
    attempts: integer('attempts').notNull().default(0),
    /** When the delivery is due; while an attempt is in flight, when its lease runs out. */
    nextAttemptAt: ts('next_attempt_at').notNull(),
    /** Fencing token of the worker holding the lease; a stale holder cannot record over a newer one. */
    leaseId: uuid('lease_id'),
    createdAt: ts('created_at').notNull(),
    updatedAt: ts('updated_at').notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.accountId, t.id] }),
    index('webhook_deliveries_due_idx').on(t.nextAttemptAt).where(sql`status = 'pending'`),
    uniqueIndex('webhook_deliveries_fan_out_key').on(t.accountId, t.eventId, t.endpointId).where(sql`"trigger" = 'event'`),
    index('webhook_deliveries_finished_idx').on(t.updatedAt).where(sql`status <> 'pending'`),
  ],
);

/** Every HTTP attempt, as listed by /v1/events/{id}/deliveries and /v1/webhook-endpoints/{id}/deliveries. */
export const webhookAttempts = pgTable(
  'webhook_attempts',
  {
    ...objectKey(),
    deliveryId: uuid('delivery_id').notNull(),
    eventId: uuid('event_id').notNull(),
    eventType: text('event_type').notNull(),
    endpointId: uuid('endpoint_id').notNull(),
    trigger: text('trigger', { enum: ['event', 'redeliver'] }).notNull(),
    /** 1 for the first attempt of its delivery. */
    attemptNumber: integer('attempt_number').notNull(),
    url: text('url').notNull(),
    outcome: text('outcome', { enum: ['succeeded', 'failed'] }).notNull(),
    responseStatus: integer('response_status'),
    errorCode: text('error_code'),
    errorMessage: text('error_message'),
    durationMs: integer('duration_ms').notNull(),
    /** When the next attempt is scheduled; null when this attempt ended the delivery. */
    nextRetryAt: ts('next_retry_at'),
    createdAt: ts('created_at').notNull(),
  },
  // Range-partitioned by created_at, like events (above).
  (t) => [
    primaryKey({ columns: [t.accountId, t.id, t.createdAt] }),
    index('webhook_attempts_event_idx').on(t.accountId, t.livemode, t.eventId, t.id),
    index('webhook_attempts_endpoint_idx').on(t.accountId, t.livemode, t.endpointId, t.id),
    index('webhook_attempts_created_at_idx').on(t.createdAt),
  ],
);

// ---- payments, refunds, routing, ledger (issue 3) ------------------------------------------------

/** One attempt to pay an order, routed to connectors (src/domain/payments). */
export const payments = pgTable(
  'payments',
  {
    ...objectKey(),
    paymentOrderId: uuid('payment_order_id').notNull(),
    status: text('status', { enum: ['pending', 'requires_action', 'requires_capture', 'succeeded', 'canceled', 'failed'] }).notNull(),
    amount: money('amount').notNull(),
    currency: text('currency').notNull(),
    /** Pending and succeeded refunds (a failed refund gives its amount back). */
    amountRefunded: money('amount_refunded').notNull().default(0),
    /** `manual`: authorised only, captured later (captures); `automatic`: captured when authorised. */
    captureMethod: text('capture_method', { enum: ['automatic', 'manual'] }).notNull().default('automatic'),
    /** requires_capture: what the authorisation still holds for later captures. */
    amountCapturable: money('amount_capturable').notNull().default(0),
    /** Money taken from the customer: the amount of a succeeded automatic payment, the succeeded captures of a manual one. */
    amountCaptured: money('amount_captured').notNull().default(0),
    /** Disputes of this payment, counted as each is recorded (src/domain/disputes/report.ts): a payment without one is viewed without reading disputes. */
    disputeCount: integer('dispute_count').notNull().default(0),
    /** requires_capture: when the authorisation lapses (the worker voids it then). */
    captureBefore: ts('capture_before'),
    /** canceled: why (`requested_by_customer`, `expired`, …). */
    cancellationReason: text('cancellation_reason'),
    /** failed: what the last refusal says about trying again (src/connectors/declines.ts). */
    declineType: text('decline_type', { enum: DECLINE_TYPES }),
    /** Which attempt of the payment is being sent or was sent last: 1, or n > 1 once a decline cascaded (src/domain/payments/cascade.ts). */
    attemptNumber: integer('attempt_number').notNull().default(1),
    /** The routing rule's cascade when the payment was created, with the connectors its current attempt may go to; null: no cascade. */
    cascade: jsonb('cascade').$type<StoredCascade>(),
    /** The card's brand, last4, expiry and keyed fingerprint; never the number or the CVC. */
    paymentMethod: jsonb('payment_method').$type<Record<string, unknown>>().notNull(),
    ...routed(),
    /** Why the route is what it is: the rule, its strategy, the candidates (src/domain/routing/strategy.ts); null for payments made before it was kept. */
    routing: jsonb('routing').$type<RoutingExplanation>(),
    metadata: metadata(),
    /** When the worker next asks the connector about a pending or requires_action payment. */
    nextStatusCheckAt: ts('next_status_check_at'),
    /** The merchant's page the customer is sent back to after a customer action; null: no action possible. */
    returnUrl: text('return_url'),
    /** Random secret in the URL of our return endpoint for this payment (no API key reaches it). */
    actionToken: text('action_token'),
    /** requires_action: what the processor asked for (its page, method and form fields). */
    customerAction: jsonb('customer_action').$type<{ url: string; method: 'GET' | 'POST'; data?: Record<string, string> }>(),
    /** requires_action: the page the customer is sent to (next_action.url). */
    nextActionUrl: text('next_action_url'),
    /** requires_action: past this, the worker's last status check fails the payment authentication_failed. */
    actionExpiresAt: ts('action_expires_at'),
    ...versioned(),
  },
  (t) => [
    ...objectIndexes('payments', t),
    index('payments_order_idx').on(t.accountId, t.livemode, t.paymentOrderId),
    // The built-in processors report by our id alone, and a customer comes back from 3-D Secure with
    // it: not a unique key, which a table distributed by account could not hold (the ids are random
    // UUIDs); a connector account's webhook reads by its owner's account (src/movement/inbound.ts).
    index('payments_id_idx').on(t.id),
    // Disputes name the payment by the processor's own id of it (Stripe's PaymentIntent), looked up
    // in the account and mode of the connector account the webhook came to (src/movement/inbound.ts).
    index('payments_dispute_lookup_idx').on(t.accountId, t.livemode, t.connectorReference),
    index('payments_status_check_idx').on(t.nextStatusCheckAt).where(sql`status IN ('pending', 'requires_action')`),
    // The worker's sweep of authorisations past capture_before.
    index('payments_capture_before_idx').on(t.captureBefore).where(sql`status = 'requires_capture'`),
  ],
);

/**
 * A card's declines and reattempts, per account, mode and keyed card fingerprint: what the card
 * networks' reattempt limits count (src/domain/payments/reattempts.ts, docs/declines.md).
 */
export const cardReattempts = pgTable(
  'card_reattempts',
  {
    accountId: uuid('account_id').notNull(),
    livemode: boolean('livemode').notNull(),
    cardFingerprint: text('card_fingerprint').notNull(),
    brand: text('brand').notNull(),
    /** `declined`: an issuer refused the card; `reattempt`: it was tried again after a decline (a cascade, an off-session payment). */
    kind: text('kind', { enum: ['declined', 'reattempt'] }).notNull(),
    declineType: text('decline_type', { enum: DECLINE_TYPES }),
    /** A decline's Mastercard merchant advice code (two digits) when the processor passed one on: 24–30 ask for a wait. */
    merchantAdvice: text('merchant_advice'),
    paymentId: uuid('payment_id').notNull(),
    createdAt: ts('created_at').notNull(),
  },
  (t) => [index('card_reattempts_card_idx').on(t.accountId, t.livemode, t.cardFingerprint, t.createdAt)],
);

export const refunds = pgTable(
  'refunds',
  {
    ...objectKey(),
    paymentId: uuid('payment_id').notNull(),
    status: text('status', { enum: ['pending', 'succeeded', 'failed'] }).notNull(),
    amount: money('amount').notNull(),
    currency: text('currency').notNull(),
    reason: text('reason'),
    connector: text('connector').notNull(),
    connectorReference: text('connector_reference'),
    ...failure(),
    metadata: metadata(),
    nextStatusCheckAt: ts('next_status_check_at'),
    ...versioned(),
  },
  (t) => [
    ...objectIndexes('refunds', t),
    index('refunds_payment_idx').on(t.accountId, t.livemode, t.paymentId),
    // The built-in processors report by our id alone (see payments_id_idx).
    index('refunds_id_idx').on(t.id),
    index('refunds_status_check_idx').on(t.nextStatusCheckAt).where(sql`status = 'pending'`),
  ],
);

/**
 * A capture of a manual payment's authorisation (src/domain/captures): a movement like a refund,
 * sent to the connector that holds the authorisation under its id as the idempotency key.
 */
export const captures = pgTable(
  'captures',
  {
    ...objectKey(),
    paymentId: uuid('payment_id').notNull(),
    status: text('status', { enum: ['pending', 'succeeded', 'failed'] }).notNull(),
    amount: money('amount').notNull(),
    currency: text('currency').notNull(),
    /** The last capture of the authorisation: the processor releases what it still holds. */
    finalCapture: boolean('final_capture').notNull(),
    connector: text('connector').notNull(),
    connectorReference: text('connector_reference'),
    /**
     * The processor's reference of the payment attempt holding the authorisation (a cascaded
     * payment's pay_…_n); null for a row made before migration 0027, whose sends and status checks
     * alike name the payment's current attempt (src/domain/payments/authorisation-reference.ts).
     */
    paymentReference: text('payment_reference'),
    attempts: jsonb('attempts').$type<Record<string, unknown>[]>().notNull().default([]),
    ...failure(),
    metadata: metadata(),
    nextStatusCheckAt: ts('next_status_check_at'),
    ...versioned(),
  },
  (t) => [
    ...objectIndexes('captures', t),
    index('captures_payment_idx').on(t.accountId, t.livemode, t.paymentId),
    // The built-in processors report by our id alone (see payments_id_idx).
    index('captures_id_idx').on(t.id),
    index('captures_status_check_idx').on(t.nextStatusCheckAt).where(sql`status = 'pending'`),
  ],
);

/**
 * A void of a manual payment's authorisation (POST /v1/payments/{id}/cancel, an order's cancel, the
 * worker's expiry): the movement that releases the money the processor holds. Internal (the API
 * shows its outcome on the payment: canceled, cancellation_reason); its id is the processor's
 * idempotency key.
 */
export const voids = pgTable(
  'voids',
  {
    ...objectKey(),
    paymentId: uuid('payment_id').notNull(),
    status: text('status', { enum: ['pending', 'succeeded', 'failed'] }).notNull(),
    /** What the payment's cancellation_reason becomes once voided. */
    reason: text('reason').notNull(),
    connector: text('connector').notNull(),
    connectorReference: text('connector_reference'),
    /** The processor's id of the authorisation, for asking it where the void stands. */
    paymentConnectorReference: text('payment_connector_reference'),
    /**
     * The processor's reference of the payment attempt holding the authorisation (a cascaded
     * payment's pay_…_n); null for a row made before migration 0027, whose sends and status checks
     * alike name the payment's current attempt (src/domain/payments/authorisation-reference.ts).
     */
    paymentReference: text('payment_reference'),
    attempts: jsonb('attempts').$type<Record<string, unknown>[]>().notNull().default([]),
    ...failure(),
    nextStatusCheckAt: ts('next_status_check_at'),
    ...versioned(),
  },
  (t) => [
    ...objectIndexes('voids', t),
    index('voids_payment_idx').on(t.accountId, t.livemode, t.paymentId),
    // The built-in processors report by our id alone (see payments_id_idx).
    index('voids_id_idx').on(t.id),
    // One void on its way per authorisation.
    uniqueIndex('voids_pending_payment_key').on(t.accountId, t.paymentId).where(sql`status = 'pending'`),
    index('voids_status_check_idx').on(t.nextStatusCheckAt).where(sql`status = 'pending'`),
  ],
);

/**
 * A cardholder's chargeback of a payment (src/domain/disputes), made from the processor's reports:
 * one row per processor dispute (connector_reference, unique per account, mode and connector),
 * however often and in whatever order its webhooks come. `stage` orders the reports (a report of an
 * earlier stage than the row's changes no status); withdrawals and reinstatements are the most the
 * processor has reported of each, and `funds_booked` says whether the amount is out of the
 * balance now (journal entries dispute_withdrawal / dispute_reinstatement).
 */
export const disputes = pgTable(
  'disputes',
  {
    ...objectKey(),
    paymentId: uuid('payment_id').notNull(),
    status: text('status', { enum: ['warning_needs_response', 'needs_response', 'under_review', 'won', 'lost', 'accepted'] }).notNull(),
    amount: money('amount').notNull(),
    currency: text('currency').notNull(),
    reason: text('reason').notNull(),
    /** The processor's own reason code, as it sent it. */
    processorReason: text('processor_reason'),
    /** The payment's route key (its connector, or connector account). */
    connector: text('connector').notNull(),
    /** The processor's id of the dispute. */
    connectorReference: text('connector_reference').notNull(),
    stage: integer('stage').notNull(),
    evidenceDueBy: ts('evidence_due_by'),
    evidence: jsonb('evidence').$type<Record<string, string>>().notNull().default({}),
    defenseReason: text('defense_reason'),
    withdrawals: integer('withdrawals').notNull().default(0),
    reinstatements: integer('reinstatements').notNull().default(0),
    fundsBooked: boolean('funds_booked').notNull().default(false),
    /** The dispute fee charged at the first withdrawal, and whether a won dispute gave it back. */
    fee: money('fee').notNull().default(0),
    feeReturned: boolean('fee_returned').notNull().default(false),
    /** When the worker announced the coming evidence deadline (evidence_due_soon), once. */
    dueSoonNotifiedAt: ts('due_soon_notified_at'),
    metadata: metadata(),
    ...versioned(),
  },
  (t) => [
    ...objectIndexes('disputes', t),
    index('disputes_payment_idx').on(t.accountId, t.livemode, t.paymentId),
    uniqueIndex('disputes_processor_key').on(t.accountId, t.livemode, t.connector, t.connectorReference),
    // The worker's sweep of deadlines coming up.
    index('disputes_due_idx').on(t.evidenceDueBy).where(sql`status IN ('warning_needs_response', 'needs_response') AND due_soon_notified_at IS NULL`),
  ],
);

/**
 * The merchant's answer to a dispute sent to its processor (src/domain/disputes/responses): its
 * evidence submitted, or the dispute accepted. A movement like a void: its id is the processor's
 * idempotency key, no transaction is held across the call, and a crashed request or the worker
 * locates it before sending it again. Internal: the API shows its outcome on the dispute.
 */
export const disputeResponses = pgTable(
  'dispute_responses',
  {
    ...objectKey(),
    disputeId: uuid('dispute_id').notNull(),
    action: text('action', { enum: ['submit', 'accept'] }).notNull(),
    status: text('status', { enum: ['pending', 'succeeded', 'failed'] }).notNull(),
    /** The dispute's route key (its connector, or connector account). */
    connector: text('connector').notNull(),
    connectorReference: text('connector_reference'),
    /** The processor's id of the dispute, and of the disputed payment. */
    disputeConnectorReference: text('dispute_connector_reference').notNull(),
    paymentId: uuid('payment_id').notNull(),
    /** The evidence as submitted (a later save does not change what was sent). */
    evidence: jsonb('evidence').$type<Record<string, string>>().notNull().default({}),
    defenseReason: text('defense_reason'),
    attempts: jsonb('attempts').$type<Record<string, unknown>[]>().notNull().default([]),
    ...failure(),
    nextStatusCheckAt: ts('next_status_check_at'),
    ...versioned(),
  },
  (t) => [
    ...objectIndexes('dispute_responses', t),
    // One answer on its way per dispute.
    uniqueIndex('dispute_responses_pending_dispute_key').on(t.accountId, t.disputeId).where(sql`status = 'pending'`),
    index('dispute_responses_status_check_idx').on(t.nextStatusCheckAt).where(sql`status = 'pending'`),
  ],
);

/**
 * A processor's dispute report naming a payment the service does not know (or one its sender may
 * not settle): kept for the operator (`npm run cli -- disputes unmatched`), acknowledged to the
 * processor, applied to nothing. One row per sender and processor event id.
 */
export const unmatchedDisputeReports = pgTable(
  'unmatched_dispute_reports',
  {
    /** The sender: a built-in connector's name, or a connector account's route key. */
    connector: text('connector').notNull(),
    eventId: text('event_id').notNull(),
    /** The connector account's owner when the sender is one; null for a built-in connector. */
    accountId: uuid('account_id'),
    livemode: boolean('livemode'),
    disputeReference: text('dispute_reference').notNull(),
    /** The payment as the report names it: our id, or the processor's own reference of it. */
    paymentReference: text('payment_reference'),
    amount: money('amount').notNull(),
    currency: text('currency').notNull(),
    status: text('status').notNull(),
    receivedAt: ts('received_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.connector, t.eventId] }), index('unmatched_dispute_reports_received_idx').on(t.receivedAt)],
);

/** Each account's routing rules per mode (GET/PUT /v1/routing); absent means the mode's default. */
export const routingConfigs = pgTable(
  'routing_configs',
  {
    accountId: uuid('account_id').notNull(),
    livemode: boolean('livemode').notNull(),
    rules: jsonb('rules').$type<unknown[]>().notNull(),
    ...versioned(),
  },
  (t) => [primaryKey({ columns: [t.accountId, t.livemode] })],
);

/**
 * An account's credentials at one processor (src/domain/connector-accounts): routing rules name
 * them, and a connector is built from them at call time. The credentials are sealed as one JSON
 * object; their last four characters are kept in clear so that the API can show which are set.
 */
export const connectorAccounts = pgTable(
  'connector_accounts',
  {
    ...objectKey(),
    /** The catalogue's name of the processor (src/connectors/catalogue.ts): stripe, adyen, simulator_a… */
    connector: text('connector').notNull(),
    /** Unique per account and mode among the accounts not deleted; routing rules use it. */
    name: text('name').notNull(),
    status: text('status', { enum: ['enabled', 'disabled'] }).notNull(),
    /** Every credential field as one sealed JSON object (src/kernel/encryption.ts), bound to the row. */
    credentialsEncrypted: text('credentials_encrypted').notNull(),
    /** Per credential field set: its last four characters. */
    credentialHints: jsonb('credential_hints').$type<Record<string, string>>().notNull(),
    /** The webhook secret before the last rotation, sealed; it still verifies until previous_webhook_secret_expires_at. */
    previousWebhookSecretEncrypted: text('previous_webhook_secret_encrypted'),
    previousWebhookSecretExpiresAt: ts('previous_webhook_secret_expires_at'),
    metadata: metadata(),
    ...versioned(),
    /** Deleted accounts are kept (movements in flight still need them) but answer 404. */
    deletedAt: ts('deleted_at'),
  },
  (t) => [
    ...objectIndexes('connector_accounts', t),
    uniqueIndex('connector_accounts_name_key').on(t.accountId, t.livemode, t.name).where(sql`deleted_at IS NULL`),
  ],
);

/**
 * Processors reach a connector account's webhook URL by its id alone: a reference table finds its
 * owner, one row per connector account, written in the transaction that creates it.
 */
export const connectorAccountRoutes = pgTable('connector_account_routes', {
  id: uuid('id').primaryKey(),
  accountId: uuid('account_id').notNull(),
  livemode: boolean('livemode').notNull(),
});

/** Processor events already applied, so a redelivered inbound webhook is a no-op. */
export const connectorWebhookEvents = pgTable(
  'connector_webhook_events',
  {
    accountId: uuid('account_id').notNull(),
    connector: text('connector').notNull(),
    eventId: text('event_id').notNull(),
    livemode: boolean('livemode').notNull(),
    objectId: text('object_id').notNull(),
    receivedAt: ts('received_at').notNull(),
  },
  // The worker forgets them by age (src/movement/inbound.ts sweepAppliedEvents).
  (t) => [primaryKey({ columns: [t.accountId, t.connector, t.eventId] }), index('connector_webhook_events_received_at_idx').on(t.receivedAt)],
);

/** A double-entry journal entry: its lines (journal_lines) sum to zero, checked at commit. */
export const journalEntries = pgTable(
  'journal_entries',
  {
    ...objectKey(),
    type: text('type').notNull(),
    currency: text('currency').notNull(),
    /** The object that caused the movement, if any. */
    sourceType: text('source_type', { enum: ['payment', 'refund', 'payout', 'dispute'] }),
    sourceId: uuid('source_id'),
    description: text('description'),
    createdAt: ts('created_at').notNull(),
  },
  (t) => [
    ...objectIndexes('journal_entries', t),
    index('journal_entries_source_idx').on(t.accountId, t.sourceId),
  ],
);

/** Append-only; amounts are signed (debit positive, credit negative). */
export const journalLines = pgTable(
  'journal_lines',
  {
    accountId: uuid('account_id').notNull(),
    entryId: uuid('entry_id').notNull(),
    lineNo: integer('line_no').notNull(),
    livemode: boolean('livemode').notNull(),
    ledgerAccount: text('ledger_account').notNull(),
    amount: money('amount').notNull(),
  },
  (t) => [primaryKey({ columns: [t.accountId, t.entryId, t.lineNo] })],
);

/**
 * Running sums of journal lines per ledger account and currency, split over a few slots so that
 * concurrent postings to one hot account do not queue on one row; the balance is the slots' sum.
 */
export const ledgerBalances = pgTable(
  'ledger_balances',
  {
    accountId: uuid('account_id').notNull(),
    livemode: boolean('livemode').notNull(),
    ledgerAccount: text('ledger_account').notNull(),
    currency: text('currency').notNull(),
    slot: integer('slot').notNull(),
    /** Sum of the lines posted to this slot (debit positive, credit negative). */
    balance: money('balance').notNull(),
  },
  (t) => [primaryKey({ columns: [t.accountId, t.livemode, t.ledgerAccount, t.currency, t.slot] })],
);

// ---- mandates (issue 6) --------------------------------------------------------------------------

/** A customer's authorisation to debit their bank account repeatedly (src/domain/mandates). */
export const mandates = pgTable(
  'mandates',
  {
    ...objectKey(),
    status: text('status', { enum: ['pending', 'active', 'failed', 'revoked', 'expired'] }).notNull(),
    scheme: text('scheme', { enum: ['sepa_core', 'bacs', 'ach'] }).notNull(),
    currency: text('currency').notNull(),
    reference: text('reference').notNull(),
    maxAmount: money('max_amount'),
    customerEmail: text('customer_email').notNull(),
    customerName: text('customer_name'),
    ...bankAccount(),
    ...routed(),
    metadata: metadata(),
    activatedAt: ts('activated_at'),
    lastDebitAt: ts('last_debit_at'),
    /** Activation or the last successful debit: dormancy (expiry) counts from it. */
    lastActivityAt: ts('last_activity_at'),
    revokedBy: text('revoked_by', { enum: ['merchant', 'bank'] }),
    /** When the worker next asks the connector about a pending mandate. */
    nextStatusCheckAt: ts('next_status_check_at'),
    ...versioned(),
  },
  (t) => [
    ...objectIndexes('mandates', t),
    index('mandates_customer_email_idx').on(t.accountId, t.livemode, t.customerEmail),
    // The built-in processors report by our id alone (see payments_id_idx).
    index('mandates_id_idx').on(t.id),
    index('mandates_status_check_idx').on(t.nextStatusCheckAt).where(sql`status = 'pending'`),
    index('mandates_dormancy_idx').on(t.lastActivityAt).where(sql`status = 'active'`),
  ],
);

// ---- beneficiaries and payouts (issue 5) --------------------------------------------------------

/** Someone who receives payouts (src/domain/beneficiaries); disabled ones are kept for history. */
export const beneficiaries = pgTable(
  'beneficiaries',
  {
    ...objectKey(),
    status: text('status', { enum: ['active', 'disabled'] }).notNull(),
    type: text('type', { enum: ['individual', 'business'] }).notNull(),
    name: text('name').notNull(),
    email: text('email'),
    ...bankAccount(),
    metadata: metadata(),
    ...versioned(),
  },
  (t) => [
    ...objectIndexes('beneficiaries', t),
    index('beneficiaries_fingerprint_idx').on(t.accountId, t.livemode, t.bankFingerprint),
  ],
);

/** The merchant's customers (src/domain/customers): who pays, and who saved payment methods belong to. */
export const customers = pgTable(
  'customers',
  {
    ...objectKey(),
    email: text('email').notNull(),
    name: text('name'),
    /** The merchant's own id for the customer; unique per account and mode among customers not deleted. */
    reference: text('reference'),
    metadata: metadata(),
    /** Set by DELETE: the row stays for the orders and payment methods that name it, the API no longer shows it. */
    deletedAt: ts('deleted_at'),
    ...versioned(),
  },
  (t) => [
    ...objectIndexes('customers', t),
    uniqueIndex('customers_reference_key').on(t.accountId, t.livemode, t.reference).where(sql`reference IS NOT NULL AND deleted_at IS NULL`),
    index('customers_email_idx').on(t.accountId, t.livemode, t.email),
  ],
);

/**
 * Saved payment methods (src/domain/payment-methods): a card summary in clear, the card itself only
 * in the vault (vault_record_id). The network transaction id is kept for merchant-initiated
 * payments and never shown through the API.
 */
export const paymentMethods = pgTable(
  'payment_methods',
  {
    ...objectKey(),
    customerId: uuid('customer_id').notNull(),
    usage: text('usage', { enum: ['on_session', 'off_session'] }).notNull(),
    status: text('status', { enum: ['pending', 'active', 'requires_action', 'failed', 'detached'] }).notNull(),
    cardBrand: text('card_brand').notNull(),
    cardLast4: text('card_last4').notNull(),
    cardExpMonth: integer('card_exp_month').notNull(),
    cardExpYear: integer('card_exp_year').notNull(),
    /** Keyed per merchant account: equal for the same card within one account, useless across accounts. */
    cardFingerprint: text('card_fingerprint').notNull(),
    cardFunding: text('card_funding'),
    /** The card's issuing country (ISO 3166-1 alpha-2) once a processor has reported it for a payment of it: its routing segment. */
    cardIssuingCountry: text('card_issuing_country'),
    networkTransactionId: text('network_transaction_id'),
    /** The vault's record holding the card; null once erased (detached) or before the vault holds it. */
    vaultRecordId: text('vault_record_id'),
    metadata: metadata(),
    detachedAt: ts('detached_at'),
    // The verification of a card saved without paying (src/domain/payment-methods/verification.ts),
    // a movement like a payment: its route, the connector that answered, every call, the outcome.
    // Empty for a card saved while paying.
    ...routed(),
    // Cards saved before verifications existed, or while paying, have no route.
    route: text('route').array().notNull().default(sql`'{}'::text[]`),
    /** The currency the zero-amount authorisation was routed and sent in; null for a card saved while paying. */
    currency: text('currency'),
    /** 3-D Secure: where the customer goes, while requires_action. */
    nextAction: jsonb('next_action').$type<{ url: string; method: 'GET' | 'POST'; data?: Record<string, string> }>(),
    /** The merchant's return_url, where the customer goes once back from 3-D Secure. */
    returnUrl: text('return_url'),
    /** Opens the return endpoint of this verification (the customer's browser carries no API key); null without return_url. */
    actionToken: text('action_token'),
    /** When the worker next asks the connector about a verification left pending. */
    nextStatusCheckAt: ts('next_status_check_at'),
    ...versioned(),
  },
  (t) => [
    ...objectIndexes('payment_methods', t),
    index('payment_methods_customer_idx').on(t.accountId, t.livemode, t.customerId),
    // The built-in processors report by our id alone (see payments_id_idx).
    index('payment_methods_id_idx').on(t.id),
  ],
);

/** Money sent to a beneficiary (src/domain/payouts); its amount is reserved in the ledger while it is in flight. */
export const payouts = pgTable(
  'payouts',
  {
    ...objectKey(),
    beneficiaryId: uuid('beneficiary_id').notNull(),
    status: text('status', { enum: ['pending', 'processing', 'paid', 'failed', 'cancelled', 'returned'] }).notNull(),
    amount: money('amount').notNull(),
    currency: text('currency').notNull(),
    reference: text('reference').notNull(),
    description: text('description'),
    metadata: metadata(),
    ...routed(),
    /** pending: when the worker submits it; processing: when the worker next asks the bank about it. */
    nextActionAt: ts('next_action_at'),
    ...versioned(),
  },
  (t) => [
    ...objectIndexes('payouts', t),
    index('payouts_beneficiary_idx').on(t.accountId, t.livemode, t.beneficiaryId),
    // The built-in processors report by our id alone (see payments_id_idx).
    index('payouts_id_idx').on(t.id),
    index('payouts_due_idx').on(t.nextActionAt).where(sql`status IN ('pending', 'processing')`),
  ],
);

// ---- the built-in simulated processors' own books (src/connectors/simulator) ----
// Not ours: what the simulated processors hold, as a real processor's database would, kept in the
// service's database only so that a restarted process, or several processes, meet the same
// simulated processor without a simulator server. No account column: a processor keys its books by
// the merchant's reference (our object id), as the simulators' protocol does.

/** Charges, refunds, mandates and payouts each simulated processor holds, by our reference. */
export const simulatorObjects = pgTable(
  'simulator_objects',
  {
    processor: text('processor').notNull(),
    kind: text('kind', { enum: ['charge', 'refund', 'capture', 'mandate', 'payout', 'dispute'] }).notNull(),
    /** The merchant's reference (our id): the processor's idempotency key. */
    reference: text('reference').notNull(),
    /** The processor's own id of the object. */
    objectId: text('object_id').notNull(),
    /** The object in the processor's wire vocabulary (src/connectors/simulator/protocol.ts). */
    body: jsonb('body').$type<Record<string, unknown>>().notNull(),
    /** When the processor acts on its own: settles the object to due_state if still unsettled, and reports it by webhook. */
    dueAt: ts('due_at'),
    dueState: text('due_state'),
  },
  (t) => [
    primaryKey({ columns: [t.processor, t.kind, t.reference] }),
    uniqueIndex('simulator_objects_object_id_key').on(t.processor, t.kind, t.objectId),
    index('simulator_objects_due_idx').on(t.dueAt).where(sql`due_at IS NOT NULL`),
  ],
);

/** Webhooks the simulated processors owe the service: sent when due, retried until delivered or given up. */
export const simulatorReports = pgTable(
  'simulator_reports',
  {
    eventId: text('event_id').primaryKey(),
    processor: text('processor').notNull(),
    /** The event as the processor sends it (signed at each attempt). */
    body: jsonb('body').$type<Record<string, unknown>>().notNull(),
    /** Next attempt; while an attempt runs, the end of its sender's lease. */
    dueAt: ts('due_at').notNull(),
    attempts: integer('attempts').notNull().default(0),
  },
  (t) => [index('simulator_reports_due_idx').on(t.dueAt)],
);

/**
 * Dashboard sessions (src/http/dashboard/): one account and one mode each. A session signed in with
 * a key ends with the key (revoked, expired); one made by the CLI waits for its one-time code,
 * which is cleared when used. Only digests of the code and of the cookie's token are kept.
 */
export const dashboardSessions = pgTable(
  'dashboard_sessions',
  {
    accountId: uuid('account_id').notNull().references(() => accounts.id),
    id: uuid('id').notNull(),
    livemode: boolean('livemode').notNull(),
    keyId: uuid('key_id'),
    codeHash: text('code_hash'),
    codeExpiresAt: ts('code_expires_at'),
    tokenHash: text('token_hash'),
    createdAt: ts('created_at').notNull(),
    expiresAt: ts('expires_at').notNull(),
    signedOutAt: ts('signed_out_at'),
  },
  (t) => [
    primaryKey({ columns: [t.accountId, t.id] }),
    uniqueIndex('dashboard_sessions_token_hash_key').on(t.tokenHash),
    uniqueIndex('dashboard_sessions_code_hash_key').on(t.codeHash),
  ],
);

// ---- pricing and settlement (issue 17) -----------------------------------------------------------

/**
 * What onboarding decided for an account: fees per payment method (or payouts) and currency, and
 * the settlement delay of payments. currency '' is the account's default for the method; a row
 * for a currency overrides it. A pricing column left null means "not set here" (the default row
 * applies, or no fee); settlement_days null likewise (T+0). An account with no row at all is on the
 * defaults, which the one-statement payment path relies on (src/domain/payments/one-statement.ts).
 */
export const accountTerms = pgTable(
  'account_terms',
  {
    accountId: uuid('account_id').notNull(),
    /** card | mandate for payments; payout for payouts. */
    method: text('method', { enum: ['card', 'mandate', 'payout'] }).notNull(),
    currency: text('currency').notNull(),
    feeBps: integer('fee_bps'),
    feeFixed: money('fee_fixed'),
    feeMinimum: money('fee_minimum'),
    /** Whether a refund gives back the part of the payment's fee it refunds. */
    refundsReturnFee: boolean('refunds_return_fee'),
    settlementDays: integer('settlement_days'),
    /** Cards: what a dispute costs the merchant when the processor withdraws its funds (minor units); null: not set here (0). */
    disputeFee: money('dispute_fee'),
    updatedAt: ts('updated_at').notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.accountId, t.method, t.currency] })],
);

/**
 * Money in the merchant's pending balance, one row per succeeded payment that settles later: its
 * net, reduced by refunds and reversals drawn on it, moved to available by the worker at
 * available_on (settled_at and the entry set in the same transaction, so exactly once). The open
 * rows of an account, mode and currency sum to its merchant_pending balance (ledger check).
 */
export const ledgerSettlements = pgTable(
  'ledger_settlements',
  {
    accountId: uuid('account_id').notNull(),
    /** The payment's id: one settlement per payment. */
    paymentId: uuid('payment_id').notNull(),
    livemode: boolean('livemode').notNull(),
    currency: text('currency').notNull(),
    /** What is still pending of the payment's net (minor units, ≥ 0). */
    amount: money('amount').notNull(),
    /** The net the payment put in pending. */
    originalAmount: money('original_amount').notNull(),
    availableOn: ts('available_on').notNull(),
    /** The payment's journal entry. */
    entryId: uuid('entry_id').notNull(),
    settledAt: ts('settled_at'),
    /** The entry that moved it to available (none when nothing was left to move). */
    settledEntryId: uuid('settled_entry_id'),
  },
  (t) => [
    primaryKey({ columns: [t.accountId, t.paymentId] }),
    index('ledger_settlements_due_idx').on(t.availableOn).where(sql`settled_at IS NULL`),
    index('ledger_settlements_open_idx').on(t.accountId, t.livemode, t.currency).where(sql`settled_at IS NULL`),
    index('ledger_settlements_entry_idx').on(t.accountId, t.entryId),
  ],
);

// ---- the card vault (issue 24) -----------------------------------------------------------------

/**
 * Card data sealed by the vault (src/vault, docs/vault.md): the number and expiry encrypted under
 * the record's own data key, that data key wrapped by a VAULT_KEYS key whose id is kept beside it,
 * so rotation finds the rows not yet under the first key. Erasing a record clears all three.
 */
export const vaultRecords = pgTable(
  'vault_records',
  {
    ...objectKey(),
    /** What the card is kept for: a saved payment method, or a card payment until it is final. */
    purpose: text('purpose', { enum: ['payment_method', 'payment'] }).notNull(),
    keyId: text('key_id'),
    wrappedKey: text('wrapped_key'),
    sealedCard: text('sealed_card'),
    createdAt: ts('created_at').notNull().defaultNow(),
    rewrappedAt: ts('rewrapped_at'),
    erasedAt: ts('erased_at'),
  },
  (t) => [
    primaryKey({ columns: [t.accountId, t.id] }),
    index('vault_records_key_idx').on(t.keyId).where(sql`wrapped_key IS NOT NULL`),
  ],
);

/** Every unsealing of a vault record: which record, for which movement, when (`vault audit`). */
export const vaultUnsealings = pgTable(
  'vault_unsealings',
  {
    accountId: uuid('account_id').notNull(),
    /** In the order of the unsealings (the audit lists newest first by it). */
    id: bigint('id', { mode: 'number' }).generatedAlwaysAsIdentity(),
    livemode: boolean('livemode').notNull(),
    recordId: uuid('record_id').notNull(),
    movementType: text('movement_type').notNull(),
    movementId: text('movement_id').notNull(),
    unsealedAt: ts('unsealed_at').notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ columns: [t.accountId, t.id] }),
    index('vault_unsealings_record_idx').on(t.recordId, t.id),
    index('vault_unsealings_order_idx').on(t.id),
  ],
);

// ---- reconciliation (issue 27) --------------------------------------------------------------------

/**
 * A comparison of one connector account's settlement records for a period with the ledger
 * (src/domain/reconciliation): what matched, and each exception found. Each run is its own row;
 * running a period again makes a new run and books no fee twice (processor_fees).
 */
export const reconciliationRuns = pgTable(
  'reconciliation_runs',
  {
    ...objectKey(),
    connectorAccountId: uuid('connector_account_id').notNull(),
    /** The processor's catalogue name (stripe, adyen, simulator_a…). */
    connector: text('connector').notNull(),
    /** Where the records came from: `stripe_balance_transactions`, `adyen_settlement_report`, `simulator_report`. */
    source: text('source').notNull(),
    periodStart: ts('period_start').notNull(),
    periodEnd: ts('period_end').notNull(),
    status: text('status', { enum: ['completed'] }).notNull(),
    records: integer('records').notNull(),
    matched: integer('matched').notNull(),
    exceptions: jsonb('exceptions').$type<Record<string, unknown>[]>().notNull(),
    /** Processor fees this run booked (fees booked by an earlier run of the same records are not counted again), per currency. */
    feesBooked: jsonb('fees_booked').$type<Record<string, number>>().notNull(),
    ...versioned(),
  },
  (t) => [...objectIndexes('reconciliation_runs', t), index('reconciliation_runs_connector_account_idx').on(t.accountId, t.livemode, t.connectorAccountId)],
);

/**
 * Processor fees booked from settlement records, one row per record (the processor's id of it):
 * the unique key is what makes a re-run book nothing twice. `connector` is the route key the
 * movements went under (a ca_ id, or a built-in simulator's name), so margins can be shown per connector.
 */
export const processorFees = pgTable(
  'processor_fees',
  {
    accountId: uuid('account_id').notNull(),
    livemode: boolean('livemode').notNull(),
    connector: text('connector').notNull(),
    recordId: text('record_id').notNull(),
    runId: uuid('run_id').notNull(),
    entryId: uuid('entry_id').notNull(),
    amount: money('amount').notNull(),
    currency: text('currency').notNull(),
    createdAt: ts('created_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.accountId, t.livemode, t.connector, t.recordId] })],
);
