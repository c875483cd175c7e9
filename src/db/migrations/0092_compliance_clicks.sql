-- Click guard (issue 53): a site's compliant fallback page, where `/go` sends a visitor whose
-- country the brand may not be advertised in; such a click is recorded with the flag `blocked`
-- (flagged hits are not counted as clicks), so the operator never receives that visitor.
ALTER TABLE sites ADD COLUMN compliance_fallback_url text;

DO $$
DECLARE c record;
BEGIN
  FOR c IN
    SELECT conname FROM pg_constraint
    WHERE conrelid = 'clicks'::regclass AND contype = 'c' AND pg_get_constraintdef(oid) LIKE '%flag%'
  LOOP
    EXECUTE format('ALTER TABLE clicks DROP CONSTRAINT %I', c.conname);
  END LOOP;
END $$;
ALTER TABLE clicks ADD CONSTRAINT clicks_flag_check CHECK (flag IN ('head', 'prefetch', 'bot', 'blocked'));
