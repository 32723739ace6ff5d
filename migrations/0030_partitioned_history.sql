-- Written by hand: drizzle-kit cannot express PARTITION BY. events (by month) and webhook_attempts
-- (by day) become range-partitioned by created_at; src/storage/schema.ts describes the parents'
-- columns and keys (the primary keys now end with created_at), so drizzle-kit generates nothing
-- further. The steps, their locks and how to run the long parts ahead on a large table:
-- docs/operations.md#partitioned-history. Every statement here is short except the CHECK's
-- validation and the unique index, which are skipped when they were made ahead (CONCURRENTLY).
-- events: the table as it is becomes the partition of everything before the bound.
DO $$
BEGIN
  LOCK TABLE events IN ACCESS EXCLUSIVE MODE;
  IF NOT EXISTS (SELECT 1 FROM pg_constraint WHERE conrelid = 'events'::regclass AND conname = 'events_partition_bound') THEN
    -- The bound: now, or past the newest row when a clock wrote ahead of this one.
    EXECUTE format('ALTER TABLE events ADD CONSTRAINT events_partition_bound CHECK (created_at < %L::timestamptz)',
                   (SELECT greatest(now(), max(created_at) + interval '1 millisecond') FROM events));
  ELSIF NOT (SELECT convalidated FROM pg_constraint WHERE conrelid = 'events'::regclass AND conname = 'events_partition_bound') THEN
    ALTER TABLE events VALIDATE CONSTRAINT events_partition_bound;
  END IF;
END $$;
--> statement-breakpoint
CREATE UNIQUE INDEX IF NOT EXISTS events_legacy_key ON events USING btree (account_id, id, created_at);
--> statement-breakpoint
ALTER TABLE events DROP CONSTRAINT events_account_id_id_pk;
--> statement-breakpoint
ALTER TABLE events ADD CONSTRAINT events_legacy_pk PRIMARY KEY USING INDEX events_legacy_key;
--> statement-breakpoint
ALTER INDEX events_list_idx RENAME TO events_legacy_list_idx;
--> statement-breakpoint
ALTER INDEX events_undispatched_idx RENAME TO events_legacy_undispatched_idx;
--> statement-breakpoint
ALTER TABLE events RENAME TO events_legacy;
--> statement-breakpoint
CREATE TABLE events (LIKE events_legacy INCLUDING DEFAULTS) PARTITION BY RANGE (created_at);
--> statement-breakpoint
ALTER TABLE events ADD CONSTRAINT "events_account_id_id_created_at_pk" PRIMARY KEY ("account_id","id","created_at");
--> statement-breakpoint
CREATE INDEX "events_list_idx" ON "events" USING btree ("account_id","livemode","id");
--> statement-breakpoint
CREATE INDEX "events_undispatched_idx" ON "events" USING btree ("created_at") WHERE dispatched_at IS NULL;
--> statement-breakpoint
-- Attached without a scan (the validated CHECK proves the bound); then the default partition
-- (src/storage/partitions.ts: rows no partition was made for yet) and the months from the bound
-- to two ahead, named and cut as the worker's own.
DO $$
DECLARE
  bound timestamptz := substring(pg_get_constraintdef((SELECT oid FROM pg_constraint WHERE conrelid = 'events_legacy'::regclass
                                                      AND conname = 'events_partition_bound')) FROM '''([^'']+)''')::timestamptz;
  first timestamp := date_trunc('month', bound AT TIME ZONE 'UTC');
  lo timestamptz := bound;
  hi timestamptz;
