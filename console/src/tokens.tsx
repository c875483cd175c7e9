import { ACTIONS, Table } from './table.tsx';

/** A token as lists show it: never the secret, only its hint. */
export interface TokenRow {
  id: number;
  name: string;
  hint: string;
  createdAt: string;
  revokedAt: string | null;
  scopes?: string[];
}

/** Tokens (site or admin): name, hint, scopes when they have some, created, and Revoke or "revoked". */
export function TokenTable<T extends TokenRow>({
  tokens,
  onRevoke,
  scopes = false,
}: {
  tokens: T[];
  onRevoke: (t: T) => void;
  scopes?: boolean;
}) {
  return (
    <Table
      rows={tokens}
      columns={[
        { head: 'Name', cell: (t) => t.name || <span className="muted">(unnamed)</span> },
        { head: 'Token', cell: (t) => <code>{t.hint}</code> },
        scopes && { head: 'Scopes', cell: (t) => t.scopes?.join(', ') },
        { head: 'Created', cell: (t) => new Date(t.createdAt).toLocaleString() },
        {
          head: scopes ? ACTIONS : 'Status',
          cell: (t) =>
            t.revokedAt ? (
              <span className="badge off">revoked</span>
            ) : (
              <button type="button" onClick={() => onRevoke(t)} aria-label={`Revoke ${t.name || t.hint}`}>
                Revoke
              </button>
            ),
        },
      ]}
    />
  );
}
