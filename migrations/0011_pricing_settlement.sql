CREATE TABLE "account_terms" (
	"account_id" uuid NOT NULL,
	"method" text NOT NULL,
	"currency" text NOT NULL,
	"fee_bps" integer,
	"fee_fixed" bigint,
	"fee_minimum" bigint,
	"refunds_return_fee" boolean,
	"settlement_days" integer,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "account_terms_account_id_method_currency_pk" PRIMARY KEY("account_id","method","currency")
);
--> statement-breakpoint
CREATE TABLE "ledger_settlements" (
	"account_id" uuid NOT NULL,
	"payment_id" uuid NOT NULL,
	"livemode" boolean NOT NULL,
	"currency" text NOT NULL,
	"amount" bigint NOT NULL,
	"original_amount" bigint NOT NULL,
	"available_on" timestamp (3) with time zone NOT NULL,
	"entry_id" uuid NOT NULL,
	"settled_at" timestamp (3) with time zone,
	"settled_entry_id" uuid,
	CONSTRAINT "ledger_settlements_account_id_payment_id_pk" PRIMARY KEY("account_id","payment_id")
);
--> statement-breakpoint
CREATE INDEX "ledger_settlements_due_idx" ON "ledger_settlements" USING btree ("available_on") WHERE settled_at IS NULL;--> statement-breakpoint
CREATE INDEX "ledger_settlements_open_idx" ON "ledger_settlements" USING btree ("account_id","livemode","currency") WHERE settled_at IS NULL;--> statement-breakpoint
CREATE INDEX "ledger_settlements_entry_idx" ON "ledger_settlements" USING btree ("account_id","entry_id");