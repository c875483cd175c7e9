/**
 * Admin token scopes. `admin` grants every scope; `player-data` (export and erase one player's
 * data) comes with no other scope, `tracking:*` included.
 */
export const SCOPES = [
  'admin',
  'catalog:read',
  'catalog:write',
  'publish',
  'compliance:write',
  'compliance:override',
  'tokens:write',
  'users:read',
  'users:write',
  'tracking:read',
  'tracking:write',
  'adserver:read',
  'adserver:write',
  'market:read',
  'market:write',
  'creatives:moderate',
  'webhooks:read',
  'webhooks:write',
  'player-data',
] as const;

export type Scope = (typeof SCOPES)[number];

/** What each scope allows, as the console's role and token forms explain it (docs/admin-api.md says the same). */
export const SCOPE_DESCRIPTIONS: Readonly<Record<Scope, string>> = {
  admin: 'Every scope, and managing admin tokens',
  'catalog:read': 'Read sites, brands, offers, templates and toplists',
  'catalog:write': 'Create and change sites, brands, offers, templates, toplists and their items',
  publish: 'Publish and unpublish toplists',
  'compliance:write': "Change brands' licences and the licence-required rules",
  'compliance:override': 'Publish a toplist over compliance violations, giving a reason',
  'tokens:write': "List, create and revoke a site's read tokens",
  'users:read': 'List users, roles and invitations',
  'users:write': 'Invite, change, suspend and reactivate users; create, change and delete custom roles',
  'tracking:read': 'Read programmes, tracking links, conversions, postbacks and stats',
  'tracking:write': 'Create and change programmes, tracking links and the other tracking data',
  'adserver:read': 'Read ad-server connections, inventory, placements and bookings',
  'adserver:write': 'Connect ad servers, change placements, book and push campaigns',
  'market:read': 'Read the marketplace: advertisers, products, availability, reservations, statements',
  'market:write': 'Change the marketplace: products and prices, reservations and their approval, creatives',
  'creatives:moderate': 'Approve and reject uploaded creatives',
  'webhooks:read': 'Read webhooks and their deliveries',
  'webhooks:write': 'Create, change and delete webhooks, and act on their deliveries',
  'player-data': "Export and erase one player's data (no other scope includes it)",
};

/** Whether a token holding `held` may act with `needed`. */
export function hasScope(held: readonly string[], needed: Scope): boolean {
  return held.includes('admin') || held.includes(needed);
}

/** The scopes of a personal token that its owner's role allows now (a role change narrows them at once). */
export function withinRole(tokenScopes: readonly string[], roleScopes: readonly string[]): string[] {
  return tokenScopes.filter((s) => roleScopes.includes('admin') || roleScopes.includes(s));
}
