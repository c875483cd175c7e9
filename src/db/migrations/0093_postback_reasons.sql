-- The reason a refused postback was given, kept with its outcome: the answer's message and the
-- parameter it names (the programme's own name for it). The postback log can then show what
-- the operator was told and be searched by it; outcomes written before this have neither.
ALTER TABLE postback_outcomes ADD COLUMN message text, ADD COLUMN field text;
