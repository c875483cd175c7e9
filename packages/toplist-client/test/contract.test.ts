import { readdirSync, readFileSync } from 'node:fs';
import type { Static } from '@sinclair/typebox';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { countries } from '../../../src/lib/geo.ts';
import {
  OfferSchema,
  type ToplistListSchema,
  type ToplistSchema,
} from '../../../src/modules/delivery/schemas.ts';
import { COUNTRY_CODES, DECIMAL_FIELDS, type Toplist, type ToplistPage } from '../src/index.ts';

// The client's hand-written types and tables must stay equal to the server's schemas: these checks
// fail (the first two at typecheck time) as soon as either side changes.
describe('client types and tables against the server', () => {
  it('Toplist and ToplistPage equal the server wire schemas', () => {
    expectTypeOf<Toplist>().toEqualTypeOf<Static<typeof ToplistSchema>>();
    expectTypeOf<ToplistPage>().toEqualTypeOf<Static<typeof ToplistListSchema>>();
  });

  it('knows exactly the country codes the server accepts', () => {
    expect([...COUNTRY_CODES].sort()).toEqual([...countries().keys()].sort());
  });

  it('lists exactly the offer fields the server sends as decimal strings', () => {
    const decimal = Object.entries(OfferSchema.properties)
      .filter(([, s]) => JSON.stringify(s).includes('\\\\.[0-9]{2}$'))
      .map(([name]) => name);
    expect([...DECIMAL_FIELDS].sort()).toEqual(decimal.sort());
  });

  it('has no runtime dependencies and imports nothing outside its own sources', () => {
    const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
    expect(pkg.dependencies ?? {}).toEqual({});
    const dir = new URL('../src/', import.meta.url);
    for (const file of readdirSync(dir)) {
      const source = readFileSync(new URL(file, dir), 'utf8');
      const imports = [...source.matchAll(/^(?:import|export)[^'"]*from '([^']+)'/gm)].map((m) => m[1]);
      expect(
        imports.filter((i) => !i!.startsWith('./')),
        file,
      ).toEqual([]);
    }
  });
});
