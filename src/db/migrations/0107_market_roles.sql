-- The marketplace's scopes (0100) and the built-in roles (0094) arrived together: ad-ops runs the
-- marketplace (products, availability, reservations, approval, statements) and a viewer reads it.
UPDATE roles SET scopes = scopes || '{market:read,market:write}', updated_at = now()
WHERE built_in AND name = 'ad-ops' AND NOT scopes @> '{market:read}';
UPDATE roles SET scopes = scopes || '{market:read}', updated_at = now()
WHERE built_in AND name = 'viewer' AND NOT scopes @> '{market:read}';
