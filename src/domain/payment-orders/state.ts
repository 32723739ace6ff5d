import { defineStateMachine, sqlStatusIn } from '../../kernel/state-machine.js';

export const PAYMENT_ORDER_STATUSES = ['open', 'processing', 'paid', 'cancelled', 'expired'] as const;
export type PaymentOrderStatus = (typeof PAYMENT_ORDER_STATUSES)[number];

const ORDER_TABLE: Record<PaymentOrderStatus, readonly PaymentOrderStatus[]> = {
  open: ['processing', 'cancelled', 'expired'],
  // A failed payment hands the order back for another attempt.
  processing: ['paid', 'open'],
  paid: [],
  cancelled: [],
  expired: [],
};

export const paymentOrderStates = defineStateMachine<PaymentOrderStatus, 'payable' | 'awaitingPayment'>('payment order', ORDER_TABLE, {
  // What a payment may take: the statuses the table lets move to `processing`.
  payable: (Object.keys(ORDER_TABLE) as PaymentOrderStatus[]).filter((s) => ORDER_TABLE[s].includes('processing')),
  // A payment is under way: its outcome pays the order or opens it again.
  awaitingPayment: ['processing'],
});

/** The status a new order starts in (both create paths: service.ts and one-statement.ts). */
export const NEW_ORDER_STATUS = 'open' satisfies PaymentOrderStatus;

/** The statuses from which a payment may take an order: those the table lets move to `processing`. */
const PAYABLE_STATUSES: readonly PaymentOrderStatus[] = paymentOrderStates.sourcesOf('processing');

/**
 * Whether an order can take a payment now: in a payable status and not past its expires_at. One
 * rule in two forms, side by side: `test` for the general path's admit rule, the checkout and the
 * one-statement payment's read; `sql` for that payment's statement (src/domain/payments/one-statement.ts),
 * its two conditions apart because the statement checks the order's version between them.
 */
export const orderPayable = {
  test: (order: { status: PaymentOrderStatus; expiresAt: Date }, now: Date): boolean => PAYABLE_STATUSES.includes(order.status) && order.expiresAt > now,
  sql: {
    status: sqlStatusIn(PAYABLE_STATUSES),
    /** `now`: the statement's parameter holding the request's instant. */
    notExpired: (now: string) => `expires_at > ${now}`,
  },
};
