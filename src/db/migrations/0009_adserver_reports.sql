-- Ad-server integration: delivery pulled with POST /reports (daily, per line item), rows the
-- marketplace does not recognise kept aside, and one record per pull.

CREATE TABLE adserver_delivery (
  connection_id  text NOT NULL REFERENCES adserver_connections(id) ON DELETE CASCADE,
  line_item_id   text NOT NULL,
  day            date NOT NULL,
  impressions    bigint NOT NULL CHECK (impressions >= 0),
  clicks         bigint NOT NULL CHECK (clicks >= 0),
  pulled_at      timestamptz NOT NULL,
  PRIMARY KEY (connection_id, line_item_id, day)
);

-- Rows whose line_item_id matches no pushed line: unmatched delivery, never attributed.
CREATE TABLE adserver_unmatched_delivery (
  connection_id  text NOT NULL REFERENCES adserver_connections(id) ON DELETE CASCADE,
  line_item_id   text NOT NULL,
  day            date NOT NULL,
  impressions    bigint NOT NULL,
  clicks         bigint NOT NULL,
  pulled_at      timestamptz NOT NULL,
  PRIMARY KEY (connection_id, line_item_id, day)
);

CREATE TABLE adserver_report_pulls (
  id             bigserial PRIMARY KEY,
  connection_id  text NOT NULL REFERENCES adserver_connections(id) ON DELETE CASCADE,
  started_at     timestamptz NOT NULL,
  finished_at    timestamptz NOT NULL DEFAULT now(),
  -- ok, or why the pull stopped: unreachable, auth_error, forbidden, invalid_response, not_found
  state          text NOT NULL,
  date_from      date,
  date_to        date,
  calls          integer NOT NULL,
  matched        integer NOT NULL,
  unmatched      integer NOT NULL,
  error          text
);
CREATE INDEX adserver_report_pulls_connection ON adserver_report_pulls(connection_id, id DESC);
