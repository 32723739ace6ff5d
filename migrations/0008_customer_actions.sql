DROP INDEX "payments_status_check_idx";--> statement-breakpoint
ALTER TABLE "payments" ADD COLUMN "return_url" text;--> statement-breakpoint
ALTER TABLE "payments" ADD COLUMN "action_token" text;--> statement-breakpoint
ALTER TABLE "payments" ADD COLUMN "customer_action" jsonb;--> statement-breakpoint
ALTER TABLE "payments" ADD COLUMN "next_action_url" text;--> statement-breakpoint
ALTER TABLE "payments" ADD COLUMN "action_expires_at" timestamp (3) with time zone;--> statement-breakpoint
CREATE INDEX "payments_status_check_idx" ON "payments" USING btree ("next_status_check_at") WHERE status IN ('pending', 'requires_action');