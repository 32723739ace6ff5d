CREATE TABLE "connector_webhook_events" (
	"account_id" uuid NOT NULL,
	"connector" text NOT NULL,
	"event_id" text NOT NULL,
	"livemode" boolean NOT NULL,
	"object_id" text NOT NULL,
	"received_at" timestamp (3) with time zone NOT NULL,
	CONSTRAINT "connector_webhook_events_account_id_connector_event_id_pk" PRIMARY KEY("account_id","connector","event_id")
);
--> statement-breakpoint
CREATE TABLE "journal_entries" (
	"account_id" uuid NOT NULL,
	"id" uuid NOT NULL,
	"livemode" boolean NOT NULL,
	"type" text NOT NULL,
	"currency" text NOT NULL,
	"source_type" text,
	"source_id" uuid,
	"description" text,
	"created_at" timestamp (3) with time zone NOT NULL,
	CONSTRAINT "journal_entries_account_id_id_pk" PRIMARY KEY("account_id","id")
);
--> statement-breakpoint
CREATE TABLE "journal_lines" (
	"account_id" uuid NOT NULL,
	"entry_id" uuid NOT NULL,
	"line_no" integer NOT NULL,
	"livemode" boolean NOT NULL,
	"ledger_account" text NOT NULL,
	"amount" bigint NOT NULL,
	CONSTRAINT "journal_lines_account_id_entry_id_line_no_pk" PRIMARY KEY("account_id","entry_id","line_no")
);
--> statement-breakpoint
CREATE TABLE "ledger_balances" (
	"account_id" uuid NOT NULL,
	"livemode" boolean NOT NULL,
	"ledger_account" text NOT NULL,
	"currency" text NOT NULL,
	"slot" integer NOT NULL,
	"balance" bigint NOT NULL,
	CONSTRAINT "ledger_balances_account_id_livemode_ledger_account_currency_slot_pk" PRIMARY KEY("account_id","livemode","ledger_account","currency","slot")
);
--> statement-breakpoint
CREATE TABLE "payments" (
	"account_id" uuid NOT NULL,
	"id" uuid NOT NULL,
	"livemode" boolean NOT NULL,
	"payment_order_id" uuid NOT NULL,
	"status" text NOT NULL,
	"amount" bigint NOT NULL,
	"currency" text NOT NULL,
	"amount_refunded" bigint DEFAULT 0 NOT NULL,
	"payment_method" jsonb NOT NULL,
	"route" text[] NOT NULL,
	"connector" text,
	"connector_reference" text,
	"attempts" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"failure_code" text,
	"failure_message" text,
	"metadata" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"next_status_check_at" timestamp (3) with time zone,
	"version" integer DEFAULT 1 NOT NULL,
	"created_at" timestamp (3) with time zone NOT NULL,
	"updated_at" timestamp (3) with time zone NOT NULL,
	CONSTRAINT "payments_account_id_id_pk" PRIMARY KEY("account_id","id")
);
--> statement-breakpoint
CREATE TABLE "refunds" (
	"account_id" uuid NOT NULL,
	"id" uuid NOT NULL,
	"livemode" boolean NOT NULL,
	"payment_id" uuid NOT NULL,
	"status" text NOT NULL,
	"amount" bigint NOT NULL,
	"currency" text NOT NULL,
	"reason" text,
	"connector" text NOT NULL,
	"connector_reference" text,
	"failure_code" text,
	"failure_message" text,
	"metadata" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"next_status_check_at" timestamp (3) with time zone,
	"version" integer DEFAULT 1 NOT NULL,
	"created_at" timestamp (3) with time zone NOT NULL,
	"updated_at" timestamp (3) with time zone NOT NULL,
	CONSTRAINT "refunds_account_id_id_pk" PRIMARY KEY("account_id","id")
);
--> statement-breakpoint
CREATE TABLE "routing_configs" (
	"account_id" uuid NOT NULL,
	"livemode" boolean NOT NULL,
	"rules" jsonb NOT NULL,
	"version" integer DEFAULT 1 NOT NULL,
	"created_at" timestamp (3) with time zone NOT NULL,
	"updated_at" timestamp (3) with time zone NOT NULL,
	CONSTRAINT "routing_configs_account_id_livemode_pk" PRIMARY KEY("account_id","livemode")
);
--> statement-breakpoint
CREATE INDEX "journal_entries_list_idx" ON "journal_entries" USING btree ("account_id","livemode","id");--> statement-breakpoint
CREATE INDEX "journal_entries_source_idx" ON "journal_entries" USING btree ("account_id","source_id");--> statement-breakpoint
CREATE INDEX "payments_list_idx" ON "payments" USING btree ("account_id","livemode","id");--> statement-breakpoint
CREATE INDEX "payments_order_idx" ON "payments" USING btree ("account_id","livemode","payment_order_id");--> statement-breakpoint
CREATE UNIQUE INDEX "payments_id_key" ON "payments" USING btree ("id");--> statement-breakpoint
CREATE INDEX "payments_status_check_idx" ON "payments" USING btree ("next_status_check_at") WHERE status = 'pending';--> statement-breakpoint
CREATE INDEX "refunds_list_idx" ON "refunds" USING btree ("account_id","livemode","id");--> statement-breakpoint
CREATE INDEX "refunds_payment_idx" ON "refunds" USING btree ("account_id","livemode","payment_id");--> statement-breakpoint
CREATE UNIQUE INDEX "refunds_id_key" ON "refunds" USING btree ("id");--> statement-breakpoint
CREATE INDEX "refunds_status_check_idx" ON "refunds" USING btree ("next_status_check_at") WHERE status = 'pending';--> statement-breakpoint
-- Double-entry integrity, enforced by the database as well as by the one posting function
-- (src/ledger/journal.ts): at commit, every journal entry touched by the transaction must have
-- lines summing to zero. Deferred, so an entry's lines can be inserted in any order.
CREATE FUNCTION journal_entry_must_balance() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  total numeric;
  line_count integer;
BEGIN
  SELECT coalesce(sum(amount), 0), count(*) INTO total, line_count
  FROM journal_lines WHERE account_id = NEW.account_id AND entry_id = NEW.entry_id;
  IF total <> 0 OR line_count < 2 THEN
    RAISE EXCEPTION 'journal entry % does not balance: % lines summing to %', NEW.entry_id, line_count, total
      USING ERRCODE = 'check_violation';
  END IF;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE CONSTRAINT TRIGGER journal_lines_balanced AFTER INSERT ON journal_lines
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION journal_entry_must_balance();
--> statement-breakpoint
-- The journal is append-only: a correction is a new entry, never an edit.
CREATE FUNCTION journal_is_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'the journal is append-only (% on %)', TG_OP, TG_TABLE_NAME USING ERRCODE = 'restrict_violation';
END $$;
--> statement-breakpoint
CREATE TRIGGER journal_lines_append_only BEFORE UPDATE OR DELETE ON journal_lines
  FOR EACH ROW EXECUTE FUNCTION journal_is_append_only();
--> statement-breakpoint
CREATE TRIGGER journal_entries_append_only BEFORE UPDATE OR DELETE ON journal_entries
  FOR EACH ROW EXECUTE FUNCTION journal_is_append_only();
