-- Chains are configuration (CHAINS, issue 27): no column names them by hand any more. Every CHECK that listed
-- ('ethereum', 'solana') goes, whatever PostgreSQL named it; the service refuses to start on a chain it does not
-- know, and refuses to drop one that still holds funds or open payments (src/core/treasury.ts).
DO $$
DECLARE
  c record;
BEGIN
  FOR c IN
    SELECT conrelid::regclass AS tbl, conname
      FROM pg_constraint
     WHERE contype = 'c'
       AND connamespace = current_schema()::regnamespace
       AND pg_get_constraintdef(oid) LIKE '%''ethereum''%'
       AND pg_get_constraintdef(oid) LIKE '%''solana''%'
  LOOP
    EXECUTE format('ALTER TABLE %s DROP CONSTRAINT %I', c.tbl, c.conname);
  END LOOP;
END $$;
