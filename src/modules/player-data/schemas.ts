import { Type as T } from '@sinclair/typebox';
import { RowId, strict } from '../../lib/schema-parts.ts';
import { MAX_PLAYER_ID } from '../../lib/text.ts';
import { Conversion as ConversionRow } from '../reporting/ops-schemas.ts';
import { PLAYER_DATA_MAX_PER_PAGE } from './service.ts';

/** Request and response schemas of player data requests (export and erase). */

const Timestamp = T.String({ format: 'date-time' });
const NullableString = T.Union([T.String(), T.Null()]);

const Player = {
  player_id: T.String({
    minLength: 1,
    maxLength: MAX_PLAYER_ID,
    description: "the operator's player id, as postbacks send it (never put it in a URL)",
  }),
  program_id: T.Optional({ ...RowId, description: 'only this programme (default: every programme)' }),
};

export const EraseInput = T.Object(Player, strict);

export const ExportInput = T.Object(
  {
    ...Player,
    page: T.Optional(T.Integer({ minimum: 1, maximum: 1_000_000 })),
    per_page: T.Optional(T.Integer({ minimum: 1, maximum: PLAYER_DATA_MAX_PER_PAGE })),
  },
  strict,
);

/** A conversion as the conversions list shows it (without the click's sub id), with its keyed hash. */
const Conversion = T.Composite(
  [
    T.Omit(ConversionRow, ['subId']),
    T.Object({ playerRef: T.String({ description: 'the keyed hash the player id is stored as' }) }),
  ],
  strict,
);

const Outcome = T.Object(
  {
    status: T.Integer(),
    code: T.String(),
    conversionId: NullableString,
    duplicate: T.Boolean(),
    replay: T.Boolean(),
    decidedAt: Timestamp,
  },
  strict,
);

const Postback = T.Object(
  {
    id: T.String(),
    receivedAt: Timestamp,
    program: T.String(),
    method: T.String(),
    contentType: NullableString,
    query: T.Record(T.String(), T.Unknown(), {
      description: 'as logged: secrets redacted, player ids hashed',
    }),
    body: T.Union([T.String(), T.Null()], { description: 'as logged' }),
    outcomes: T.Array(Outcome),
  },
  strict,
);

export const ExportAnswer = T.Object(
  {
    data: T.Object({ conversions: T.Array(Conversion), postbacks: T.Array(Postback) }, strict),
    meta: T.Object(
      {
        page: T.Integer(),
        per_page: T.Integer(),
        conversions_total: T.Integer(),
        postbacks_total: T.Integer(),
        last_page: T.Integer(),
      },
      strict,
    ),
  },
  strict,
);

export const EraseAnswer = T.Object(
  {
    data: T.Object(
      {
        conversions: T.Integer({ description: 'conversions deleted' }),
        postbacks: T.Integer({ description: 'raw postback log rows deleted' }),
        outcomes: T.Integer({ description: 'outcomes of those log rows deleted' }),
      },
      strict,
    ),
  },
  strict,
);
