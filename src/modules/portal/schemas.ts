import { Type as T } from '@sinclair/typebox';
import { Month, Name, ReservationLines } from '../market/schemas.ts';

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