BEGIN
  EXECUTE format('ALTER TABLE events ATTACH PARTITION events_legacy FOR VALUES FROM (MINVALUE) TO (%L)', bound);
  CREATE TABLE events_default PARTITION OF events DEFAULT;
  FOR n IN 0..2 LOOP
    -- Periods are cut in UTC, in timestamp arithmetic (a timestamptz month follows the session's zone).
    hi := (first + (n + 1) * interval '1 month') AT TIME ZONE 'UTC';
    EXECUTE format('CREATE TABLE %I PARTITION OF events FOR VALUES FROM (%L) TO (%L)',
                   'events_p' || to_char(first + n * interval '1 month', 'YYYY_MM'), lo, hi);
    lo := hi;
  END LOOP;
END $$;
--> statement-breakpoint
-- webhook_attempts: the table as it is becomes the partition of everything before the bound.
DO $$
BEGIN
  LOCK TABLE webhook_attempts IN ACCESS EXCLUSIVE MODE;
  IF NOT EXISTS (SELECT 1 FROM pg_constraint WHERE conrelid = 'webhook_attempts'::regclass AND conname = 'webhook_attempts_partition_bound') THEN
    -- The bound: now, or past the newest row when a clock wrote ahead of this one.
    EXECUTE format('ALTER TABLE webhook_attempts ADD CONSTRAINT webhook_attempts_partition_bound CHECK (created_at < %L::timestamptz)',
                   (SELECT greatest(now(), max(created_at) + interval '1 millisecond') FROM webhook_attempts));
  ELSIF NOT (SELECT convalidated FROM pg_constraint WHERE conrelid = 'webhook_attempts'::regclass AND conname = 'webhook_attempts_partition_bound') THEN
    ALTER TABLE webhook_attempts VALIDATE CONSTRAINT webhook_attempts_partition_bound;
  END IF;
END $$;
--> statement-breakpoint
CREATE UNIQUE INDEX IF NOT EXISTS webhook_attempts_legacy_key ON webhook_attempts USING btree (account_id, id, created_at);
--> statement-breakpoint
ALTER TABLE webhook_attempts DROP CONSTRAINT webhook_attempts_account_id_id_pk;
--> statement-breakpoint
ALTER TABLE webhook_attempts ADD CONSTRAINT webhook_attempts_legacy_pk PRIMARY KEY USING INDEX webhook_attempts_legacy_key;
--> statement-breakpoint
ALTER INDEX webhook_attempts_event_idx RENAME TO webhook_attempts_legacy_event_idx;
--> statement-breakpoint
ALTER INDEX webhook_attempts_endpoint_idx RENAME TO webhook_attempts_legacy_endpoint_idx;
--> statement-breakpoint
ALTER INDEX webhook_attempts_created_at_idx RENAME TO webhook_attempts_legacy_created_at_idx;
--> statement-breakpoint
ALTER TABLE webhook_attempts RENAME TO webhook_attempts_legacy;
--> statement-breakpoint
CREATE TABLE webhook_attempts (LIKE webhook_attempts_legacy INCLUDING DEFAULTS) PARTITION BY RANGE (created_at);
--> statement-breakpoint
ALTER TABLE webhook_attempts ADD CONSTRAINT "webhook_attempts_account_id_id_created_at_pk" PRIMARY KEY ("account_id","id","created_at");
--> statement-breakpoint
CREATE INDEX "webhook_attempts_event_idx" ON "webhook_attempts" USING btree ("account_id","livemode","event_id","id");
--> statement-breakpoint
CREATE INDEX "webhook_attempts_endpoint_idx" ON "webhook_attempts" USING btree ("account_id","livemode","endpoint_id","id");
--> statement-breakpoint
CREATE INDEX "webhook_attempts_created_at_idx" ON "webhook_attempts" USING btree ("created_at");
--> statement-breakpoint
-- Attached without a scan (the validated CHECK proves the bound); then the default partition
-- (src/storage/partitions.ts: rows no partition was made for yet) and the days from the bound
-- to two ahead, named and cut as the worker's own.
DO $$
DECLARE
  bound timestamptz := substring(pg_get_constraintdef((SELECT oid FROM pg_constraint WHERE conrelid = 'webhook_attempts_legacy'::regclass
                                                      AND conname = 'webhook_attempts_partition_bound')) FROM '''([^'']+)''')::timestamptz;
  first timestamp := date_trunc('day', bound AT TIME ZONE 'UTC');
  lo timestamptz := bound;
  hi timestamptz;
BEGIN
  EXECUTE format('ALTER TABLE webhook_attempts ATTACH PARTITION webhook_attempts_legacy FOR VALUES FROM (MINVALUE) TO (%L)', bound);
  CREATE TABLE webhook_attempts_default PARTITION OF webhook_attempts DEFAULT;
  FOR n IN 0..2 LOOP
    -- Periods are cut in UTC, in timestamp arithmetic (a timestamptz month follows the session's zone).
    hi := (first + (n + 1) * interval '1 day') AT TIME ZONE 'UTC';
    EXECUTE format('CREATE TABLE %I PARTITION OF webhook_attempts FOR VALUES FROM (%L) TO (%L)',
                   'webhook_attempts_p' || to_char(first + n * interval '1 day', 'YYYY_MM_DD'), lo, hi);
    lo := hi;
  END LOOP;
END $$;
