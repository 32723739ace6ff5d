CREATE TABLE "connector_accounts" (
	"account_id" uuid NOT NULL,
	"id" uuid NOT NULL,
	"livemode" boolean NOT NULL,
	"connector" text NOT NULL,
	"name" text NOT NULL,
	"status" text NOT NULL,
	"credentials_encrypted" text NOT NULL,
	"credential_hints" jsonb NOT NULL,
	"previous_webhook_secret_encrypted" text,
	"previous_webhook_secret_expires_at" timestamp (3) with time zone,
	"metadata" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"version" integer DEFAULT 1 NOT NULL,
	"created_at" timestamp (3) with time zone NOT NULL,
	"updated_at" timestamp (3) with time zone NOT NULL,
	"deleted_at" timestamp (3) with time zone,
	CONSTRAINT "connector_accounts_account_id_id_pk" PRIMARY KEY("account_id","id")
);
--> statement-breakpoint
CREATE INDEX "connector_accounts_list_idx" ON "connector_accounts" USING btree ("account_id","livemode","id");--> statement-breakpoint
CREATE UNIQUE INDEX "connector_accounts_name_key" ON "connector_accounts" USING btree ("account_id","livemode","name") WHERE deleted_at IS NULL;--> statement-breakpoint
CREATE UNIQUE INDEX "connector_accounts_id_key" ON "connector_accounts" USING btree ("id");