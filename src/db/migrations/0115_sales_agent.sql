-- The sales agent (AdCP over MCP): advertisers' machine tokens, and the media buys agents made.

-- An advertiser's token for machine access (the sales agent). Stored only as its SHA-256.
CREATE TABLE market_advertiser_tokens (
  id             bigserial PRIMARY KEY,
  advertiser_id  text NOT NULL REFERENCES market_advertisers(id),
  name           text NOT NULL,
  token_hash     bytea NOT NULL UNIQUE,
  hint           text NOT NULL,
  created_at     timestamptz NOT NULL DEFAULT now(),
  last_used_at   timestamptz,
  revoked_at     timestamptz
);
CREATE INDEX market_advertiser_tokens_advertiser ON market_advertiser_tokens (advertiser_id);

-- A media buy is a reservation made through the agent: the buyer's references are kept so a
-- repeated create_media_buy answers the same buy, and packages map to the reservation's lines.
CREATE TABLE market_media_buys (
  reservation_id  text PRIMARY KEY REFERENCES market_reservations(id),
  advertiser_id   text NOT NULL REFERENCES market_advertisers(id),
  buyer_ref       text NOT NULL,
  packages        jsonb NOT NULL,
  created_at      timestamptz NOT NULL DEFAULT now(),
  UNIQUE (advertiser_id, buyer_ref)
);
