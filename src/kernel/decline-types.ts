// What a refusal says about trying again (docs/declines.md): below every layer, as the stored
// payments' column (src/storage/schema.ts), the API's schemas and the connectors' mappings all
// name them. Which processor code is which lives with the connectors (src/connectors/declines.ts).
export const DECLINE_TYPES = [
  /** The issuer will never approve this card (lost, stolen, closed, revoked): Visa category 1, Mastercard advice 03/21. */
  'do_not_retry',
  /** The issuer cannot approve now (funds, limits, issuer unavailable): Visa category 2; may succeed later or elsewhere. */
  'retry_later',
  /** The card data is wrong (number, expiry, CVC): Visa category 3; only new data can succeed. */
  'fix_data',
  /** A soft decline asking for 3-D Secure. */
  'authentication_required',
  /** Do not honour and every other unexplained decline: Visa category 4. */
  'generic',
  /** The processor refused before acting (429, a refused connection, an error that says nothing was done). */
  'processor',
] as const;
export type DeclineType = (typeof DECLINE_TYPES)[number];
