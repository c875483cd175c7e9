import { type ComponentType, type FormEvent, lazy, Suspense, useEffect, useRef, useState } from 'react';
import { SSO_REFUSALS, ssoRefusalOf } from '../../src/modules/people/sso-refusals.ts';
import type { PendingSignIn } from '../../src/modules/people/types.ts';
import { AdminTokensScreen } from './AdminTokens.tsx';
import { AdServersScreen } from './AdServers.tsx';
import { AuditScreen } from './Audit.tsx';
import { ApiError, api, SIGNED_OUT_EVENT } from './api.ts';
import { BookingsScreen } from './Bookings.tsx';
import { BrandsScreen } from './Brands.tsx';
import { ComplianceScreen } from './Compliance.tsx';
import { ConversionsScreen, PostbacksScreen } from './Conversions.tsx';
import { CreativesScreen } from './Creatives.tsx';
import { DashboardScreen } from './Dashboard.tsx';
import { CalendarScreen, PrintableStatementScreen, ProductsScreen, StatementsScreen } from './Market.tsx';
import { ForgotPassword, InvitationsScreen, OneTimeLinkPage, ProfileScreen, UsersScreen } from './People.tsx';
import { ProgramsScreen } from './Programs.tsx';
import { ReservationsScreen } from './Reservations.tsx';
import { RolesScreen } from './Roles.tsx';
import { SitesScreen } from './Sites.tsx';
import { TemplatesScreen } from './Templates.tsx';
import { ToplistsScreen } from './Toplists.tsx';
import { SecondStep } from './TwoFactor.tsx';
import { InputField } from './ui.tsx';
import { WebhooksScreen } from './Webhooks.tsx';

interface Session {
  adminTokenId: number | null;
  user: { id: number; email: string; displayName: string; role: string } | null;
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
  { hash: '#/home', label: 'Home', Screen: DashboardScreen },
  { hash: '#/toplists', label: 'Toplists', Screen: ToplistsScreen },
  { hash: '#/brands', label: 'Brands and offers', Screen: BrandsScreen },
  { hash: '#/compliance', label: 'Compliance', Screen: ComplianceScreen },
  { hash: '#/sites', label: 'Sites and tokens', Screen: SitesScreen },
  { hash: '#/templates', label: 'Templates', Screen: TemplatesScreen },
  { hash: '#/tracking', label: 'Tracking', Screen: TrackingScreen },
  { hash: '#/programmes', label: 'Programmes', Screen: ProgramsScreen },
  { hash: '#/conversions', label: 'Conversions', Screen: ConversionsScreen },
  { hash: '#/postbacks', label: 'Postback log', Screen: PostbacksScreen },
  { hash: '#/adservers/bookings', Screen: BookingsScreen },
  { hash: '#/adservers', label: 'Ad servers', Screen: AdServersScreen },
  { hash: '#/products', label: 'Products and prices', Screen: ProductsScreen },
  { hash: '#/calendar', label: 'Availability', Screen: CalendarScreen },
  { hash: '#/reservations', label: 'Reservations', Screen: ReservationsScreen },
  { hash: '#/creatives', label: 'Creatives', Screen: CreativesScreen },
  { hash: '#/statements/print/', Screen: PrintableStatementScreen },
  { hash: '#/statements', label: 'Statements', Screen: StatementsScreen },
  { hash: '#/webhooks', label: 'Webhooks', Screen: WebhooksScreen },
  { hash: '#/admin-tokens', label: 'Admin tokens', Screen: AdminTokensScreen },
  { hash: '#/users', label: 'Users', Screen: UsersScreen },
  { hash: '#/invitations', label: 'Invitations', Screen: InvitationsScreen },
  { hash: '#/roles', label: 'Roles', Screen: RolesScreen },
  { hash: '#/profile', label: 'Profile', Screen: ProfileScreen },
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

