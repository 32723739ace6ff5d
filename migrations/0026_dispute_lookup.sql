CREATE INDEX IF NOT EXISTS "payments_dispute_lookup_idx" ON "payments" USING btree ("account_id","livemode","connector_reference");--> statement-breakpoint
DROP INDEX IF EXISTS "payments_connector_reference_idx";
