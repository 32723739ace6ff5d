-- The worker forgets applied processor events by age (INBOUND_EVENT_RETENTION_DAYS): an index on
-- received_at, so its batched delete does not scan the table. IF NOT EXISTS: on a large table an
-- operator builds it beforehand with CREATE INDEX CONCURRENTLY under this name (docs/operations.md).
CREATE INDEX IF NOT EXISTS "connector_webhook_events_received_at_idx" ON "connector_webhook_events" USING btree ("received_at");
