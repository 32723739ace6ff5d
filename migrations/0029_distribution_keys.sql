-- Keys a table distributed by account (Citus) can hold: every unique key of a tenant's table
-- includes account_id, and what is found without an account (an API key by its hash, an old checkout
-- token, a connector account's webhook URL) goes through a small reference table. Online-safe in
-- this order: the new tables and indexes first (IF NOT EXISTS: built beforehand CONCURRENTLY on a
-- large database, docs/operations.md#distributing-by-account-citus), the backfill, then the old keys go.
CREATE TABLE IF NOT EXISTS "api_key_lookups" (
	"key_hash" text PRIMARY KEY NOT NULL,
	"account_id" uuid NOT NULL,
	"key_id" uuid NOT NULL,
	"livemode" boolean NOT NULL,
	"expires_at" timestamp (3) with time zone,
	"revoked_at" timestamp (3) with time zone
);
--> statement-breakpoint
CREATE TABLE IF NOT EXISTS "checkout_token_routes" (
	"token" text PRIMARY KEY NOT NULL,
	"account_id" uuid NOT NULL
);
--> statement-breakpoint
CREATE TABLE IF NOT EXISTS "connector_account_routes" (
	"id" uuid PRIMARY KEY NOT NULL,
	"account_id" uuid NOT NULL,
	"livemode" boolean NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX IF NOT EXISTS "api_key_lookups_key_key" ON "api_key_lookups" USING btree ("account_id","key_id");--> statement-breakpoint
CREATE INDEX IF NOT EXISTS "captures_id_idx" ON "captures" USING btree ("id");--> statement-breakpoint
CREATE UNIQUE INDEX IF NOT EXISTS "dispute_responses_pending_dispute_key" ON "dispute_responses" USING btree ("account_id","dispute_id") WHERE status = 'pending';--> statement-breakpoint
CREATE INDEX IF NOT EXISTS "mandates_id_idx" ON "mandates" USING btree ("id");--> statement-breakpoint
CREATE INDEX IF NOT EXISTS "payment_methods_id_idx" ON "payment_methods" USING btree ("id");--> statement-breakpoint
CREATE UNIQUE INDEX IF NOT EXISTS "payment_orders_checkout_token_account_key" ON "payment_orders" USING btree ("account_id","checkout_token");--> statement-breakpoint
CREATE INDEX IF NOT EXISTS "payments_id_idx" ON "payments" USING btree ("id");--> statement-breakpoint
CREATE INDEX IF NOT EXISTS "payouts_id_idx" ON "payouts" USING btree ("id");--> statement-breakpoint
CREATE INDEX IF NOT EXISTS "refunds_id_idx" ON "refunds" USING btree ("id");--> statement-breakpoint
CREATE INDEX IF NOT EXISTS "voids_id_idx" ON "voids" USING btree ("id");--> statement-breakpoint
CREATE UNIQUE INDEX IF NOT EXISTS "voids_pending_payment_key" ON "voids" USING btree ("account_id","payment_id") WHERE status = 'pending';--> statement-breakpoint
INSERT INTO "api_key_lookups" ("key_hash", "account_id", "key_id", "livemode", "expires_at", "revoked_at")
  SELECT "key_hash", "account_id", "id", "livemode", "expires_at", "revoked_at" FROM "api_keys" ON CONFLICT DO NOTHING;--> statement-breakpoint
INSERT INTO "checkout_token_routes" ("token", "account_id")
  SELECT "checkout_token", "account_id" FROM "payment_orders" WHERE "checkout_token" IS NOT NULL AND strpos("checkout_token", '.') = 0 ON CONFLICT DO NOTHING;--> statement-breakpoint
INSERT INTO "connector_account_routes" ("id", "account_id", "livemode")
  SELECT "id", "account_id", "livemode" FROM "connector_accounts" ON CONFLICT DO NOTHING;--> statement-breakpoint
DROP INDEX IF EXISTS "api_keys_key_hash_key";--> statement-breakpoint
DROP INDEX IF EXISTS "captures_id_key";--> statement-breakpoint
DROP INDEX IF EXISTS "connector_accounts_id_key";--> statement-breakpoint
DROP INDEX IF EXISTS "dispute_responses_id_key";--> statement-breakpoint
DROP INDEX IF EXISTS "dispute_responses_pending_key";--> statement-breakpoint
DROP INDEX IF EXISTS "disputes_id_key";--> statement-breakpoint
DROP INDEX IF EXISTS "mandates_id_key";--> statement-breakpoint
DROP INDEX IF EXISTS "payment_methods_id_key";--> statement-breakpoint
DROP INDEX IF EXISTS "payment_orders_checkout_token_key";--> statement-breakpoint
DROP INDEX IF EXISTS "payments_id_key";--> statement-breakpoint
DROP INDEX IF EXISTS "payouts_id_key";--> statement-breakpoint
DROP INDEX IF EXISTS "refunds_id_key";--> statement-breakpoint
DROP INDEX IF EXISTS "voids_id_key";--> statement-breakpoint
DROP INDEX IF EXISTS "voids_pending_key";
