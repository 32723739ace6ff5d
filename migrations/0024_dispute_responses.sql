CREATE TABLE "dispute_responses" (
	"account_id" uuid NOT NULL,
	"id" uuid NOT NULL,
	"livemode" boolean NOT NULL,
	"dispute_id" uuid NOT NULL,
	"action" text NOT NULL,
	"status" text NOT NULL,
	"connector" text NOT NULL,
	"connector_reference" text,
	"dispute_connector_reference" text NOT NULL,
	"payment_id" uuid NOT NULL,
	"evidence" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"defense_reason" text,
	"attempts" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"failure_code" text,
	"failure_message" text,
	"next_status_check_at" timestamp (3) with time zone,
	"version" integer DEFAULT 1 NOT NULL,
	"created_at" timestamp (3) with time zone NOT NULL,
	"updated_at" timestamp (3) with time zone NOT NULL,
	CONSTRAINT "dispute_responses_account_id_id_pk" PRIMARY KEY("account_id","id")
);
--> statement-breakpoint
CREATE TABLE "unmatched_dispute_reports" (
	"connector" text NOT NULL,
	"event_id" text NOT NULL,
	"account_id" uuid,
	"livemode" boolean,
	"dispute_reference" text NOT NULL,
	"payment_reference" text,
	"amount" bigint NOT NULL,
	"currency" text NOT NULL,
	"status" text NOT NULL,
	"received_at" timestamp (3) with time zone NOT NULL,
	CONSTRAINT "unmatched_dispute_reports_connector_event_id_pk" PRIMARY KEY("connector","event_id")
);
--> statement-breakpoint
CREATE INDEX "dispute_responses_list_idx" ON "dispute_responses" USING btree ("account_id","livemode","id");--> statement-breakpoint
CREATE UNIQUE INDEX "dispute_responses_id_key" ON "dispute_responses" USING btree ("id");--> statement-breakpoint
CREATE UNIQUE INDEX "dispute_responses_pending_key" ON "dispute_responses" USING btree ("dispute_id") WHERE status = 'pending';--> statement-breakpoint
CREATE INDEX "dispute_responses_status_check_idx" ON "dispute_responses" USING btree ("next_status_check_at") WHERE status = 'pending';--> statement-breakpoint
CREATE INDEX "unmatched_dispute_reports_received_idx" ON "unmatched_dispute_reports" USING btree ("received_at");