/** Token records as the admin API returns them (camelCase, ISO timestamps); never the secret. */

export interface SiteToken {
  id: number;
  siteId: number;
  name: string;
  /** First characters of the token, for recognising it in lists; never the secret. */
  hint: string;
  createdAt: string;
  revokedAt: string | null;
}

export interface AdminToken {
  id: number;
  name: string;
  scopes: string[];
  hint: string;
  createdBy: number | null;
  /** The user whose personal token this is; null for a named service token. */
  userId: number | null;
  createdAt: string;
  revokedAt: string | null;
}
