import { type FormEvent, useEffect, useState } from 'react';
import type { PendingSignIn, TwoFactorState } from '../../src/modules/people/types.ts';
import { ApiError, api } from './api.ts';
import { InputField, Status, useLoad } from './ui.tsx';

/** What enrolment shows once (the server's `Enrolment`). */
interface Enrolment {
  otpauthUri: string;
  qrCodeDataUrl: string;
  secret: string;
}

const message = (err: unknown) => (err instanceof Error ? err.message : String(err));

/** The QR code to scan, the secret to type by hand, and the otpauth link for apps on this device. */
function ScanThis({ enrolment }: { enrolment: Enrolment }) {
  return (
    <div className="card">
      <p>Scan this with your authenticator app, or enter the key by hand.</p>
      <img src={enrolment.qrCodeDataUrl} alt="QR code for your authenticator app" width={200} height={200} />
      <p>
        Key: <code data-testid="totp-secret">{enrolment.secret}</code>
      </p>
      <p className="small">
        <a href={enrolment.otpauthUri}>Open in an authenticator app on this device</a>
      </p>
    </div>
  );
}

/** The ten recovery codes, shown once: each one signs in once when the phone is lost. */
export function RecoveryCodes({ codes, onDone }: { codes: string[]; onDone: () => void }) {
  return (
    <div className="notice" role="status">
      <p>
        Two-factor is on. Keep these recovery codes somewhere safe: each signs you in once without your phone.
        They are shown only now.
      </p>
      <ul data-testid="recovery-codes">
        {codes.map((c) => (
          <li key={c}>
            <code>{c}</code>
          </li>
        ))}
      </ul>
      <button type="button" onClick={onDone}>
        I saved them
      </button>
    </div>
  );
}

/**
 * The second step of sign-in: a code from the app (or a recovery code), or, when the owner
 * requires two-factor and the account has none, enrolment first. `onDone` gets the session.
 */
export function SecondStep<S>({
  pending,
  onDone,
  onRestart,
}: {
  pending: PendingSignIn;
  onDone: (session: S) => void;
  onRestart: () => void;
}) {
  const [code, setCode] = useState('');
  const [error, setError] = useState('');
  const [enrolment, setEnrolment] = useState<Enrolment | null>(null);
  const [codes, setCodes] = useState<{ codes: string[]; session: S } | null>(null);
  useEffect(() => {
    if (pending.step !== 'enrol') return;
    api<{ data: Enrolment }>('POST', '/session/two-factor/enrol', {
      pendingToken: pending.pendingToken,
    }).then(
      (r) => setEnrolment(r.data),
      (err) => setError(message(err)),
    );
  }, [pending]);
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setError('');
    try {
      const r = await api<{ data: S & { recoveryCodes?: string[] } }>('POST', '/session/two-factor', {
        pendingToken: pending.pendingToken,
        code: code.trim(),
      });
      setCode('');
      if (r.data.recoveryCodes) setCodes({ codes: r.data.recoveryCodes, session: r.data });
      else onDone(r.data);
    } catch (err) {
      setError(err instanceof ApiError && err.status === 401 ? `${err.message}.` : message(err));
    }
  };
  if (codes)
    return (
      <main className="signin">
        <h1>Save your recovery codes</h1>
        <RecoveryCodes codes={codes.codes} onDone={() => onDone(codes.session)} />
      </main>
    );
  const enrolling = pending.step === 'enrol';
  return (
    <main className="signin">
      <h1>{enrolling ? 'Set up two-factor sign-in' : 'Two-factor sign-in'}</h1>
      {enrolling && <p>Two-factor sign-in is required for everyone here: set it up to continue.</p>}
      {enrolling && enrolment && <ScanThis enrolment={enrolment} />}
      <form onSubmit={submit}>
        <InputField
          id="totp-code"
          label={enrolling ? 'Code from your app' : 'Authentication code (or a recovery code)'}
          autoComplete="one-time-code"
          inputMode={enrolling ? 'numeric' : undefined}
          value={code}
          onChange={setCode}
          aria-invalid={Boolean(error)}
          required
        />
        {error && (
          <p className="error" role="alert">
            {error}
          </p>
        )}
        <button type="submit" disabled={!code.trim() || (enrolling && !enrolment)}>
          {enrolling ? 'Turn on two-factor' : 'Verify'}
        </button>
      </form>
      <button type="button" className="link" onClick={onRestart}>
        Start over
      </button>
    </main>
  );
}

