ALTER TABLE "payment_orders" ADD COLUMN "checkout_token" text;--> statement-breakpoint
ALTER TABLE "payment_orders" ADD COLUMN "checkout_url" text;--> statement-breakpoint
ALTER TABLE "payment_orders" ADD COLUMN "success_url" text;--> statement-breakpoint
ALTER TABLE "payment_orders" ADD COLUMN "cancel_url" text;--> statement-breakpoint
CREATE UNIQUE INDEX "payment_orders_checkout_token_key" ON "payment_orders" USING btree ("checkout_token");