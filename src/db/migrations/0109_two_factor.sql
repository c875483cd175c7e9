-- Two-factor sign-in (issue 54): TOTP (RFC 6238) with one-time recovery codes.
-- The TOTP secret is sealed (AES-256-GCM, src/lib/seal.ts) bound to the user id; an enrolment
-- not yet confirmed by a first code waits in totp_pending_sealed. totp_last_step is the time
-- step of the last code accepted: a code is never taken twice, nor an older one after it.
ALTER TABLE users ADD COLUMN totp_sealed text;
ALTER TABLE users ADD COLUMN totp_pending_sealed text;
ALTER TABLE users ADD COLUMN totp_enabled_at timestamptz;
ALTER TABLE users ADD COLUMN totp_last_step bigint;

-- Recovery codes: 80 random bits each, stored as SHA-256 only; a used code stays, marked.
CREATE TABLE user_recovery_codes (
  id         serial PRIMARY KEY,
  user_id    integer NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  code_hash  bytea NOT NULL,
  used_at    timestamptz,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX user_recovery_codes_user ON user_recovery_codes (user_id);

-- The state between a right password and the second step: a short-lived secret the client
-- sends with the code ('totp'), or with which it enrols first ('enrol', when two-factor is
-- required and the user has none). Attempts are counted; a spent or expired one is refused.
CREATE TABLE sign_in_challenges (
  id          serial PRIMARY KEY,
  user_id     integer NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  secret_hash bytea NOT NULL UNIQUE,
  step        text NOT NULL CHECK (step IN ('totp', 'enrol')),
  attempts    integer NOT NULL DEFAULT 0,
  expires_at  timestamptz NOT NULL,
  used_at     timestamptz,
  created_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX sign_in_challenges_expiry ON sign_in_challenges (expires_at);

-- Workspace-wide people settings: one row.
CREATE TABLE people_settings (
  id                 boolean PRIMARY KEY DEFAULT true CHECK (id),
  require_two_factor boolean NOT NULL DEFAULT false,
  updated_at         timestamptz NOT NULL DEFAULT now()
);
INSERT INTO people_settings DEFAULT VALUES;
