import { api, type Brand, type Offer, type Page } from './api.ts';
import { Fields, FormCard, saveRecord, shownOf, useForm } from './form.tsx';
import { ListScreen, usePicked } from './lists.tsx';
import { Trackers } from './Trackers.tsx';
import { choicesOf, SelectField, Status, useLoad } from './ui.tsx';

/** Brands and their offers, edited with the API's field-level validation messages; the list is searched and paged by the server. */
export function BrandsScreen() {
  const pick = usePicked<Brand>('/brands');
  return (
    <ListScreen
      unit="brand"
      className="picklist scroll"
      pick={pick}
      search={{ id: 'brand-search', label: 'Search brands', placeholder: 'name or slug' }}
      empty="No brands."
      item={(b) => b.name}
      newButton
      detail={(brand) => (
        <>
          <BrandForm brand={brand} onSaved={pick.saved} />
          {brand && <Offers brandId={brand.id} />}
        </>
      )}
    />
  );
}

const BRAND_SPECS = [
  { key: 'name', id: 'brand-name', label: 'Name' },
  { key: 'slug', id: 'brand-slug', label: 'Slug' },
  { key: 'rating', id: 'brand-rating', label: 'Rating (0–10)' },
  { key: 'backgroundColor', id: 'brand-bg', label: 'Logo background colour', field: 'logo.backgroundColor' },
  { key: 'rectangular', id: 'brand-rect', label: 'Rectangular logo URL', field: 'logo.rectangular' },
  { key: 'square', id: 'brand-square', label: 'Square logo URL', field: 'logo.square' },
] as const;
const NEW_BRAND_SPECS = [
  { key: 'externalId', id: 'brand-external-id', label: 'External id' },
  ...BRAND_SPECS,
] as const;

/** Edits a brand, or creates one when none is given (then the external id is asked too). */
function BrandForm({ brand, onSaved }: { brand?: Brand; onSaved: (b: Brand) => void }) {
  const form = useForm({
    externalId: '',
    name: brand?.name ?? '',
    slug: brand?.slug ?? '',
    rating: brand ? String(brand.rating) : '',
    backgroundColor: brand?.logo.backgroundColor ?? '',
    rectangular: brand?.logo.rectangular ?? '',
    square: brand?.logo.square ?? '',
  });
  const { f } = form;
  const specs = brand ? BRAND_SPECS : NEW_BRAND_SPECS;
  const save = () =>
    form.run(() =>
      saveRecord(
        { unit: 'brand', path: '/brands', record: brand, onSaved },
        {
          name: f.name,
          slug: f.slug,
          rating: f.rating.trim() === '' ? Number.NaN : Number(f.rating),
          logo: { backgroundColor: f.backgroundColor, rectangular: f.rectangular, square: f.square },
        },
        { externalId: f.externalId },
      ),
    );
  return (
    <FormCard
      id="brand-heading"
      record={{ unit: 'brand', name: brand?.name }}
      className=""
      form={form}
      specs={specs}
      onSubmit={save}
    />
  );
}

function Offers({ brandId }: { brandId: number }) {
  const offers = useLoad(
    () => api<Page<Offer>>('GET', `/offers?brand_id=${brandId}&per_page=100`),
    String(brandId),
  );
  return (
    <div>
      <h2>Offers</h2>
      <Status load={offers} empty={offers.data?.data.length === 0 && 'This brand has no offers.'}>
        {offers.data?.data.map((o) => (
          <OfferForm key={o.id} offer={o} onChanged={offers.reload} />
        ))}
      </Status>
      <NewOffer brandId={brandId} onCreated={offers.reload} />
    </div>
  );
}

const offerSpecs = (id: string) =>
  [
    { key: 'offerText', id: `${id}-text`, label: 'Offer text' },
    { key: 'bonusCode', id: `${id}-code`, label: 'Bonus code' },
    {
      key: 'wagering',
      id: `${id}-wagering`,
      label: 'Wagering requirement',
      field: 'bonusWageringRequirement',
    },
  ] as const;

function OfferForm({ offer, onChanged }: { offer: Offer; onChanged: () => void }) {
  const form = useForm({
    offerText: offer.offerText,
    bonusCode: offer.bonusCode,
    wagering: String(offer.bonusWageringRequirement),
  });
  const { f } = form;
  const specs = offerSpecs(`offer-${offer.id}`);
  const save = () =>
    form.run(async () => {
      await api('PATCH', `/offers/${offer.id}`, {
        offerText: f.offerText,
        bonusCode: f.bonusCode,
        bonusWageringRequirement: Number(f.wagering),
      });
      return 'Offer saved.';
    });
  return (
    <div className="offer">
      <FormCard
        label={`Offer ${offer.id}`}
        form={form}
        specs={specs}
        onSubmit={save}
        submit={`Save offer ${offer.id}`}
      />
      <Trackers offerId={offer.id} trackers={offer.trackers} onChanged={onChanged} />
    </div>
  );
}

const NEW_OFFER_SPECS = [
  { key: 'externalId', id: 'new-offer-external', label: 'External id', required: true },
  { key: 'offerText', id: 'new-offer-text', label: 'Offer text', required: true },
  {
    key: 'bonusExpiryDate',
    id: 'new-offer-expiry',
    label: 'Bonus expiry date',
    type: 'date',
    required: true,
  },
  { key: 'bonusCode', id: 'new-offer-code', label: 'Bonus code' },
] as const;

/** A new offer of the brand with the fields an offer needs; the rest is edited through the API or an import. */
function NewOffer({ brandId, onCreated }: { brandId: number; onCreated: () => void }) {
  const types = useLoad(() => api<{ data: { id: number; name: string }[] }>('GET', '/offer-types'), '');
  const form = useForm({
    externalId: '',
    offerTypeId: '',
    offerText: '',
    bonusExpiryDate: '',
    bonusCode: '',
  });
  const { f } = form;
  const typeId = f.offerTypeId || String(types.data?.data[0]?.id ?? '');
  const create = () =>
    form.run(async () => {
      const { bonusCode, ...required } = f;
      const r = await api<{ data: Offer }>('POST', '/offers', {
        ...required,
        ...(bonusCode ? { bonusCode } : {}),
        brandId,
        offerTypeId: Number(typeId),
      });
      form.setF({ ...f, externalId: '', offerText: '', bonusCode: '' });
      onCreated();
      return `Offer ${r.data.id} created.`;
    });
  return (
    <FormCard
      record={{ unit: 'offer' }}
      heading="h3"
      outcome={form.outcome}
      shown={shownOf(NEW_OFFER_SPECS)}
      onSubmit={create}
      // Until the offer types have loaded there is no type to send: a click then would only earn a 422.
      disabled={!typeId}
    >
      <Fields specs={NEW_OFFER_SPECS.slice(0, 1)} {...form} />
      <SelectField
        id="new-offer-type"
        label="Offer type"
        value={typeId}
        onChange={form.set('offerTypeId')}
        options={choicesOf(types, (t) => t.name)}
      />
      <Fields specs={NEW_OFFER_SPECS.slice(1)} {...form} />
    </FormCard>
  );
}
