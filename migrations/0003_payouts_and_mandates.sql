CREATE TABLE "beneficiaries" (
	"account_id" uuid NOT NULL,
	"id" uuid NOT NULL,
	"livemode" boolean NOT NULL,
	"status" text NOT NULL,
	"type" text NOT NULL,
	"name" text NOT NULL,
	"email" text,
	"bank_country" text NOT NULL,
	"bank_currency" text NOT NULL,
	"bank_last4" text NOT NULL,
	"bank_bic" text,
	"bank_sort_code" text,
	"bank_routing_number" text,
	"bank_ifsc" text,
	"bank_fingerprint" text NOT NULL,
	"bank_secret_encrypted" text NOT NULL,
	"metadata" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"version" integer DEFAULT 1 NOT NULL,
	"created_at" timestamp (3) with time zone NOT NULL,
	"updated_at" timestamp (3) with time zone NOT NULL,
	CONSTRAINT "beneficiaries_account_id_id_pk" PRIMARY KEY("account_id","id")
);
--> statement-breakpoint
CREATE TABLE "mandates" (
	"account_id" uuid NOT NULL,
	"id" uuid NOT NULL,
	"livemode" boolean NOT NULL,
	"status" text NOT NULL,
	"scheme" text NOT NULL,
	"currency" text NOT NULL,
	"reference" text NOT NULL,
	"max_amount" bigint,
	"customer_email" text NOT NULL,
	"customer_name" text,
	"bank_country" text NOT NULL,
	"bank_currency" text NOT NULL,
	"bank_last4" text NOT NULL,
	"bank_bic" text,
	"bank_sort_code" text,
	"bank_routing_number" text,
	"bank_ifsc" text,
	"bank_fingerprint" text NOT NULL,
	"bank_secret_encrypted" text NOT NULL,
	"route" text[] NOT NULL,
	"connector" text,
	"connector_reference" text,
	"attempts" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"failure_code" text,
	"failure_message" text,
	"metadata" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"activated_at" timestamp (3) with time zone,
	"last_debit_at" timestamp (3) with time zone,
	"last_activity_at" timestamp (3) with time zone,
	"revoked_by" text,
	"next_status_check_at" timestamp (3) with time zone,
	"version" integer DEFAULT 1 NOT NULL,
	"created_at" timestamp (3) with time zone NOT NULL,
	"updated_at" timestamp (3) with time zone NOT NULL,
	CONSTRAINT "mandates_account_id_id_pk" PRIMARY KEY("account_id","id")
);
--> statement-breakpoint
CREATE TABLE "payouts" (
	"account_id" uuid NOT NULL,
	"id" uuid NOT NULL,
	"livemode" boolean NOT NULL,
	"beneficiary_id" uuid NOT NULL,
	"status" text NOT NULL,
	"amount" bigint NOT NULL,
	"currency" text NOT NULL,
	"reference" text NOT NULL,
	"description" text,
	"metadata" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"route" text[] NOT NULL,
	"connector" text,
	"connector_reference" text,
	"attempts" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"failure_code" text,
	"failure_message" text,
	"next_action_at" timestamp (3) with time zone,
	"version" integer DEFAULT 1 NOT NULL,
	"created_at" timestamp (3) with time zone NOT NULL,
	"updated_at" timestamp (3) with time zone NOT NULL,
	CONSTRAINT "payouts_account_id_id_pk" PRIMARY KEY("account_id","id")
);
--> statement-breakpoint
ALTER TABLE "accounts" ADD COLUMN "payouts_enabled" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "accounts" ADD COLUMN "payout_max_amount" bigint;--> statement-breakpoint
CREATE INDEX "beneficiaries_list_idx" ON "beneficiaries" USING btree ("account_id","livemode","id");--> statement-breakpoint
CREATE INDEX "beneficiaries_fingerprint_idx" ON "beneficiaries" USING btree ("account_id","livemode","bank_fingerprint");--> statement-breakpoint
CREATE INDEX "mandates_list_idx" ON "mandates" USING btree ("account_id","livemode","id");--> statement-breakpoint
CREATE INDEX "mandates_customer_email_idx" ON "mandates" USING btree ("account_id","livemode","customer_email");--> statement-breakpoint
CREATE UNIQUE INDEX "mandates_id_key" ON "mandates" USING btree ("id");--> statement-breakpoint
CREATE INDEX "mandates_status_check_idx" ON "mandates" USING btree ("next_status_check_at") WHERE status = 'pending';--> statement-breakpoint
CREATE INDEX "mandates_dormancy_idx" ON "mandates" USING btree ("last_activity_at") WHERE status = 'active';--> statement-breakpoint
CREATE INDEX "payouts_list_idx" ON "payouts" USING btree ("account_id","livemode","id");--> statement-breakpoint
CREATE INDEX "payouts_beneficiary_idx" ON "payouts" USING btree ("account_id","livemode","beneficiary_id");--> statement-breakpoint
CREATE UNIQUE INDEX "payouts_id_key" ON "payouts" USING btree ("id");--> statement-breakpoint
CREATE INDEX "payouts_due_idx" ON "payouts" USING btree ("next_action_at") WHERE status IN ('pending', 'processing');