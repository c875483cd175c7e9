import { describe, expect, it } from 'vitest';
import { mappingProblem, readReportPage } from './report-mapping.ts';

const row = {
  campaign: 'Main',
  tracker: 'trk-1',
  clicks: 412,
  registrations: 37,
  ftds: 9,
  deposits: '1840.00',
  commission: 615.5,
};

describe('operator report mapping', () => {
  it('reads the documented shape with exact decimals', () => {
    const page = readReportPage({ date: '2026-11-22', currency: 'EUR', rows: [row] }, '2026-11-22', {});
    expect(page).toEqual({
      currency: 'EUR',
      nextCursor: null,
      // The JSON number 615.5 becomes the decimal string "615.5"; everything else as sent.
      rows: [{ ...row, commission: '615.5' }],
    });
  });

  it('follows a mapping into another shape, nested paths included', () => {
    const body = {
      report: {
        day: '2026-11-22',
        items: [{ btag: 'b1', stats: { hits: '7', signups: 2, fd: 1 }, money: { dep: 10, com: '2.5' } }],
      },
      paging: { next: 'c2' },
    };
    const page = readReportPage(body, '2026-11-22', {
      rows: 'report.items',
      date: 'report.day',
      next_cursor: 'paging.next',
      tracker: 'btag',
      clicks: 'stats.hits',
      registrations: 'stats.signups',
      ftds: 'stats.fd',
      deposits: 'money.dep',
      commission: 'money.com',
    });
    expect(page.nextCursor).toBe('c2');
    expect(page.rows[0]).toEqual({
      campaign: '',
      tracker: 'b1',
      clicks: 7,
      registrations: 2,
      ftds: 1,
      deposits: '10',
      commission: '2.5',
    });
  });

  it('names the field of every unusable answer', () => {
    const bad: [unknown, RegExp][] = [
      [[row], /^body: must be a JSON object/],
      [{ rows: 'nope' }, /^rows: must be an array/],
      [{ date: '2026-11-21', rows: [] }, /^date: is "2026-11-21", the request asked for 2026-11-22/],
      [{ rows: [{ ...row, clicks: -1 }] }, /^rows\[0\]\.clicks: must be a whole number/],
      [{ rows: [{ ...row, ftds: 1.5 }] }, /^rows\[0\]\.ftds/],
      [{ rows: [{ ...row, deposits: '1e3' }] }, /^rows\[0\]\.deposits: must be a decimal/],
      [{ rows: [{ ...row, commission: Number.NaN }] }, /^rows\[0\]\.commission/],
      [{ rows: [null] }, /^rows\[0\]: must be an object/],
      [{ rows: [{ clicks: 1 }] }, /^rows\[0\]: needs tracker or campaign/],
      [{ rows: [{ ...row, tracker: 'a\u0000b' }] }, /^rows\[0\]\.tracker/],
      [{ currency: 'euro', rows: [] }, /^currency/],
    ];
    for (const [body, message] of bad) expect(() => readReportPage(body, '2026-11-22', {})).toThrow(message);
  });

  it('checks mappings', () => {
    expect(mappingProblem({ clicks: 'stats.hits' })).toBeUndefined();
    expect(mappingProblem({ nope: 'x' })?.[0]).toBe('mapping.nope');
    expect(mappingProblem({ clicks: 'a..b' })?.[0]).toBe('mapping.clicks');
    expect(mappingProblem({ clicks: 5 })?.[0]).toBe('mapping.clicks');
  });
});
