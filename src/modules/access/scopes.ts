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

/** Whether a token holding `held` may act with `needed`. */
export function hasScope(held: readonly string[], needed: Scope): boolean {
  return held.includes('admin') || held.includes(needed);
}

/** The scopes of a personal token that its owner's role allows now (a role change narrows them at once). */
export function withinRole(tokenScopes: readonly string[], roleScopes: readonly string[]): string[] {
  return tokenScopes.filter((s) => roleScopes.includes('admin') || roleScopes.includes(s));
}
