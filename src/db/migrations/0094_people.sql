-- People and roles (issue 54). A role is a named set of admin scopes; built-in roles are rows
-- marked built_in that the API never changes. A user has one role; `site_ids` (NULL: every
-- site) is the slot of a per-site restriction, not enforced yet.
CREATE TABLE roles (
  id          serial PRIMARY KEY,
  name        text NOT NULL,
  description text NOT NULL DEFAULT '',
  scopes      text[] NOT NULL,
  built_in    boolean NOT NULL DEFAULT false,
  created_at  timestamptz NOT NULL DEFAULT now(),
  updated_at  timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX roles_name ON roles (lower(name));

INSERT INTO roles (name, description, scopes, built_in) VALUES
  ('owner', 'Everything, including managing owners', '{admin}', true),
  ('admin', 'Everything except changing owners', '{admin}', true),
  ('editor', 'Edits the catalog and toplists, cannot publish', '{catalog:read,catalog:write}', true),
  ('publisher', 'Edits and publishes toplists', '{catalog:read,catalog:write,publish,compliance:write}', true),
  ('affiliate-manager', 'Tracking programmes, links and stats', '{catalog:read,tracking:read,tracking:write,webhooks:read}', true),
  ('ad-ops', 'Ad-server connections, inventory and bookings', '{catalog:read,adserver:read,adserver:write}', true),
  ('viewer', 'Reads the catalog, stats and ad-server data', '{catalog:read,tracking:read,adserver:read,webhooks:read}', true);

CREATE TABLE users (
  id               serial PRIMARY KEY,
  email            text NOT NULL,
  display_name     text NOT NULL DEFAULT '',
  status           text NOT NULL DEFAULT 'invited' CHECK (status IN ('invited', 'active', 'suspended')),
  role_id          integer NOT NULL REFERENCES roles (id),
  site_ids         integer[],
  -- scrypt$<N>$<r>$<p>$<salt b64>$<key b64>: the parameters travel with the hash so they can be raised.
  password_hash    text,
  last_sign_in_at  timestamptz,
  created_at       timestamptz NOT NULL DEFAULT now(),
  updated_at       timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX users_email ON users (lower(email));
CREATE INDEX users_role ON users (role_id);

-- One-time links: an invitation (sets the password, activates) or the first-run owner set-up.
-- Only the secret's SHA-256 is stored.
CREATE TABLE user_links (
  id           serial PRIMARY KEY,
  user_id      integer NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  purpose      text NOT NULL CHECK (purpose IN ('invite', 'setup')),
  secret_hash  bytea NOT NULL UNIQUE,
  expires_at   timestamptz NOT NULL,
  used_at      timestamptz,
  created_at   timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX user_links_user ON user_links (user_id);

-- A session acts for an admin token (token sign-in) or for a user (password sign-in).
ALTER TABLE admin_sessions ALTER COLUMN admin_token_id DROP NOT NULL;
ALTER TABLE admin_sessions ADD COLUMN user_id integer REFERENCES users (id) ON DELETE CASCADE;
ALTER TABLE admin_sessions ADD COLUMN address text;
ALTER TABLE admin_sessions ADD COLUMN user_agent text;
ALTER TABLE admin_sessions ADD CONSTRAINT admin_sessions_one_owner
  CHECK ((admin_token_id IS NULL) <> (user_id IS NULL));
CREATE INDEX admin_sessions_user ON admin_sessions (user_id) WHERE user_id IS NOT NULL;

-- A token with a user is that user's personal token; without one it is a named service token
-- (every token from before this migration).
ALTER TABLE admin_tokens ADD COLUMN user_id integer REFERENCES users (id);
CREATE INDEX admin_tokens_user ON admin_tokens (user_id) WHERE user_id IS NOT NULL;

ALTER TABLE audit_log ADD COLUMN user_id integer REFERENCES users (id);
ALTER TABLE audit_log ADD COLUMN address text;
ALTER TABLE audit_log ADD COLUMN user_agent text;
CREATE INDEX audit_log_user ON audit_log (user_id, id DESC) WHERE user_id IS NOT NULL;
