CREATE TABLE "captures" (
	"account_id" uuid NOT NULL,
	"id" uuid NOT NULL,
	"livemode" boolean NOT NULL,
	"payment_id" uuid NOT NULL,
	"status" text NOT NULL,
	"amount" bigint NOT NULL,
	"currency" text NOT NULL,
	"final_capture" boolean NOT NULL,
	"connector" text NOT NULL,
	"connector_reference" text,
	"attempts" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"failure_code" text,
	"failure_message" text,
	"metadata" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"next_status_check_at" timestamp (3) with time zone,
	"version" integer DEFAULT 1 NOT NULL,
	"created_at" timestamp (3) with time zone NOT NULL,
	"updated_at" timestamp (3) with time zone NOT NULL,
	CONSTRAINT "captures_account_id_id_pk" PRIMARY KEY("account_id","id")
);
--> statement-breakpoint
ALTER TABLE "payment_orders" ADD COLUMN "capture_method" text DEFAULT 'automatic' NOT NULL;--> statement-breakpoint
ALTER TABLE "payments" ADD COLUMN "capture_method" text DEFAULT 'automatic' NOT NULL;--> statement-breakpoint
ALTER TABLE "payments" ADD COLUMN "amount_capturable" bigint DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "payments" ADD COLUMN "amount_captured" bigint DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "payments" ADD COLUMN "capture_before" timestamp (3) with time zone;--> statement-breakpoint
ALTER TABLE "payments" ADD COLUMN "cancellation_reason" text;--> statement-breakpoint
CREATE INDEX "captures_list_idx" ON "captures" USING btree ("account_id","livemode","id");--> statement-breakpoint
CREATE INDEX "captures_payment_idx" ON "captures" USING btree ("account_id","livemode","payment_id");--> statement-breakpoint
CREATE UNIQUE INDEX "captures_id_key" ON "captures" USING btree ("id");--> statement-breakpoint
CREATE INDEX "captures_status_check_idx" ON "captures" USING btree ("next_status_check_at") WHERE status = 'pending';--> statement-breakpoint
CREATE INDEX "payments_capture_before_idx" ON "payments" USING btree ("capture_before") WHERE status = 'requires_capture';--> statement-breakpoint
-- Automatic payments report what they took as captured once succeeded (docs/authorise-and-capture.md), so refunds are bounded by captured money for every payment.
UPDATE "payments" SET "amount_captured" = "amount" WHERE "status" = 'succeeded' AND "capture_method" = 'automatic';
