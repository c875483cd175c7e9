import { Type } from '@sinclair/typebox';
import { z } from 'zod';

/** Admin API request schemas of advertiser tokens. Unknown fields are rejected. */
export const TokenInput = Type.Object(
  { name: Type.String({ minLength: 1, maxLength: 100 }) },
  { additionalProperties: false },
);
export const TokenParams = Type.Object({
  id: Type.String({ minLength: 1, maxLength: 64 }),
  tokenId: Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER }),
});
export const AdvertiserIdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }) });

/*
 * MCP tool inputs (zod, as the MCP SDK takes them). Only what Podium reads is declared, with its
 * limits; AdCP's other fields (brand, account, context, push_notification_config …) are accepted
 * and ignored, so a buyer's full AdCP request passes.
 */
const ref = z.string().min(1).max(200);
/** Packages one update_media_buy names at most (a buy has at most 20). */
const MAX_UPDATE_PACKAGES = 20;
const day = z.string().min(10).max(40);

export const ProductsInput = {
  brief: z.string().max(2000).optional(),
  buying_mode: z.string().max(20).optional(),
};

/** Declared so a client keeps them; Podium books for the token's advertiser and reads neither. */
const opaque = z.record(z.unknown()).optional();

export const MediaBuyInput = {
  account: opaque,
  brand: opaque,
  buyer_ref: ref,
  buyer_campaign_ref: ref.optional(),
  start_time: day,
  end_time: day,
  packages: z
    .array(
      z
        .object({
          buyer_ref: ref,
          product_id: z.string().min(1).max(64),
          pricing_option_id: z.string().min(1).max(100),
          budget: z.number().nonnegative().max(1e12),
          impressions: z.number().int().positive().max(1e12).nullish(),
          targeting_overlay: z
            .object({ geo_countries: z.array(z.string().length(2)).max(50).nullish() })
            .passthrough()
            .nullish(),
        })
        .passthrough(),
    )
    .max(100)
    .optional(),
};

export const DeliveryInput = {
  media_buy_ids: z.array(z.string().max(64)).max(50).optional(),
  buyer_refs: z.array(ref).max(50).optional(),
  start_date: z
    .string()
    .regex(/^\d{4}-\d{2}-\d{2}$/)
    .optional(),
  end_date: z
    .string()
    .regex(/^\d{4}-\d{2}-\d{2}$/)
    .optional(),
};

const asset = z
  .object({
    url: z.string().max(2048).optional(),
    width: z.number().int().min(1).max(4000).optional(),
    height: z.number().int().min(1).max(4000).optional(),
  })
  .passthrough();

export const SyncCreativesInput = {
  account: opaque,
  creatives: z
    .array(
      z
        .object({
          creative_id: ref,
          name: z.string().min(1).max(200),
          format_id: z
            .object({
              id: z.string().min(1).max(100),
              width: z.number().nullish(),
              height: z.number().nullish(),
            })
            .passthrough(),
          assets: z.record(z.string().max(100), asset).refine((a) => Object.keys(a).length <= 20, {
            message: 'at most 20 assets',
          }),
        })
        .passthrough(),
    )
    .max(100),
  assignments: z
    .array(z.object({ creative_id: ref, package_id: ref }).passthrough())
    .max(500)
    .nullish(),
  dry_run: z.boolean().nullish(),
  delete_missing: z.boolean().nullish(),
};

export const ListCreativesInput = {
  filters: z
    .object({
      creative_ids: z.array(ref).max(100).nullish(),
      media_buy_ids: z.array(z.string().max(64)).max(50).nullish(),
      statuses: z.array(z.string().max(30)).max(10).nullish(),
    })
    .passthrough()
    .nullish(),
  pagination: z
    .object({
      max_results: z.number().int().min(1).max(1000).nullish(),
      cursor: z.string().max(20).nullish(),
    })
    .passthrough()
    .nullish(),
};

export const UpdateMediaBuyInput = {
  account: opaque,
  media_buy_id: z.string().max(64).nullish(),
  buyer_ref: ref.nullish(),
  paused: z.boolean().nullish(),
  start_time: z.unknown().optional(),
  end_time: z.unknown().optional(),
  packages: z
    .array(
      z
        .object({
          package_id: ref.nullish(),
          buyer_ref: ref.nullish(),
          budget: z.number().nonnegative().max(1e12).nullish(),
          impressions: z.number().int().positive().max(1e12).nullish(),
        })
        .passthrough(),
    )
    .max(MAX_UPDATE_PACKAGES)
    .nullish(),
};
