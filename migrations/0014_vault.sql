CREATE TABLE "vault_records" (
	"account_id" uuid NOT NULL,
	"id" uuid NOT NULL,
	"livemode" boolean NOT NULL,
	"purpose" text NOT NULL,
	"key_id" text,
	"wrapped_key" text,
	"sealed_card" text,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"rewrapped_at" timestamp (3) with time zone,
	"erased_at" timestamp (3) with time zone,
	CONSTRAINT "vault_records_account_id_id_pk" PRIMARY KEY("account_id","id")
);
--> statement-breakpoint
CREATE TABLE "vault_unsealings" (
	"account_id" uuid NOT NULL,
	"id" bigint GENERATED ALWAYS AS IDENTITY (sequence name "vault_unsealings_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"livemode" boolean NOT NULL,
	"record_id" uuid NOT NULL,
	"movement_type" text NOT NULL,
	"movement_id" text NOT NULL,
	"unsealed_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "vault_unsealings_account_id_id_pk" PRIMARY KEY("account_id","id")
);
--> statement-breakpoint
CREATE INDEX "vault_records_key_idx" ON "vault_records" USING btree ("key_id") WHERE wrapped_key IS NOT NULL;--> statement-breakpoint
CREATE INDEX "vault_unsealings_record_idx" ON "vault_unsealings" USING btree ("record_id","id");--> statement-breakpoint
CREATE INDEX "vault_unsealings_order_idx" ON "vault_unsealings" USING btree ("id");