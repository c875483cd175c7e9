import { Type as T } from '@sinclair/typebox';
import { RowId as Id, strict } from '../../lib/schema-parts.ts';
import { RECORDS_MAX_PER_PAGE } from './records.ts';

/**
 * Request and response schemas of the affiliate manager's tools: the conversions list, the raw
 * postback log with replay, and the operator report test, pull and backfills.
 */

const Day = T.String({ maxLength: 10, description: 'date YYYY-MM-DD (UTC day)' });
const Timestamp = T.String({ format: 'date-time' });
const NullableInt = T.Union([T.Integer(), T.Null()]);
const NullableString = T.Union([T.String(), T.Null()]);
const Decimal = T.String({ pattern: '^-?\\d+(\\.\\d+)?$', description: 'exact decimal' });
const Page = {
  page: T.Optional(T.Integer({ minimum: 1, maximum: 1_000_000 })),
  per_page: T.Optional(T.Integer({ minimum: 1, maximum: RECORDS_MAX_PER_PAGE })),
};
const Window = {
  from: T.Optional(
    T.String({ maxLength: 10, description: 'first UTC day, YYYY-MM-DD (default: 29 days before to)' }),
  ),
  to: T.Optional(T.String({ maxLength: 10, description: 'last UTC day, YYYY-MM-DD (default: today)' })),
};

export const ConversionQuery = T.Object(
  {
    program_id: T.Optional(Id),
    event: T.Optional(T.String({ minLength: 1, maxLength: 32, pattern: '^[A-Za-z0-9_.-]+$' })),
    attributed: T.Optional(T.Boolean()),
    ...Window,
    click_id: T.Optional(T.String({ minLength: 1, maxLength: 64 })),
    transaction_id: T.Optional(T.String({ minLength: 1, maxLength: 128 })),
    sub_id: T.Optional(T.String({ minLength: 1, maxLength: 100, pattern: '^[A-Za-z0-9._~-]+$' })),
    ...Page,
    format: T.Optional(T.Union([T.Literal('json'), T.Literal('csv')])),
  },
  strict,
);

export const PostbackQuery = T.Object(
  {
    program_id: T.Optional(Id),
    outcome: T.Optional(T.Union([T.Literal('accepted'), T.Literal('duplicate'), T.Literal('rejected')])),
    code: T.Optional(T.String({ minLength: 1, maxLength: 64, pattern: '^[a-z_]+$' })),
    ...Window,
    transaction_id: T.Optional(T.String({ minLength: 1, maxLength: 128 })),
    reason: T.Optional(
      T.String({
        minLength: 1,
        maxLength: 100,
        description: 'words of the current outcome’s reason, any case',
      }),
    ),
    ...Page,
  },
  strict,
);

export const LogIdParams = T.Object(
  { id: T.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER }) },
  strict,
);

export const PullInput = T.Object({ from: Day, to: Day }, strict);

const Meta = T.Object(
  {
    current_page: T.Integer(),
    per_page: T.Integer(),
    total: T.Integer(),
    last_page: T.Integer(),
    from: NullableInt,
    to: NullableInt,
  },
  strict,
);

export const Conversion = T.Object(
  {
    id: T.String(),
    programId: T.Integer(),
    transactionId: T.String(),
    event: T.String(),
    amount: T.Union([Decimal, T.Null()]),
    currency: NullableString,
    clickId: NullableString,
    attributed: T.Boolean(),
    subId: T.Union([T.String(), T.Null()], { description: 'sub_id of the attributed click' }),
    siteId: NullableInt,
    toplistId: NullableInt,
    position: NullableInt,
    brandId: NullableInt,
    offerId: NullableInt,
    trackerId: NullableInt,
    logId: T.String({ description: 'id of the postback log row that created it' }),
    receivedAt: Timestamp,
  },
  strict,
);
export const ConversionList = T.Object({ data: T.Array(Conversion), meta: Meta }, strict);

const Outcome = T.Object(
  {
    status: T.Integer({ description: 'HTTP status of the answer (200, or the rejection)' }),
    code: T.String({ description: 'accepted, duplicate, or the error code' }),
    conversionId: NullableString,
    duplicate: T.Boolean(),
    decidedAt: Timestamp,
    replay: T.Boolean(),
    message: T.Union([T.String(), T.Null()], {
      description: 'a refusal’s message as the operator was told it; null for an acceptance',
    }),
    field: T.Union([T.String(), T.Null()], {
      description: 'the parameter a refusal names, by the programme’s name for it',
    }),
  },
  strict,
);

export const PostbackEntry = T.Object(
  {
    id: T.String(),
    receivedAt: Timestamp,
    program: T.String({ description: 'the {program} segment as received' }),
    programId: NullableInt,
    method: T.String(),
    contentType: NullableString,
    params: T.Record(T.String(), T.Unknown(), {
      description: 'query and body parameters as logged; secret-looking names redacted',
    }),
    rawBody: T.Union([T.String(), T.Null()], {
      description: 'a body that could not be read as parameters, as logged',
    }),
    outcomes: T.Array(Outcome, { description: 'oldest first; the last one is current' }),
    replayable: T.Boolean(),
  },
  strict,
);
export const PostbackList = T.Object({ data: T.Array(PostbackEntry), meta: Meta }, strict);

export const ReplayAnswer = T.Object(
  {
    data: T.Object(
      {
        logId: T.String(),
        status: T.Integer(),
        code: T.String(),
        conversionId: NullableString,
        duplicate: T.Boolean(),
        message: T.Union([T.String(), T.Null()], { description: 'why it was refused; null when accepted' }),
      },
      strict,
    ),
  },
  strict,
);

const AggregateRow = T.Object(
  {
    campaign: T.String(),
    tracker: T.String(),
    clicks: T.Integer(),
    registrations: T.Integer(),
    ftds: T.Integer(),
    deposits: Decimal,
    commission: Decimal,
  },
  strict,
);

export const ReportTestAnswer = T.Object(
  {
    data: T.Object(
      {
        day: T.String({ description: "yesterday in the programme's time zone" }),
        outcome: T.Union([T.Literal('ok'), T.Literal('failed')], {
          description: 'what the scheduled pull would record',
        }),
        status: NullableInt,
        message: T.String(),
        rowCount: T.Integer(),
        currency: NullableString,
        rows: T.Array(AggregateRow, { maxItems: 10 }),
      },
      strict,
    ),
  },
  strict,
);

const Backfill = T.Object(
  {
    id: T.Integer(),
    programId: T.Integer(),
    from: T.String(),
    to: T.String(),
    status: T.Union([T.Literal('queued'), T.Literal('running'), T.Literal('done'), T.Literal('failed')]),
    daysTotal: T.Integer(),
    daysDone: T.Integer({ description: 'days pulled so far, ok or failed' }),
    daysFailed: T.Integer(),
    error: NullableString,
    createdAt: Timestamp,
    startedAt: T.Union([Timestamp, T.Null()]),
    finishedAt: T.Union([Timestamp, T.Null()]),
  },
  strict,
);
export const BackfillOne = T.Object({ data: Backfill }, strict);
export const BackfillList = T.Object({ data: T.Array(Backfill) }, strict);
