-- Password reset (issue 54): a one-time link of its own purpose, mailed to the account's address
-- or issued by an admin. Accepting it sets a new password and ends every session of the user.
ALTER TABLE user_links DROP CONSTRAINT user_links_purpose_check;
ALTER TABLE user_links ADD CONSTRAINT user_links_purpose_check
  CHECK (purpose IN ('invite', 'setup', 'reset'));
