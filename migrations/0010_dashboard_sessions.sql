CREATE TABLE "dashboard_sessions" (
	"account_id" uuid NOT NULL,
	"id" uuid NOT NULL,
	"livemode" boolean NOT NULL,
	"key_id" uuid,
	"code_hash" text,
	"code_expires_at" timestamp (3) with time zone,
	"token_hash" text,
	"created_at" timestamp (3) with time zone NOT NULL,
	"expires_at" timestamp (3) with time zone NOT NULL,
	"signed_out_at" timestamp (3) with time zone,
	CONSTRAINT "dashboard_sessions_account_id_id_pk" PRIMARY KEY("account_id","id")
);
--> statement-breakpoint
ALTER TABLE "dashboard_sessions" ADD CONSTRAINT "dashboard_sessions_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "dashboard_sessions_token_hash_key" ON "dashboard_sessions" USING btree ("token_hash");--> statement-breakpoint
CREATE UNIQUE INDEX "dashboard_sessions_code_hash_key" ON "dashboard_sessions" USING btree ("code_hash");