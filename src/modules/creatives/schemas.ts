import { Type as T } from '@sinclair/typebox';
import { strict } from '../../lib/schema-parts.ts';

/** Request schemas of the creatives admin API and the public creative URLs. */

const CreativeId = T.String({ pattern: '^crv_[0-9A-Z]{26}$' });
const BookingId = T.String({ pattern: '^bkg_[0-9A-Z]{26}$' });
const ReservationId = T.String({ pattern: '^rsv_[0-9A-Z]{26}$' });
const Status = T.Union([
  T.Literal('pending'),
  T.Literal('approving'),
  T.Literal('approved'),
  T.Literal('rejected'),
  T.Literal('replaced'),
]);

/** What an upload says beside the image: where a click lands, and a name for the library. */
export const UploadMeta = {
  landing_url: T.String({
    minLength: 1,
    maxLength: 2048,
    description: 'where a click lands (after /go/{code})',
  }),
  name: T.Optional(T.String({ minLength: 1, maxLength: 200, pattern: '\\S' })),
};

export const UploadQuery = T.Object(
  {
    booking_id: T.Optional(BookingId),
    reservation_id: T.Optional(
      T.String({
        pattern: '^rsv_[0-9A-Z]{26}$',
        description:
          'a reservation line awaiting approval instead of a booking line (exactly one of the two)',
      }),
    ),
    line_no: T.Integer({ minimum: 1, maximum: 200 }),
    ...UploadMeta,
  },
  strict,
);

export const CreativeListQuery = T.Object(
  {
    status: T.Optional(Status),
    booking_id: T.Optional(BookingId),
    reservation_id: T.Optional(ReservationId),
    limit: T.Optional(T.Integer({ minimum: 1, maximum: 500 })),
  },
  strict,
);

export const CreativeParams = T.Object({ id: CreativeId });

export const RejectInput = T.Object(
  {
    reason: T.String({
      minLength: 1,
      maxLength: 500,
      pattern: '\\S',
      description: 'shown to the advertiser',
    }),
  },
  strict,
);

export const FileParams = T.Object({
  file: T.String({ pattern: '^[0-9a-f]{64}\\.(png|jpg|gif|webp)$', description: '<sha256>.<ext>' }),
});

export const FollowupParams = T.Object({ id: BookingId });

/** The OpenAPI body of an upload: the image's bytes, whatever the Content-Type says. */
export const IMAGE_BODY = Object.fromEntries(
  ['image/png', 'image/jpeg', 'image/gif', 'image/webp', 'application/octet-stream'].map((t) => [
    t,
    {
      schema: {
        type: 'string',
        contentMediaType: t,
        description: 'the image file itself (type read from its bytes)',
      },
    },
  ]),
);
