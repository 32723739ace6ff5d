CREATE TABLE "customers" (
	"account_id" uuid NOT NULL,
	"id" uuid NOT NULL,
	"livemode" boolean NOT NULL,
	"email" text NOT NULL,
	"name" text,
	"reference" text,
	"metadata" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"deleted_at" timestamp (3) with time zone,
	"version" integer DEFAULT 1 NOT NULL,
	"created_at" timestamp (3) with time zone NOT NULL,
	"updated_at" timestamp (3) with time zone NOT NULL,
	CONSTRAINT "customers_account_id_id_pk" PRIMARY KEY("account_id","id")
);
--> statement-breakpoint
CREATE TABLE "payment_methods" (
	"account_id" uuid NOT NULL,
	"id" uuid NOT NULL,
	"livemode" boolean NOT NULL,
	"customer_id" uuid NOT NULL,
	"usage" text NOT NULL,
	"status" text NOT NULL,
	"card_brand" text NOT NULL,
	"card_last4" text NOT NULL,
	"card_exp_month" integer NOT NULL,
	"card_exp_year" integer NOT NULL,
	"card_fingerprint" text NOT NULL,
	"card_funding" text,
	"network_transaction_id" text,
	"vault_record_id" text,
	"failure_code" text,
	"metadata" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"detached_at" timestamp (3) with time zone,
	"version" integer DEFAULT 1 NOT NULL,
	"created_at" timestamp (3) with time zone NOT NULL,
	"updated_at" timestamp (3) with time zone NOT NULL,
	CONSTRAINT "payment_methods_account_id_id_pk" PRIMARY KEY("account_id","id")
);
--> statement-breakpoint
ALTER TABLE "payment_orders" ADD COLUMN "customer_id" uuid;--> statement-breakpoint
CREATE INDEX "customers_list_idx" ON "customers" USING btree ("account_id","livemode","id");--> statement-breakpoint
CREATE UNIQUE INDEX "customers_reference_key" ON "customers" USING btree ("account_id","livemode","reference") WHERE reference IS NOT NULL AND deleted_at IS NULL;--> statement-breakpoint
CREATE INDEX "customers_email_idx" ON "customers" USING btree ("account_id","livemode","email");--> statement-breakpoint
CREATE INDEX "payment_methods_list_idx" ON "payment_methods" USING btree ("account_id","livemode","id");--> statement-breakpoint
CREATE INDEX "payment_methods_customer_idx" ON "payment_methods" USING btree ("account_id","livemode","customer_id");