  // A one-time link opens its page whoever is signed in: its secret is in the fragment only.
  if (hash.startsWith(ACCEPT)) return <OneTimeLinkPage kind="accept" secret={hash.slice(ACCEPT.length)} />;
  if (hash.startsWith(RESET)) return <OneTimeLinkPage kind="reset" secret={hash.slice(RESET.length)} />;
  if (session === undefined) return LOADING;
  if (session === null)
    return (
      <SignIn
        notice={notice}
        onSignedIn={(s) => {
          setNotice('');
          if (hash.startsWith(SIGN_IN)) window.location.hash = HOME.hash;
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
          {session.user ? session.user.email : `admin token #${session.adminTokenId}`} · until{' '}
          {new Date(session.expiresAt).toLocaleTimeString()}
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

const ACCEPT = '#/accept/';
/** Where a refused single sign-on lands: `#/sign-in?sso_error=<reason>`. */
const SIGN_IN = '#/sign-in';

/** The sentence for the `sso_error` of the hash; the hash is anyone's to write, so only known reasons show as such. */
function ssoRefusalSentence(hash: string): string {
  if (!hash.startsWith(`${SIGN_IN}?`)) return '';
  const params = new URLSearchParams(hash.slice(SIGN_IN.length + 1));
  if (!params.has('sso_error')) return '';
  return SSO_REFUSALS[ssoRefusalOf(params.get('sso_error')) ?? 'refused'];
}
const RESET = '#/reset/';

const EXPIRED = 'Your session has ended (it expired or was signed out elsewhere). Sign in again to continue.';

/**
 * Where single sign-on brings the browser back: this screen of the console with its filters (the
 * server takes console paths of these characters only).
 */
const ssoReturnPath = () => `/console/${/^#\/[\w/.~%?=&-]{0,400}$/.test(location.hash) ? location.hash : ''}`;

function SignIn({ notice, onSignedIn }: { notice: string; onSignedIn: (s: Session) => void }) {
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [token, setToken] = useState('');
  const [withToken, setWithToken] = useState(false);
  const [forgot, setForgot] = useState(false);
  const [pending, setPending] = useState<PendingSignIn | null>(null);
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);
  const [ssoUrl, setSsoUrl] = useState<string | null>(null);
  const ssoError = ssoRefusalSentence(location.hash);
  useEffect(() => {
    api<{ data: { sso: { url: string } | null } }>('GET', '/session/methods').then(
      (r) => setSsoUrl(r.data.sso?.url ?? null),
      () => setSsoUrl(null),
    );
  }, []);
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setBusy(true);
    setError('');
    try {
      const body = withToken ? { token: token.trim() } : { email: email.trim(), password };
      const r = await api<{ data: Session | PendingSignIn }>('POST', '/session', body);
      setToken('');
      setPassword('');
      if ('pendingToken' in r.data) setPending(r.data);
      else onSignedIn(r.data);
    } catch (err) {
      setError(
        err instanceof ApiError && err.status === 401
          ? withToken
            ? 'That admin token is not valid.'
            : 'Wrong email or password.'
          : err instanceof ApiError
            ? err.message
            : String(err),
      );
    } finally {
      setBusy(false);
    }
  };
  const ready = withToken ? Boolean(token.trim()) : Boolean(email.trim() && password);
  if (forgot) return <ForgotPassword onBack={() => setForgot(false)} />;
  if (pending)
    return <SecondStep<Session> pending={pending} onDone={onSignedIn} onRestart={() => setPending(null)} />;
  const invalid = { 'aria-invalid': Boolean(error), 'aria-describedby': error ? 'signin-error' : undefined };
  return (
    <main className="signin">
      <h1>Sign in to Podium</h1>
      {notice && (
        <p className="notice" role="status">
          {notice}
        </p>
      )}
      {ssoError && (
        <p className="error" role="alert">
          {ssoError}
        </p>
      )}
      <form onSubmit={submit}>
        {withToken ? (
          <InputField
            id="admin-token"
            label="Admin token"
            type="password"
            autoComplete="off"
            value={token}
            onChange={setToken}
            {...invalid}
            required
          />
        ) : (
          <>
            <InputField
              id="signin-email"
              label="Email"
              type="email"
              autoComplete="username"
              value={email}
              onChange={setEmail}
              {...invalid}
              required
            />
            <InputField
              id="signin-password"
              label="Password"
              type="password"
              autoComplete="current-password"
              value={password}
              onChange={setPassword}
              {...invalid}
              required
            />
          </>
        )}
        {error && (
          <p id="signin-error" className="error" role="alert">
            {error}
          </p>
        )}
        <button type="submit" disabled={busy || !ready}>
          {busy ? 'Signing in…' : 'Sign in'}
        </button>
      </form>
      {ssoUrl && (
        <a className="button" href={`${ssoUrl}?return=${encodeURIComponent(ssoReturnPath())}`}>
          Sign in with SSO
        </a>
      )}
      <button
        type="button"
        className="link"
        onClick={() => {
          setWithToken(!withToken);
          setError('');
        }}
      >
        {withToken ? 'Use email and password instead' : 'Use an admin token instead'}
      </button>
      {!withToken && (
        <button type="button" className="link" onClick={() => setForgot(true)}>
          Forgot password?
        </button>
      )}
    </main>
  );
}
