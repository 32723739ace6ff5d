-- Aborts the statement that calls it, with `reason` as the error message (SQLSTATE P0001).
-- One-statement writes (data-modifying CTEs, see src/domain/payments/one-statement.ts) chain their
-- parts so that each runs only if the one before did; where a later part can still come up
-- empty after an earlier one wrote, the statement calls this in a CASE branch so that the whole
-- statement rolls back instead of committing half of the work. VOLATILE keeps the planner from
-- evaluating it ahead of time.
CREATE OR REPLACE FUNCTION abort_statement(reason text) RETURNS integer
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
  RAISE EXCEPTION USING ERRCODE = 'P0001', MESSAGE = reason;
END
$$;
