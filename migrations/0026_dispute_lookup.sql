CREATE INDEX "payments_dispute_lookup_idx" ON "payments" USING btree ("account_id","livemode","connector_reference");--> statement-breakpoint
DROP INDEX "payments_connector_reference_idx";
