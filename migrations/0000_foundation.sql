CREATE TABLE "accounts" (
	"id" uuid PRIMARY KEY NOT NULL,
	"name" text NOT NULL,
	"status" text DEFAULT 'active' NOT NULL,
	"live_enabled" boolean DEFAULT false NOT NULL,
	"rate_limit_per_s" integer,
	"rate_limit_burst" integer,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "api_keys" (
	"account_id" uuid NOT NULL,
	"id" uuid NOT NULL,
	"livemode" boolean NOT NULL,
	"key_hash" text NOT NULL,
	"redacted" text NOT NULL,
	"name" text,
	"expires_at" timestamp (3) with time zone,
	"revoked_at" timestamp (3) with time zone,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "api_keys_account_id_id_pk" PRIMARY KEY("account_id","id")
);
--> statement-breakpoint
CREATE TABLE "events" (
	"account_id" uuid NOT NULL,
	"id" uuid NOT NULL,
	"livemode" boolean NOT NULL,
	"type" text NOT NULL,
	"object_id" text NOT NULL,
	"data" jsonb NOT NULL,
	"request_id" text,
	"idempotency_key" text,
	"created_at" timestamp (3) with time zone NOT NULL,
	"dispatched_at" timestamp (3) with time zone,
	CONSTRAINT "events_account_id_id_pk" PRIMARY KEY("account_id","id")
);
--> statement-breakpoint
CREATE TABLE "idempotency_keys" (
	"account_id" uuid NOT NULL,
	"livemode" boolean NOT NULL,
	"key" text NOT NULL,
	"fingerprint" text NOT NULL,
	"recovery_point" text DEFAULT 'started' NOT NULL,
	"locked_at" timestamp (3) with time zone,
	"response_status" integer,
	"response_body" text,
	"request_id" text NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"expires_at" timestamp (3) with time zone NOT NULL,
	CONSTRAINT "idempotency_keys_account_id_livemode_key_pk" PRIMARY KEY("account_id","livemode","key")
);
--> statement-breakpoint
CREATE TABLE "payment_orders" (
	"account_id" uuid NOT NULL,
	"id" uuid NOT NULL,
	"livemode" boolean NOT NULL,
	"status" text NOT NULL,
	"amount" bigint NOT NULL,
	"amount_paid" bigint DEFAULT 0 NOT NULL,
	"currency" text NOT NULL,
	"reference" text NOT NULL,
	"customer_email" text NOT NULL,
	"customer_name" text,
	"description" text,
	"metadata" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"expires_at" timestamp (3) with time zone NOT NULL,
	"version" integer DEFAULT 1 NOT NULL,
	"created_at" timestamp (3) with time zone NOT NULL,
	"updated_at" timestamp (3) with time zone NOT NULL,
	CONSTRAINT "payment_orders_account_id_id_pk" PRIMARY KEY("account_id","id")
);
--> statement-breakpoint
ALTER TABLE "api_keys" ADD CONSTRAINT "api_keys_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "api_keys_key_hash_key" ON "api_keys" USING btree ("key_hash");--> statement-breakpoint
CREATE INDEX "events_list_idx" ON "events" USING btree ("account_id","livemode","id");--> statement-breakpoint
CREATE INDEX "events_undispatched_idx" ON "events" USING btree ("created_at") WHERE dispatched_at IS NULL;--> statement-breakpoint
CREATE INDEX "idempotency_keys_expires_at_idx" ON "idempotency_keys" USING btree ("expires_at");--> statement-breakpoint
CREATE INDEX "payment_orders_list_idx" ON "payment_orders" USING btree ("account_id","livemode","id");--> statement-breakpoint
CREATE INDEX "payment_orders_reference_idx" ON "payment_orders" USING btree ("account_id","livemode","reference");--> statement-breakpoint
CREATE INDEX "payment_orders_open_expiry_idx" ON "payment_orders" USING btree ("expires_at") WHERE status = 'open';