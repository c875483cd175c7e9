import { Type as T } from '@sinclair/typebox';
import { UploadMeta } from '../creatives/schemas.ts';
import {
  Month,
  Name,
  ReservationLines,
  ReservationParams,
  ReservationStatusSchema,
} from '../market/schemas.ts';

const strict = { additionalProperties: false } as const;

/** A reservation the advertiser asks for itself: the advertiser is the token's. */
export const PortalReservationInput = T.Object({ campaign_name: Name, lines: ReservationLines }, strict);

export const PortalReservationQuery = T.Object(
  { status: T.Optional(ReservationStatusSchema), limit: T.Optional(T.Integer({ minimum: 1, maximum: 200 })) },
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

/** Where a click on the uploaded creative lands, and its name in the library. */
export const PortalUploadQuery = T.Object(UploadMeta, strict);
