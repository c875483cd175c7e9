import { type Static, Type as T } from '@sinclair/typebox';
import { MAX_PER_PAGE } from '../../lib/paging.ts';
import { RowId, StrictObject } from '../../lib/schema-parts.ts';

/** Request schemas of the compliance admin API. Unknown fields are rejected, not ignored. */

const CountryCode = T.String({ pattern: '^[A-Z]{2}$', description: 'ISO 3166-1 alpha-2' });
const Countries = T.Array(CountryCode, { minItems: 1, maxItems: 300, uniqueItems: true });
const Authority = T.String({ minLength: 1, maxLength: 200, pattern: '\\S' });
const Timestamp = T.Union([T.String({ format: 'date-time' }), T.Null()]);

export const LicenceInput = StrictObject({
  authority: Authority,
  countries: Countries,
  validFrom: T.Optional(Timestamp),
  validUntil: T.Optional(Timestamp),
});
export const LicencePatch = T.Partial(LicenceInput, { additionalProperties: false, minProperties: 1 });

export const RuleInput = StrictObject({
  geo: StrictObject({
    type: T.Union([T.Literal('country'), T.Literal('market')]),
    code: T.String({ minLength: 2, maxLength: 32 }),
    coveredCountries: T.Optional(T.Union([Countries, T.Null()])),
  }),
  authority: T.Optional(T.Union([Authority, T.Null()])),
});
export const RulePatch = T.Partial(RuleInput, { additionalProperties: false, minProperties: 1 });

/** The publish body's override of the compliance guard (needs the `compliance:override` scope). */
export const ComplianceOverride = StrictObject({
  reason: T.String({
    minLength: 10,
    maxLength: 1000,
    pattern: '\\S',
    description: 'why the exception is lawful',
  }),
});

/** The compliance report's filters, page and format. */
export const ReportQuery = StrictObject({
  site_id: T.Optional(RowId),
  brand_id: T.Optional(RowId),
  country: T.Optional(CountryCode),
  status: T.Optional(T.Union([T.Literal('withheld'), T.Literal('overridden')])),
  page: T.Optional(T.Integer({ minimum: 1, maximum: 1_000_000 })),
  per_page: T.Optional(T.Integer({ minimum: 1, maximum: MAX_PER_PAGE })),
  format: T.Optional(T.Union([T.Literal('json'), T.Literal('csv')])),
});

const ReportEntry = StrictObject({
  status: T.Union([T.Literal('withheld'), T.Literal('overridden')], {
    description: 'withheld now, or served because the edition was published over it with an override',
  }),
  scope: T.Union([T.Literal('list'), T.Literal('visitors')], {
    description: "list: a country the list covers; visitors: a global list's visitors of the country",
  }),
  siteId: T.Integer(),
  siteDomain: T.String(),
  toplistId: T.Integer(),
  toplistSlug: T.String(),
  geo: StrictObject({ type: T.String(), code: T.String() }),
  version: T.String(),
  itemId: T.Integer(),
  position: T.Integer({ description: 'position in the list as published' }),
  brandId: T.Integer(),
  brandName: T.String(),
  country: CountryCode,
  rule: T.String({ description: 'restricted_country, licence_required, offer_geo or tracker_geo' }),
  ruleId: T.Union([T.Integer(), T.Null()], { description: 'the licence rule, for licence_required' }),
  reason: T.String(),
  since: T.Union([T.String({ format: 'date-time' }), T.Null()]),
});

const PageMeta = StrictObject({
  current_page: T.Integer(),
  per_page: T.Integer(),
  total: T.Integer(),
  last_page: T.Integer(),
  from: T.Union([T.Integer(), T.Null()]),
  to: T.Union([T.Integer(), T.Null()]),
});

export const ReportList = StrictObject({ data: T.Array(ReportEntry), meta: PageMeta });

export type LicenceInputT = Static<typeof LicenceInput>;
export type RuleInputT = Static<typeof RuleInput>;
export type ComplianceOverrideT = Static<typeof ComplianceOverride>;
