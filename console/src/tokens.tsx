import { useState } from 'react';
import { api } from './api.ts';
import { useAction } from './form.tsx';
import { ACTIONS, Table } from './table.tsx';
import { OutcomeLine, SecretOnce, Status, useLoad } from './ui.tsx';

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

/** A token as its create call answers: the secret itself, shown this once. */
export interface NewToken {
  token: string;
  name: string;
}

/**
 * The tokens under `path` (a site's, the admin ones): the list, the one just created (shown once)
 * and the outcome of the last action on them. `path` lists them, `path/<id>` revokes one.
 */
export function useTokens<T extends TokenRow>(path: string) {
  const tokens = useLoad(() => api<{ data: T[] }>('GET', path), path);
  const [created, setCreated] = useState<NewToken | null>(null);
  const action = useAction();
  /** Shows a token just created (this once) and lists it. */
  const show = (t: NewToken) => {
    setCreated(t);
    tokens.reload();
  };
  /** Revokes a token once `question` is confirmed; `done` is the line shown then. */
  const revoke = (t: T, question: string, done: string) => {
    if (!window.confirm(question)) return;
    void action.run(async () => {
      await api('DELETE', `${path}/${t.id}`);
      tokens.reload();
      return done;
    });
  };
  return { tokens, created, hide: () => setCreated(null), show, action, revoke };
}

/** What {@link useTokens} holds, shown: the new token with its copy button, the outcome line, the list. */
export function TokenList<T extends TokenRow>({
  state,
  noun,
  testId,
  empty,
  scopes,
  onRevoke,
}: {
  state: ReturnType<typeof useTokens<T>>;
  /** What one is called ("Admin token"), to introduce the new one. */
  noun: string;
  /** The test id of the new token's text. */
  testId: string;
  empty: string;
  scopes?: boolean;
  onRevoke: (t: T) => void;
}) {
  const { tokens, created, hide, action } = state;
  return (
    <>
      {created && (
        <SecretOnce secret={created.token} testId={testId} copyLabel="Copy token" onDone={hide}>
          {noun} <strong>{created.name || '(unnamed)'}</strong> — copy it now, it is shown only once:
        </SecretOnce>
      )}
      <OutcomeLine outcome={action.outcome} />
      <Status load={tokens} empty={tokens.data?.data.length === 0 && empty}>
        <TokenTable tokens={tokens.data?.data ?? []} onRevoke={onRevoke} scopes={scopes} />
      </Status>
    </>
  );
}
