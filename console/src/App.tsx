import { type ComponentType, type FormEvent, lazy, Suspense, useEffect, useRef, useState } from 'react';
import { AdminTokensScreen } from './AdminTokens.tsx';
import { AdServersScreen } from './AdServers.tsx';
import { AuditScreen } from './Audit.tsx';
import { ApiError, api, SIGNED_OUT_EVENT } from './api.ts';
import { BookingsScreen } from './Bookings.tsx';
import { BrandsScreen } from './Brands.tsx';
import { ConversionsScreen, PostbacksScreen } from './Conversions.tsx';
import { ProgramsScreen } from './Programs.tsx';
import { SitesScreen } from './Sites.tsx';
import { TemplatesScreen } from './Templates.tsx';
import { ToplistsScreen } from './Toplists.tsx';
import { InputField } from './ui.tsx';
import { WebhooksScreen } from './Webhooks.tsx';

interface Session {
  adminTokenId: number;
  scopes: string[];
  expiresAt: string;
}

// The chart library is only fetched when the Tracking screen is opened.
const TrackingScreen = lazy(() => import('./Tracking.tsx').then((m) => ({ default: m.TrackingScreen })));

/**
 * The screens by the hash that opens them; the labelled ones, in this order, are the navigation.
 * A hash opens the first screen it starts with (so a sub-screen comes before its parent), else
 * the first screen.
 */
const SCREENS: readonly { hash: string; label?: string; Screen: ComponentType }[] = [
  { hash: '#/toplists', label: 'Toplists', Screen: ToplistsScreen },
  { hash: '#/brands', label: 'Brands and offers', Screen: BrandsScreen },
  { hash: '#/sites', label: 'Sites and tokens', Screen: SitesScreen },
  { hash: '#/templates', label: 'Templates', Screen: TemplatesScreen },
  { hash: '#/tracking', label: 'Tracking', Screen: TrackingScreen },
  { hash: '#/programmes', label: 'Programmes', Screen: ProgramsScreen },
  { hash: '#/conversions', label: 'Conversions', Screen: ConversionsScreen },
  { hash: '#/postbacks', label: 'Postback log', Screen: PostbacksScreen },
  { hash: '#/adservers/bookings', Screen: BookingsScreen },
  { hash: '#/adservers', label: 'Ad servers', Screen: AdServersScreen },
  { hash: '#/webhooks', label: 'Webhooks', Screen: WebhooksScreen },
  { hash: '#/admin-tokens', label: 'Admin tokens', Screen: AdminTokensScreen },
  { hash: '#/audit', label: 'Audit log', Screen: AuditScreen },
];
const HOME = SCREENS[0]!;

const LOADING = <p className="muted">Loading…</p>;

function useHash(): string {
  const [hash, setHash] = useState(window.location.hash || HOME.hash);
  useEffect(() => {
    const on = () => setHash(window.location.hash || HOME.hash);
    window.addEventListener('hashchange', on);
    return () => window.removeEventListener('hashchange', on);
  }, []);
  return hash;
}

/** The console shell: sign-in until there is a session, then navigation and the current screen. */
export function App() {
  const [session, setSession] = useState<Session | null | undefined>(undefined);
  const [notice, setNotice] = useState('');
  const signedIn = useRef(false);
  signedIn.current = Boolean(session);
  const hash = useHash();
  const { Screen } = SCREENS.find((s) => hash.startsWith(s.hash)) ?? HOME;
  useEffect(() => {
    api<{ data: Session }>('GET', '/session').then(
      (r) => setSession(r.data),
      () => setSession(null),
    );
    // Any 401 of the API while signed in: the session expired or was ended elsewhere.
    const out = () => {
      if (signedIn.current) setNotice(EXPIRED);
      setSession(null);
    };
    window.addEventListener(SIGNED_OUT_EVENT, out);
    return () => window.removeEventListener(SIGNED_OUT_EVENT, out);
  }, []);
  // The session ends at a fixed time: return to sign-in then, rather than on the next failed call.
  useEffect(() => {
    if (!session) return;
    const left = Date.parse(session.expiresAt) - Date.now();
    if (left > 2 ** 31 - 1) return;
    const timer = setTimeout(() => window.dispatchEvent(new Event(SIGNED_OUT_EVENT)), Math.max(left, 0));
    return () => clearTimeout(timer);
  }, [session]);

  if (session === undefined) return LOADING;
  if (session === null)
    return (
      <SignIn
        notice={notice}
        onSignedIn={(s) => {
          setNotice('');
          setSession(s);
        }}
      />
    );
  const signOut = async () => {
    await api('DELETE', '/session').catch(() => undefined);
    setSession(null);
  };
  return (
    <div className="shell">
      <header>
        <strong>Podium console</strong>
        <nav aria-label="Screens">
          {SCREENS.filter((s) => s.label).map((s) => (
            <a key={s.hash} href={s.hash} aria-current={hash.startsWith(s.hash) ? 'page' : undefined}>
              {s.label}
            </a>
          ))}
        </nav>
        <span className="muted small">
          admin token #{session.adminTokenId} · until {new Date(session.expiresAt).toLocaleTimeString()}
        </span>
        <button type="button" onClick={signOut}>
          Sign out
        </button>
      </header>
      <main>
        {/* The lazy screens load behind this fallback. */}
        <Suspense fallback={LOADING}>
          <Screen />
        </Suspense>
      </main>
    </div>
  );
}

const EXPIRED = 'Your session has ended (it expired or was signed out elsewhere). Sign in again to continue.';

function SignIn({ notice, onSignedIn }: { notice: string; onSignedIn: (s: Session) => void }) {
  const [token, setToken] = useState('');
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setBusy(true);
    setError('');
    try {
      const r = await api<{ data: Session }>('POST', '/session', { token: token.trim() });
      setToken('');
      onSignedIn(r.data);
    } catch (err) {
      setError(
        err instanceof ApiError && err.status === 401 ? 'That admin token is not valid.' : String(err),
      );
    } finally {
      setBusy(false);
    }
  };
  return (
    <main className="signin">
      <h1>Sign in to Podium</h1>
      {notice && (
        <p className="notice" role="status">
          {notice}
        </p>
      )}
      <form onSubmit={submit}>
        <InputField
          id="admin-token"
          label="Admin token"
          type="password"
          autoComplete="off"
          value={token}
          onChange={setToken}
          aria-invalid={Boolean(error)}
          aria-describedby={error ? 'signin-error' : undefined}
          required
        />
        {error && (
          <p id="signin-error" className="error" role="alert">
            {error}
          </p>
        )}
        <button type="submit" disabled={busy || !token.trim()}>
          {busy ? 'Signing in…' : 'Sign in'}
        </button>
      </form>
    </main>
  );
}