/** Profile: turn two-factor on (scan, confirm with a code, save the codes) or off (a code or the password). */
export function TwoFactorCard() {
  const state = useLoad(() => api<{ data: TwoFactorState }>('GET', '/me/two-factor'), 'two-factor');
  const [enrolment, setEnrolment] = useState<Enrolment | null>(null);
  const [codes, setCodes] = useState<string[] | null>(null);
  const [code, setCode] = useState('');
  const [password, setPassword] = useState('');
  const [outcome, setOutcome] = useState('');
  const run = async (what: () => Promise<void>) => {
    setOutcome('');
    try {
      await what();
    } catch (err) {
      setOutcome(message(err));
    }
  };
  const start = () =>
    run(async () => {
      setEnrolment((await api<{ data: Enrolment }>('POST', '/me/two-factor')).data);
    });
  const confirm = (e: FormEvent) => {
    e.preventDefault();
    return run(async () => {
      const r = await api<{ data: { recoveryCodes: string[] } }>('POST', '/me/two-factor/confirm', {
        code: code.trim(),
      });
      setCode('');
      setEnrolment(null);
      setCodes(r.data.recoveryCodes);
      state.reload();
    });
  };
  const disable = (e: FormEvent) => {
    e.preventDefault();
    return run(async () => {
      await api('POST', '/me/two-factor/disable', code.trim() ? { code: code.trim() } : { password });
      setCode('');
      setPassword('');
      setOutcome('Two-factor is off.');
      state.reload();
    });
  };
  const s = state.data?.data;
  return (
    <section className="card" aria-label="Two-factor sign-in">
      <h2>Two-factor sign-in</h2>
      {codes && <RecoveryCodes codes={codes} onDone={() => setCodes(null)} />}
      <Status load={state}>
        {s?.enabled ? (
          <>
            <p>
              Two-factor is on · {s.recoveryCodesLeft} recovery codes left
              {s.required ? ' · required for everyone by the owner' : ''}
            </p>
            {!s.required && (
              <form onSubmit={disable} aria-label="Turn off two-factor">
                <InputField id="off-code" label="Current code" value={code} onChange={setCode} />
                <InputField
                  id="off-password"
                  label="or your password"
                  type="password"
                  autoComplete="current-password"
                  value={password}
                  onChange={setPassword}
                />
                <button type="submit" disabled={!code.trim() && !password}>
                  Turn off two-factor
                </button>
              </form>
            )}
          </>
        ) : enrolment ? (
          <form onSubmit={confirm} aria-label="Confirm two-factor">
            <ScanThis enrolment={enrolment} />
            <InputField
              id="enrol-code"
              label="Code from your app"
              autoComplete="one-time-code"
              inputMode="numeric"
              value={code}
              onChange={setCode}
              required
            />
            <button type="submit" disabled={!code.trim()}>
              Turn on two-factor
            </button>
          </form>
        ) : (
          <>
            <p>Two-factor is off: sign-in asks for your password only.</p>
            <button type="button" onClick={start}>
              Set up two-factor
            </button>
          </>
        )}
      </Status>
      {outcome && <p role="status">{outcome}</p>}
    </section>
  );
}

/** Users screen (owner): the switch requiring two-factor for everyone. */
export function RequireTwoFactor() {
  const settings = useLoad(
    () => api<{ data: { requireTwoFactor: boolean } }>('GET', '/settings/people'),
    'people-settings',
  );
  const [outcome, setOutcome] = useState('');
  const on = settings.data?.data.requireTwoFactor ?? false;
  const flip = async () => {
    setOutcome('');
    try {
      const r = await api<{ data: { requireTwoFactor: boolean; sessionsEnded: number } }>(
        'PUT',
        '/settings/people',
        { requireTwoFactor: !on },
      );
      setOutcome(
        r.data.requireTwoFactor
          ? `Two-factor is required for everyone; ${r.data.sessionsEnded} sessions without it were signed out.`
          : 'Two-factor is no longer required.',
      );
      settings.reload();
    } catch (err) {
      setOutcome(message(err));
    }
  };
  return (
    <div className="field">
      <label>
        <input type="checkbox" checked={on} onChange={flip} disabled={!settings.data} /> Require two-factor
        for everyone
      </label>
      {outcome && <p role="status">{outcome}</p>}
    </div>
  );
}
