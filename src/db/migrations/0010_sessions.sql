-- Console sign-in sessions: an admin token exchanged for a cookie. Only hashes are stored; the
-- session acts with the live scopes of its admin token, so revoking the token ends the session.
CREATE TABLE admin_sessions (
  id              bigserial PRIMARY KEY,
  session_hash    bytea NOT NULL UNIQUE,
  csrf_hash       bytea NOT NULL,
  admin_token_id  integer NOT NULL REFERENCES admin_tokens(id) ON DELETE CASCADE,
  created_at      timestamptz NOT NULL DEFAULT now(),
  expires_at      timestamptz NOT NULL,
  revoked_at      timestamptz
);
CREATE INDEX admin_sessions_expiry ON admin_sessions(expires_at);
