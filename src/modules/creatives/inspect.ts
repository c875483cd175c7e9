import { imageSize } from 'image-size';
import type { CreativeFormat } from '../../config.ts';
import { AppError } from '../../lib/errors.ts';

/** Why an upload is refused; the 422 names it in `details.rule`. */
export type UploadRule = 'type' | 'weight' | 'dimensions' | 'size';

/** A 422 naming the rule broken and the field (`body` for the image itself). */
export function refused(rule: UploadRule, message: string, field = 'body'): AppError {
  return new AppError('validation_failed', `${field}: ${message}`, { field, rule });
}

export const CONTENT_TYPES: Record<CreativeFormat, string> = {
  png: 'image/png',
  jpeg: 'image/jpeg',
  gif: 'image/gif',
  webp: 'image/webp',
};

/** The file extension a creative's URL ends with. */
export const EXTENSIONS: Record<CreativeFormat, string> = {
  png: 'png',
  jpeg: 'jpg',
  gif: 'gif',
  webp: 'webp',
};

/** Magic bytes of the accepted formats (file signatures), read off the bytes, never the name or Content-Type. */
export function sniff(b: Buffer): CreativeFormat | undefined {
  if (b.length >= 8 && b.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])))
    return 'png';
  if (b.length >= 3 && b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff) return 'jpeg';
  if (b.length >= 6 && /^GIF8[79]a$/.test(b.subarray(0, 6).toString('latin1'))) return 'gif';
  if (
    b.length >= 12 &&
    b.subarray(0, 4).toString('latin1') === 'RIFF' &&
    b.subarray(8, 12).toString('latin1') === 'WEBP'
  )
    return 'webp';
  return undefined;
}

/**
 * Markup that would make the file a script carrier if anything ever sniffed it as HTML or SVG (a
 * polyglot). Raster data that happens to hold these byte runs is vanishingly rare; XMP metadata
 * (`<x:xmpmeta`, `<rdf:`) is not matched.
 */
const MARKUP = /<(script|svg|html|body|iframe|object|embed)[\s/>]|javascript:/i;

/** image-size's name of each accepted format. */
const LIBRARY_TYPE: Record<CreativeFormat, string> = { png: 'png', jpeg: 'jpg', gif: 'gif', webp: 'webp' };

export interface Inspected {
  format: CreativeFormat;
  width: number;
  height: number;
}

/**
 * Checks what an upload is before anything else is looked up: its type by its bytes (PNG, JPEG,
 * GIF, WebP; SVG and markup refused) and its weight against the format's limit. Throws the 422 of
 * the first rule broken.
 */
export function checkBytes(
  bytes: Buffer,
  maxBytes: Readonly<Record<CreativeFormat, number>>,
): CreativeFormat {
  const format = sniff(bytes);
  if (!format)
    throw refused(
      'type',
      'is not a PNG, JPEG, GIF or WebP image (read from its bytes; SVG and other types are refused)',
    );
  if (MARKUP.test(bytes.toString('latin1')))
    throw refused('type', 'carries markup or script (an HTML or SVG polyglot) and is refused');
  const limit = maxBytes[format];
  if (bytes.length > limit)
    throw refused(
      'weight',
      `${format.toUpperCase()} of ${bytes.length} bytes is over the ${Math.floor(limit / 1024)} KB limit (${limit} bytes)`,
    );
  return format;
}

/**
 * The dimensions of an image of `format` as image-size reads them, which must be one of `sizes`
 * (`WIDTHxHEIGHT`, the line's). Throws the `dimensions` or `size` 422.
 */
export function checkSize(bytes: Buffer, format: CreativeFormat, sizes: readonly string[]): Inspected {
  let dims: { width?: number; height?: number; type?: string };
  try {
    dims = imageSize(bytes);
  } catch {
    throw refused(
      'dimensions',
      `its ${format.toUpperCase()} header cannot be read: the file is damaged or cut short`,
    );
  }
  const { width, height } = dims;
  if (dims.type !== LIBRARY_TYPE[format] || !width || !height || width > 4000 || height > 4000)
    throw refused('dimensions', 'has no readable width and height between 1 and 4000 pixels');
  const size = `${width}x${height}`;
  if (!sizes.includes(size))
    throw refused('size', `is ${size}, not a size of the line (${sizes.join(', ')})`);
  return { format, width, height };
}
