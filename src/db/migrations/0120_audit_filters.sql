-- The audit log's filters by action and by date range, each read newest first.
CREATE INDEX audit_log_action ON audit_log (action, id DESC);
CREATE INDEX audit_log_at ON audit_log (at);
