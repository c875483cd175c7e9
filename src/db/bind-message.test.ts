import { protocol } from '@electric-sql/pglite';
import { describe, expect, it } from 'vitest';
import { bindExecute } from './bind-message.ts';

const S = protocol.serialize;
/** What PGlite's own serializer sends for the same Bind, Describe, Execute and Sync. */
const theirs = (statement: string, values: (string | null)[]) =>
  Buffer.concat([S.bind({ statement, values }), S.describe({ type: 'P' }), S.execute({}), S.sync()]);

describe('bindExecute', () => {
  it.each<[string, (string | null)[]]>([
    ['insert_clicks', []],
    ['insert_clicks', ['[[1,"a"]]', '0']],
    ['s', [null, '', 'x', null]],
    ['naïve_名', ['é🙂 ünïcödé', '\u00ff'.repeat(300), null]],
    ['big', ['y'.repeat(70_000)]],
  ])('writes the bytes PGlite writes (%s)', (name, values) => {
    expect(bindExecute(name, values).equals(Buffer.from(theirs(name, values)))).toBe(true);
  });
});
