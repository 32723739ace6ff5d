CREATE TABLE "card_reattempts" (
	"account_id" uuid NOT NULL,
	"livemode" boolean NOT NULL,
	"card_fingerprint" text NOT NULL,
	"brand" text NOT NULL,
	"kind" text NOT NULL,
	"decline_type" text,
	"payment_id" uuid NOT NULL,
	"created_at" timestamp (3) with time zone NOT NULL
);
--> statement-breakpoint
ALTER TABLE "payments" ADD COLUMN "attempt_number" integer DEFAULT 1 NOT NULL;--> statement-breakpoint
ALTER TABLE "payments" ADD COLUMN "cascade" jsonb;--> statement-breakpoint
CREATE INDEX "card_reattempts_card_idx" ON "card_reattempts" USING btree ("account_id","livemode","card_fingerprint","created_at");