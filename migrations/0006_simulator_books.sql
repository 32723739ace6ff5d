CREATE TABLE "simulator_objects" (
	"processor" text NOT NULL,
	"kind" text NOT NULL,
	"reference" text NOT NULL,
	"object_id" text NOT NULL,
	"body" jsonb NOT NULL,
	"due_at" timestamp (3) with time zone,
	"due_state" text,
	CONSTRAINT "simulator_objects_processor_kind_reference_pk" PRIMARY KEY("processor","kind","reference")
);
--> statement-breakpoint
CREATE TABLE "simulator_reports" (
	"event_id" text PRIMARY KEY NOT NULL,
	"processor" text NOT NULL,
	"body" jsonb NOT NULL,
	"due_at" timestamp (3) with time zone NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX "simulator_objects_object_id_key" ON "simulator_objects" USING btree ("processor","kind","object_id");--> statement-breakpoint
CREATE INDEX "simulator_objects_due_idx" ON "simulator_objects" USING btree ("due_at") WHERE due_at IS NOT NULL;--> statement-breakpoint
CREATE INDEX "simulator_reports_due_idx" ON "simulator_reports" USING btree ("due_at");