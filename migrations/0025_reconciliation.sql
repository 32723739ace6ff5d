CREATE TABLE "processor_fees" (
	"account_id" uuid NOT NULL,
	"livemode" boolean NOT NULL,
	"connector" text NOT NULL,
	"record_id" text NOT NULL,
	"run_id" uuid NOT NULL,
	"entry_id" uuid NOT NULL,
	"amount" bigint NOT NULL,
	"currency" text NOT NULL,
	"created_at" timestamp (3) with time zone NOT NULL,
	CONSTRAINT "processor_fees_account_id_livemode_connector_record_id_pk" PRIMARY KEY("account_id","livemode","connector","record_id")
);
--> statement-breakpoint
CREATE TABLE "reconciliation_runs" (
	"account_id" uuid NOT NULL,
	"id" uuid NOT NULL,
	"livemode" boolean NOT NULL,
	"connector_account_id" uuid NOT NULL,
	"connector" text NOT NULL,
	"source" text NOT NULL,
	"period_start" timestamp (3) with time zone NOT NULL,
	"period_end" timestamp (3) with time zone NOT NULL,
	"status" text NOT NULL,
	"records" integer NOT NULL,
	"matched" integer NOT NULL,
	"exceptions" jsonb NOT NULL,
	"fees_booked" jsonb NOT NULL,
	"version" integer DEFAULT 1 NOT NULL,
	"created_at" timestamp (3) with time zone NOT NULL,
	"updated_at" timestamp (3) with time zone NOT NULL,
	CONSTRAINT "reconciliation_runs_account_id_id_pk" PRIMARY KEY("account_id","id")
);
--> statement-breakpoint
CREATE INDEX "reconciliation_runs_list_idx" ON "reconciliation_runs" USING btree ("account_id","livemode","id");--> statement-breakpoint
CREATE INDEX "reconciliation_runs_connector_account_idx" ON "reconciliation_runs" USING btree ("account_id","livemode","connector_account_id");