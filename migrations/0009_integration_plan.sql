CREATE TABLE "integration_evidence" (
	"account_id" uuid NOT NULL,
	"item" text NOT NULL,
	"evidence" text,
	"recorded_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "integration_evidence_account_id_item_pk" PRIMARY KEY("account_id","item")
);
--> statement-breakpoint
ALTER TABLE "accounts" ADD COLUMN "live_forced_at" timestamp (3) with time zone;