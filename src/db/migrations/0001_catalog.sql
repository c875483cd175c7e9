-- Catalog: sites and their tokens, admin tokens, the editorial catalog, toplists and editions.

CREATE TABLE owners (
  id          serial PRIMARY KEY,
  external_id text UNIQUE,
  name        text NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now(),
  updated_at  timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE sites (
  id          serial PRIMARY KEY,
  domain      text NOT NULL UNIQUE,
  name        text NOT NULL DEFAULT '',
  created_at  timestamptz NOT NULL DEFAULT now(),
  updated_at  timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE site_tokens (
  id          serial PRIMARY KEY,
  site_id     integer NOT NULL REFERENCES sites(id) ON DELETE CASCADE,
  name        text NOT NULL DEFAULT '',
  token_hash  bytea NOT NULL UNIQUE,
  hint        text NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now(),
  revoked_at  timestamptz
);
CREATE INDEX site_tokens_site ON site_tokens(site_id);

CREATE TABLE admin_tokens (
  id          serial PRIMARY KEY,
  name        text NOT NULL DEFAULT '',
  scopes      text[] NOT NULL,
  token_hash  bytea NOT NULL UNIQUE,
  hint        text NOT NULL,
  created_by  integer REFERENCES admin_tokens(id),
  created_at  timestamptz NOT NULL DEFAULT now(),
  revoked_at  timestamptz
);

CREATE TABLE product_types (
  id    serial PRIMARY KEY,
  name  text NOT NULL UNIQUE
);

CREATE TABLE classification_types (
  id    serial PRIMARY KEY,
  name  text NOT NULL UNIQUE
);

CREATE TABLE list_templates (
  id                      serial PRIMARY KEY,
  external_id             text UNIQUE,
  name                    text NOT NULL,
  product_type_id         integer NOT NULL REFERENCES product_types(id),
  classification_type_id  integer NOT NULL REFERENCES classification_types(id),
  created_at              timestamptz NOT NULL DEFAULT now(),
  updated_at              timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE brands (
  id                    serial PRIMARY KEY,
  external_id           text NOT NULL UNIQUE,
  name                  text NOT NULL,
  slug                  text NOT NULL UNIQUE,
  rating                numeric(4,2) NOT NULL DEFAULT 0,
  logo_rectangular      text NOT NULL,
  logo_square           text NOT NULL,
  logo_background_color text NOT NULL,
  licenses              text[] NOT NULL DEFAULT '{}',
  payment_methods       text[] NOT NULL DEFAULT '{}',
  restricted_countries  text[] NOT NULL DEFAULT '{}',
  classification_types  text[] NOT NULL DEFAULT '{}',
  languages_website     text[] NOT NULL DEFAULT '{}',
  languages_support     text[] NOT NULL DEFAULT '{}',
  languages_livechat    text[] NOT NULL DEFAULT '{}',
  created_at            timestamptz NOT NULL DEFAULT now(),
  updated_at            timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE offer_types (
  id    serial PRIMARY KEY,
  name  text NOT NULL UNIQUE
);

CREATE TABLE offers (
  id                          serial PRIMARY KEY,
  external_id                 text NOT NULL UNIQUE,
  brand_id                    integer NOT NULL REFERENCES brands(id),
  offer_type_id               integer NOT NULL REFERENCES offer_types(id),
  offer_text                  text NOT NULL,
  currencies                  text[] NOT NULL DEFAULT '{}',
  has_free_spins              boolean NOT NULL DEFAULT false,
  bonus_wagering_requirement  integer NOT NULL DEFAULT 0,
  bonus_expiry_date           date NOT NULL,
  bonus_code                  text NOT NULL DEFAULT '',
  minimum_deposit             integer,
  free_tickets                integer,
  max_bonus_amount            numeric(14,2),
  max_payout                  numeric(14,2),
  minimum_odds                numeric(14,2),
  free_bet_value              numeric(14,2),
  tournament_ticket_value     numeric(14,2),
  rakeback_percentage         numeric(14,2),
  is_sticky_bonus             boolean NOT NULL DEFAULT false,
  stake_returned              boolean,
  bet_type                    text,
  geo_countries               text[] NOT NULL DEFAULT '{}',
  geo_markets                 text[] NOT NULL DEFAULT '{}',
  created_at                  timestamptz NOT NULL DEFAULT now(),
  updated_at                  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX offers_brand ON offers(brand_id);

CREATE TABLE trackers (
  id             serial PRIMARY KEY,
  offer_id       integer NOT NULL REFERENCES offers(id) ON DELETE CASCADE,
  external_id    text UNIQUE,
  campaign_name  text NOT NULL,
  -- The operator's landing URL a click is redirected to (the tracking module fills its macros).
  landing_url    text NOT NULL,
  tc_link        text NOT NULL DEFAULT '',
  page_type      text NOT NULL DEFAULT 'DEFAULT',
  geo_countries  text[] NOT NULL DEFAULT '{}',
  geo_markets    text[] NOT NULL DEFAULT '{}',
  created_at     timestamptz NOT NULL DEFAULT now(),
  updated_at     timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX trackers_offer ON trackers(offer_id);

CREATE TABLE toplists (
  id                 serial PRIMARY KEY,
  external_id        text UNIQUE,
  site_id            integer NOT NULL REFERENCES sites(id),
  template_id        integer NOT NULL REFERENCES list_templates(id),
  owner_id           integer NOT NULL REFERENCES owners(id),
  name               text NOT NULL,
  slug               text NOT NULL,
  geo_type           text NOT NULL CHECK (geo_type IN ('country', 'market', 'global')),
  geo_code           text NOT NULL,
  geo_name           text NOT NULL,
  covered_countries  text[],
  current_period     text NOT NULL DEFAULT '',
  locked             boolean NOT NULL DEFAULT false,
  live_from          timestamptz,
  live_until         timestamptz,
  live_edition_id    integer,
  created_at         timestamptz NOT NULL DEFAULT now(),
  -- Draft changes bump draft_updated_at; updated_at moves only when an edition is published.
  draft_updated_at   timestamptz NOT NULL DEFAULT now(),
  updated_at         timestamptz NOT NULL DEFAULT now(),
  UNIQUE (site_id, slug),
  UNIQUE (site_id, template_id, geo_type, geo_code),
  CHECK (live_until IS NULL OR live_from IS NULL OR live_until > live_from)
);
CREATE INDEX toplists_site_live ON toplists(site_id) WHERE live_edition_id IS NOT NULL;

CREATE TABLE toplist_items (
  id           serial PRIMARY KEY,
  toplist_id   integer NOT NULL REFERENCES toplists(id) ON DELETE CASCADE,
  position     integer NOT NULL CHECK (position >= 1),
  brand_id     integer NOT NULL REFERENCES brands(id),
  offer_id     integer NOT NULL REFERENCES offers(id),
  deal_id      integer NOT NULL DEFAULT 0,
  is_locked    boolean NOT NULL DEFAULT false,
  UNIQUE (toplist_id, position) DEFERRABLE INITIALLY DEFERRED
);

CREATE TABLE editions (
  id            serial PRIMARY KEY,
  toplist_id    integer NOT NULL REFERENCES toplists(id) ON DELETE CASCADE,
  version       integer NOT NULL,
  -- The wire JSON of the toplist, rendered once at publish time; reads serve these bytes.
  document      text NOT NULL,
  published_at  timestamptz NOT NULL,
  published_by  integer REFERENCES admin_tokens(id),
  UNIQUE (toplist_id, version)
);

ALTER TABLE toplists
  ADD CONSTRAINT toplists_live_edition_fk FOREIGN KEY (live_edition_id) REFERENCES editions(id);

-- A tracking link is one tracker of one offer, optionally pinned to a site, toplist and position.
-- Its slug is the public /go/{slug} path segment.
CREATE TABLE tracking_links (
  id          serial PRIMARY KEY,
  slug        text NOT NULL UNIQUE,
  tracker_id  integer NOT NULL REFERENCES trackers(id) ON DELETE CASCADE,
  site_id     integer REFERENCES sites(id),
  toplist_id  integer REFERENCES toplists(id) ON DELETE CASCADE,
  position    integer,
  created_at  timestamptz NOT NULL DEFAULT now(),
  UNIQUE NULLS NOT DISTINCT (tracker_id, site_id, toplist_id, position)
);
