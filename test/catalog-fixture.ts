import type { CatalogService } from '../src/modules/catalog/service.ts';

/** Shared by tests and the bench: an owner, the three named types of a casino list and a template over them. */
export async function casinoTemplate(catalog: CatalogService, name = 'Best') {
  const owner = await catalog.owners.create({ name: 'Editorial' });
  const type = await catalog.createNamedType('product_types', 'Casino');
  const cls = await catalog.createNamedType('classification_types', 'Real money');
  const offerType = await catalog.createNamedType('offer_types', 'Welcome Bonus');
  const template = await catalog.templates.create({
    name,
    productTypeId: type.id,
    classificationTypeId: cls.id,
  });
  return { owner, offerType, template };
}

/** A country toplist of the site by the owner and template, holding `items` as its draft (not published). */
export async function draftToplist(
  catalog: CatalogService,
  at: { siteId: number; owner: { id: number }; template: { id: number } },
  list: { name: string; slug: string; country: string },
  items: { position: number; brandId: number; offerId: number }[],
) {
  const toplist = await catalog.toplists.create({
    siteId: at.siteId,
    templateId: at.template.id,
    ownerId: at.owner.id,
    name: list.name,
    slug: list.slug,
    geo: { type: 'country', code: list.country },
  });
  await catalog.publishing.replaceItems(toplist.id, items);
  return toplist;
}
