CREATE TABLE "disputes" (
	"account_id" uuid NOT NULL,
	"id" uuid NOT NULL,
	"livemode" boolean NOT NULL,
	"payment_id" uuid NOT NULL,
	"status" text NOT NULL,
	"amount" bigint NOT NULL,
	"currency" text NOT NULL,
	"reason" text NOT NULL,
	"processor_reason" text,
	"connector" text NOT NULL,
	"connector_reference" text NOT NULL,
	"stage" integer NOT NULL,
	"evidence_due_by" timestamp (3) with time zone,
	"evidence" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"defense_reason" text,
	"withdrawals" integer DEFAULT 0 NOT NULL,
	"reinstatements" integer DEFAULT 0 NOT NULL,
	"funds_booked" boolean DEFAULT false NOT NULL,
	"fee" bigint DEFAULT 0 NOT NULL,
	"fee_returned" boolean DEFAULT false NOT NULL,
	"due_soon_notified_at" timestamp (3) with time zone,
	"metadata" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"version" integer DEFAULT 1 NOT NULL,
	"created_at" timestamp (3) with time zone NOT NULL,
	"updated_at" timestamp (3) with time zone NOT NULL,
	CONSTRAINT "disputes_account_id_id_pk" PRIMARY KEY("account_id","id")
);
--> statement-breakpoint
ALTER TABLE "account_terms" ADD COLUMN "dispute_fee" bigint;--> statement-breakpoint
CREATE INDEX "disputes_list_idx" ON "disputes" USING btree ("account_id","livemode","id");--> statement-breakpoint
CREATE INDEX "disputes_payment_idx" ON "disputes" USING btree ("account_id","livemode","payment_id");--> statement-breakpoint
CREATE UNIQUE INDEX "disputes_id_key" ON "disputes" USING btree ("id");--> statement-breakpoint
CREATE UNIQUE INDEX "disputes_processor_key" ON "disputes" USING btree ("account_id","livemode","connector","connector_reference");--> statement-breakpoint
CREATE INDEX "disputes_due_idx" ON "disputes" USING btree ("evidence_due_by") WHERE status IN ('warning_needs_response', 'needs_response') AND due_soon_notified_at IS NULL;--> statement-breakpoint
CREATE INDEX "payments_connector_reference_idx" ON "payments" USING btree ("connector_reference");