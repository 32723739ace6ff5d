ALTER TABLE "captures" ADD COLUMN "payment_reference" text;--> statement-breakpoint
ALTER TABLE "card_reattempts" ADD COLUMN "merchant_advice" text;--> statement-breakpoint
ALTER TABLE "payment_methods" ADD COLUMN "card_issuing_country" text;--> statement-breakpoint
ALTER TABLE "voids" ADD COLUMN "payment_reference" text;