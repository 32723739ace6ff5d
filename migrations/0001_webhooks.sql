CREATE TABLE "webhook_attempts" (
	"account_id" uuid NOT NULL,
	"id" uuid NOT NULL,
	"livemode" boolean NOT NULL,
	"delivery_id" uuid NOT NULL,
	"event_id" uuid NOT NULL,
	"event_type" text NOT NULL,
	"endpoint_id" uuid NOT NULL,
	"trigger" text NOT NULL,
	"attempt_number" integer NOT NULL,
	"url" text NOT NULL,
	"outcome" text NOT NULL,
	"response_status" integer,
	"error_code" text,
	"error_message" text,
	"duration_ms" integer NOT NULL,
	"next_retry_at" timestamp (3) with time zone,
	"created_at" timestamp (3) with time zone NOT NULL,
	CONSTRAINT "webhook_attempts_account_id_id_pk" PRIMARY KEY("account_id","id")
);
--> statement-breakpoint
CREATE TABLE "webhook_deliveries" (
	"account_id" uuid NOT NULL,
	"id" uuid NOT NULL,
	"livemode" boolean NOT NULL,
	"event_id" uuid NOT NULL,
	"endpoint_id" uuid NOT NULL,
	"trigger" text NOT NULL,
	"status" text NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL,
	"next_attempt_at" timestamp (3) with time zone NOT NULL,
	"lease_id" uuid,
	"created_at" timestamp (3) with time zone NOT NULL,
	"updated_at" timestamp (3) with time zone NOT NULL,
	CONSTRAINT "webhook_deliveries_account_id_id_pk" PRIMARY KEY("account_id","id")
);
--> statement-breakpoint
CREATE TABLE "webhook_endpoints" (
	"account_id" uuid NOT NULL,
	"id" uuid NOT NULL,
	"livemode" boolean NOT NULL,
	"url" text NOT NULL,
	"description" text,
	"enabled_events" text[] NOT NULL,
	"status" text NOT NULL,
	"disabled_reason" text,
	"metadata" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"secret_encrypted" text NOT NULL,
	"previous_secret_encrypted" text,
	"previous_secret_expires_at" timestamp (3) with time zone,
	"failing_since" timestamp (3) with time zone,
	"version" integer DEFAULT 1 NOT NULL,
	"created_at" timestamp (3) with time zone NOT NULL,
	"updated_at" timestamp (3) with time zone NOT NULL,
	"deleted_at" timestamp (3) with time zone,
	CONSTRAINT "webhook_endpoints_account_id_id_pk" PRIMARY KEY("account_id","id")
);
--> statement-breakpoint
CREATE INDEX "webhook_attempts_event_idx" ON "webhook_attempts" USING btree ("account_id","livemode","event_id","id");--> statement-breakpoint
CREATE INDEX "webhook_attempts_endpoint_idx" ON "webhook_attempts" USING btree ("account_id","livemode","endpoint_id","id");--> statement-breakpoint
CREATE INDEX "webhook_deliveries_due_idx" ON "webhook_deliveries" USING btree ("next_attempt_at") WHERE status = 'pending';--> statement-breakpoint
CREATE UNIQUE INDEX "webhook_deliveries_fan_out_key" ON "webhook_deliveries" USING btree ("account_id","event_id","endpoint_id") WHERE "trigger" = 'event';--> statement-breakpoint
CREATE INDEX "webhook_endpoints_list_idx" ON "webhook_endpoints" USING btree ("account_id","livemode","id");