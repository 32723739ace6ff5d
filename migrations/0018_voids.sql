CREATE TABLE "voids" (
	"account_id" uuid NOT NULL,
	"id" uuid NOT NULL,
	"livemode" boolean NOT NULL,
	"payment_id" uuid NOT NULL,
	"status" text NOT NULL,
	"reason" text NOT NULL,
	"connector" text NOT NULL,
	"connector_reference" text,
	"payment_connector_reference" text,
	"attempts" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"failure_code" text,
	"failure_message" text,
	"next_status_check_at" timestamp (3) with time zone,
	"version" integer DEFAULT 1 NOT NULL,
	"created_at" timestamp (3) with time zone NOT NULL,
	"updated_at" timestamp (3) with time zone NOT NULL,
	CONSTRAINT "voids_account_id_id_pk" PRIMARY KEY("account_id","id")
);
--> statement-breakpoint
CREATE INDEX "voids_list_idx" ON "voids" USING btree ("account_id","livemode","id");--> statement-breakpoint
CREATE INDEX "voids_payment_idx" ON "voids" USING btree ("account_id","livemode","payment_id");--> statement-breakpoint
CREATE UNIQUE INDEX "voids_id_key" ON "voids" USING btree ("id");--> statement-breakpoint
CREATE UNIQUE INDEX "voids_pending_key" ON "voids" USING btree ("payment_id") WHERE status = 'pending';--> statement-breakpoint
CREATE INDEX "voids_status_check_idx" ON "voids" USING btree ("next_status_check_at") WHERE status = 'pending';