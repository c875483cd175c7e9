import { afterEach, describe, expect, it } from 'vitest';
import { clearSecrets, registerSecret, scrub, scrubValue } from './scrub.ts';

describe('scrub', () => {
  afterEach(() => clearSecrets());

  it('removes Podium tokens, bearer credentials and URL passwords', () => {
    const token = 'pds_QWHuGnaw1cUgbCvf3iJfygoPuhD8ZurvY4e2YLanUuQ';
    expect(scrub(`token ${token} refused`)).toBe('token pds_[redacted] refused');
    expect(scrub('Authorization: Bearer abcdefghijklmnop')).toBe('Authorization: Bearer [redacted]');
    expect(scrub('connect postgres://podium:s3cr3tpass@db:5432/podium failed')).toBe(
      'connect postgres://podium:[redacted]@db:5432/podium failed',
    );
  });

  it('removes registered values anywhere, also inside nested objects and errors', () => {
    registerSecret('sk_live_opaque_key_42');
    const err = new Error('upstream said: bad key sk_live_opaque_key_42');
    const out = JSON.stringify(scrubValue({ msg: 'x', nested: [{ err }], other: 'sk_live_opaque_key_42!' }));
    expect(out).not.toContain('sk_live_opaque_key_42');
    expect(out).toContain('[redacted]');
  });

  it('leaves ordinary text alone and ignores too-short secrets', () => {
    registerSecret('abc');
    expect(scrub('abc def pds_short')).toBe('abc def pds_short');
  });
});
