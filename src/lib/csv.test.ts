import { describe, expect, it } from 'vitest';
import { type CsvCell, type CsvColumn, csvColumns, csvRows, toCsv } from './csv.ts';

/** One cell as it is written on its line. */
const csvCell = (v: CsvCell) => csvRows([[v]]).slice(0, -2);

describe('csv', () => {
  it('quotes commas, quotes and line breaks', () => {
    expect(csvCell('a,b')).toBe('"a,b"');
    expect(csvCell('say "hi"')).toBe('"say ""hi"""');
    expect(csvCell('two\nlines')).toBe('"two\nlines"');
    expect(csvCell('plain ünïcödé')).toBe('plain ünïcödé');
    expect(csvCell(null)).toBe('');
    expect(csvRows([['a', null, 'b']])).toBe('a,,b\r\n');
  });

  it('defuses text a spreadsheet would run as a formula, but keeps numbers', () => {
    expect(csvCell('=HYPERLINK("http://evil")')).toBe(`"'=HYPERLINK(""http://evil"")"`);
    for (const s of ['+1+cmd', '-2+3', '@SUM(A1)', '%0A']) expect(csvCell(s)).toBe(`'${s}`);
    expect(csvCell('\tx')).toBe(`"'\tx"`);
    expect(csvCell('-12.50')).toBe('-12.50');
    expect(csvCell(-3)).toBe('-3');
    expect(csvCell('0.0400')).toBe('0.0400');
  });

  it("quotes a cell holding any locale's list separator, so no spreadsheet splits it into a formula", () => {
    expect(csvCell('x;=1+1')).toBe('"x;=1+1"');
    for (const s of ['a\tb', 'a|b', 'a\u060Cb', 'a\u061B=1', 'a\uFF0Cb', 'a\uFF1Bb', 'a\u3001b'])
      expect(csvCell(s), JSON.stringify(s)).toBe(`"${s}"`);
    expect(csvCell('=1;2')).toBe(`"'=1;2"`);
    expect(csvCell('plain')).toBe('plain');
  });

  it('writes a header and rows with CRLF line ends', () => {
    expect(
      toCsv(
        ['a', 'b'],
        [
          [1, 'x,y'],
          [null, '=1'],
        ],
      ),
    ).toBe(`a,b\r\n1,"x,y"\r\n,'=1\r\n`);
  });

  it('heads field columns with the snake_case field name and writes a field as it is unless formatted', () => {
    type Row = { id: number; siteId: string | null; ok: boolean };
    const columns: CsvColumn<Row>[] = csvColumns(['id', 'siteId', 'ok'], {
      ok: (r) => (r.ok ? 'yes' : 'no'),
    });
    expect(columns.map(([header]) => header)).toEqual(['id', 'site_id', 'ok']);
    expect(columns.map(([, cell]) => cell({ id: 7, siteId: null, ok: true }))).toEqual([7, null, 'yes']);
    // @ts-expect-error a field that is not a cell needs a format
    const unformatted: CsvColumn<Row>[] = csvColumns(['ok'], {});
    expect(unformatted).toHaveLength(1);
  });
});
