-- The raw postback log and its outcomes stay append-only, with one exception: the deletions of a
-- player data erasure (src/modules/player-data), which turns podium.player_erasure on for its own
-- transaction only (set_config(..., true)). An update is still refused, and so is any delete made
-- without that setting.
CREATE OR REPLACE FUNCTION tracking_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'DELETE' AND current_setting('podium.player_erasure', true) = 'on' THEN
    RETURN OLD;
  END IF;
  RAISE EXCEPTION '% is append-only', TG_TABLE_NAME;
END $$;
