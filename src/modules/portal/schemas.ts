import { Type as T } from '@sinclair/typebox';
import { Month, Name, ReservationLines, ReservationParams } from '../market/schemas.ts';

const strict = { additionalProperties: false } as const;

/** A reservation the advertiser asks for itself: the advertiser is the token's. */
export const PortalReservationInput = T.Object({ campaign_name: Name, lines: ReservationLines }, strict);

export const PortalReservationQuery = T.Object(
  {
    status: T.Optional(
      T.Union([
        T.Literal('held'),
        T.Literal('approving'),
        T.Literal('booked'),
        T.Literal('rejected'),
        T.Literal('expired'),
      ]),
    ),
    limit: T.Optional(T.Integer({ minimum: 1, maximum: 200 })),
  },
  strict,
);

export const PortalStatementQuery = T.Object(
  { month: T.Optional(Month), limit: T.Optional(T.Integer({ minimum: 1, maximum: 200 })) },
  strict,
);

/** A line of one of the advertiser's reservations. */
export const LineParams = T.Object({
  id: ReservationParams.properties.id,
  line: T.Integer({ minimum: 1, maximum: 200 }),
});

/** What an upload says beside the image: where a click lands, and a name for the library. */
export const PortalUploadQuery = T.Object(
  {
    landing_url: T.String({
      minLength: 1,
      maxLength: 2048,
      description: 'where a click lands (after /go/{code})',
    }),
    name: T.Optional(T.String({ minLength: 1, maxLength: 200, pattern: '\\S' })),
  },
  strict,
);
