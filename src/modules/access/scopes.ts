/** Admin token scopes. `admin` grants every scope. */
export const SCOPES = [
  'admin',
  'catalog:read',
  'catalog:write',
  'publish',
  'tokens:write',
  'tracking:read',
  'tracking:write',
  'adserver:read',
  'adserver:write',
  'webhooks:read',
  'webhooks:write',
] as const;

export type Scope = (typeof SCOPES)[number];

/** Whether a token holding `held` may act with `needed`. */
export function hasScope(held: readonly string[], needed: Scope): boolean {
  return held.includes('admin') || held.includes(needed);
}
