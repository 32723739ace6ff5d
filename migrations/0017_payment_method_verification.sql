ALTER TABLE "payment_methods" ADD COLUMN "route" text[] DEFAULT '{}'::text[] NOT NULL;--> statement-breakpoint
ALTER TABLE "payment_methods" ADD COLUMN "connector" text;--> statement-breakpoint
ALTER TABLE "payment_methods" ADD COLUMN "connector_reference" text;--> statement-breakpoint
ALTER TABLE "payment_methods" ADD COLUMN "attempts" jsonb DEFAULT '[]'::jsonb NOT NULL;--> statement-breakpoint
ALTER TABLE "payment_methods" ADD COLUMN "failure_message" text;--> statement-breakpoint
ALTER TABLE "payment_methods" ADD COLUMN "currency" text;--> statement-breakpoint
ALTER TABLE "payment_methods" ADD COLUMN "next_action" jsonb;--> statement-breakpoint
ALTER TABLE "payment_methods" ADD COLUMN "return_url" text;--> statement-breakpoint
ALTER TABLE "payment_methods" ADD COLUMN "action_token" text;--> statement-breakpoint
ALTER TABLE "payment_methods" ADD COLUMN "next_status_check_at" timestamp (3) with time zone;--> statement-breakpoint
CREATE UNIQUE INDEX "payment_methods_id_key" ON "payment_methods" USING btree ("id");