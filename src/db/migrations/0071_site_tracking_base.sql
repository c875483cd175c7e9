-- The tracking domain belongs to the site: `trackerLink` = {tracking base}/go/{slug}. NULL: the
-- server's PODIUM_PUBLIC_URL. Each edition records the base its stored document was rendered
-- with, and a render revision (part of its ETag) that grows when the links are re-rendered.
ALTER TABLE sites ADD COLUMN tracking_base_url text;
ALTER TABLE editions ADD COLUMN tracking_base text;
ALTER TABLE editions ADD COLUMN render_rev integer NOT NULL DEFAULT 0;
