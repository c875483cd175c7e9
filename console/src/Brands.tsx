import { type FormEvent, useState } from 'react';
import { api, type Brand, type Offer, type Page } from './api.ts';
import { Field, failure, type Outcome, OutcomeLine, SelectField, Status, useLoad } from './ui.tsx';

/** Brands and their offers, edited with the API's field-level validation messages. */
export function BrandsScreen() {
  const brands = useLoad(() => api<Page<Brand>>('GET', '/brands?per_page=100'), '');
  const [brandId, setBrandId] = useState<number | 'new' | null>(null);
  const brand =
    brandId === 'new' ? undefined : (brands.data?.data.find((b) => b.id === brandId) ?? brands.data?.data[0]);
  return (
    <section className="split">
      <div>
        <h1>Brands</h1>
        <Status
          loading={brands.loading}
          error={brands.error}
          empty={brands.data?.data.length === 0 && 'No brands.'}
        >
          <ul className="picklist scroll">
            {brands.data?.data.map((b) => (
              <li key={b.id}>
                <button type="button" aria-pressed={b.id === brand?.id} onClick={() => setBrandId(b.id)}>
                  {b.name}
                </button>
              </li>
            ))}
          </ul>
        </Status>
        <button
          type="button"
          className="new"
          aria-pressed={brandId === 'new'}
          onClick={() => setBrandId('new')}
        >
          New brand
        </button>
      </div>
      {brandId === 'new' && (
        <BrandForm
          onSaved={(b) => {
            setBrandId(b.id);
            brands.reload();
          }}
        />
      )}
      {brand && (
        <div>
          <BrandForm key={brand.id} brand={brand} onSaved={brands.reload} />
          <Offers key={`o${brand.id}`} brandId={brand.id} />
        </div>
      )}
    </section>
  );
}

const BRAND_FIELDS = [
  'externalId',
  'name',
  'slug',
  'rating',
  'logo.backgroundColor',
  'logo.rectangular',
  'logo.square',
];

/** Edits a brand, or creates one when none is given (then the external id is asked too). */
function BrandForm({ brand, onSaved }: { brand?: Brand; onSaved: (b: Brand) => void }) {
  const [f, setF] = useState({
    externalId: '',
    name: brand?.name ?? '',
    slug: brand?.slug ?? '',
    rating: brand ? String(brand.rating) : '',
    backgroundColor: brand?.logo.backgroundColor ?? '',
    rectangular: brand?.logo.rectangular ?? '',
    square: brand?.logo.square ?? '',
  });
  const [outcome, setOutcome] = useState<Outcome>({});
  const set = (k: keyof typeof f) => (v: string) => setF({ ...f, [k]: v });
  const save = async (e: FormEvent) => {
    e.preventDefault();
    const body = {
      name: f.name,
      slug: f.slug,
      rating: f.rating.trim() === '' ? Number.NaN : Number(f.rating),
      logo: { backgroundColor: f.backgroundColor, rectangular: f.rectangular, square: f.square },
    };
    try {
      const r = brand
        ? await api<{ data: Brand }>('PATCH', `/brands/${brand.id}`, body)
        : await api<{ data: Brand }>('POST', '/brands', { externalId: f.externalId, ...body });
      setOutcome({ ok: brand ? 'Brand saved.' : `Brand ${r.data.name} created.` });
      onSaved(r.data);
    } catch (err) {
      setOutcome(failure(err));
    }
  };
  return (
    <form onSubmit={save} aria-labelledby="brand-heading" noValidate>
      <h2 id="brand-heading">{brand ? `Brand: ${brand.name}` : 'New brand'}</h2>
      <div className="grid">
        {!brand && (
          <Field
            id="brand-external-id"
            label="External id"
            value={f.externalId}
            onChange={set('externalId')}
            outcome={outcome}
            field="externalId"
          />
        )}
        <Field
          id="brand-name"
          label="Name"
          value={f.name}
          onChange={set('name')}
          outcome={outcome}
          field="name"
        />
        <Field
          id="brand-slug"
          label="Slug"
          value={f.slug}
          onChange={set('slug')}
          outcome={outcome}
          field="slug"
        />
        <Field
          id="brand-rating"
          label="Rating (0–10)"
          value={f.rating}
          onChange={set('rating')}
          outcome={outcome}
          field="rating"
        />
        <Field
          id="brand-bg"
          label="Logo background colour"
          value={f.backgroundColor}
          onChange={set('backgroundColor')}
          outcome={outcome}
          field="logo.backgroundColor"
        />
        <Field
          id="brand-rect"
          label="Rectangular logo URL"
          value={f.rectangular}
          onChange={set('rectangular')}
          outcome={outcome}
          field="logo.rectangular"
        />
        <Field
          id="brand-square"
          label="Square logo URL"
          value={f.square}
          onChange={set('square')}
          outcome={outcome}
          field="logo.square"
        />
      </div>
      <OutcomeLine outcome={outcome} shown={BRAND_FIELDS} />
      <button type="submit">{brand ? 'Save brand' : 'Create brand'}</button>
    </form>
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
      <Status
        loading={offers.loading}
        error={offers.error}
        empty={offers.data?.data.length === 0 && 'This brand has no offers.'}
      >
        {offers.data?.data.map((o) => (
          <OfferForm key={o.id} offer={o} />
        ))}
      </Status>
      <NewOffer brandId={brandId} onCreated={offers.reload} />
    </div>
  );
}

const OFFER_FIELDS = ['offerText', 'bonusCode', 'bonusWageringRequirement'];

function OfferForm({ offer }: { offer: Offer }) {
  const [f, setF] = useState({
    offerText: offer.offerText,
    bonusCode: offer.bonusCode,
    wagering: String(offer.bonusWageringRequirement),
  });
  const [outcome, setOutcome] = useState<Outcome>({});
  const set = (k: keyof typeof f) => (v: string) => setF({ ...f, [k]: v });
  const save = async (e: FormEvent) => {
    e.preventDefault();
    try {
      await api('PATCH', `/offers/${offer.id}`, {
        offerText: f.offerText,
        bonusCode: f.bonusCode,
        bonusWageringRequirement: Number(f.wagering),
      });
      setOutcome({ ok: 'Offer saved.' });
    } catch (err) {
      setOutcome(failure(err));
    }
  };
  const id = `offer-${offer.id}`;
  return (
    <form onSubmit={save} className="card" aria-label={`Offer ${offer.id}`} noValidate>
      <div className="grid">
        <Field
          id={`${id}-text`}
          label="Offer text"
          value={f.offerText}
          onChange={set('offerText')}
          outcome={outcome}
          field="offerText"
        />
        <Field
          id={`${id}-code`}
          label="Bonus code"
          value={f.bonusCode}
          onChange={set('bonusCode')}
          outcome={outcome}
          field="bonusCode"
        />
        <Field
          id={`${id}-wagering`}
          label="Wagering requirement"
          value={f.wagering}
          onChange={set('wagering')}
          outcome={outcome}
          field="bonusWageringRequirement"
        />
      </div>
      <OutcomeLine outcome={outcome} shown={OFFER_FIELDS} />
      <button type="submit">Save offer {offer.id}</button>
    </form>
  );
}

const NEW_OFFER_FIELDS = ['externalId', 'offerText', 'bonusExpiryDate', 'bonusCode'];

/** A new offer of the brand with the fields an offer needs; the rest is edited through the API or an import. */
function NewOffer({ brandId, onCreated }: { brandId: number; onCreated: () => void }) {
  const types = useLoad(() => api<{ data: { id: number; name: string }[] }>('GET', '/offer-types'), '');
  const [f, setF] = useState({
    externalId: '',
    offerTypeId: '',
    offerText: '',
    bonusExpiryDate: '',
    bonusCode: '',
  });
  const [outcome, setOutcome] = useState<Outcome>({});
  const set = (k: keyof typeof f) => (v: string) => setF({ ...f, [k]: v });
  const typeId = f.offerTypeId || String(types.data?.data[0]?.id ?? '');
  const create = async (e: FormEvent) => {
    e.preventDefault();
    try {
      const { bonusCode, ...required } = f;
      const r = await api<{ data: Offer }>('POST', '/offers', {
        ...required,
        ...(bonusCode ? { bonusCode } : {}),
        brandId,
        offerTypeId: Number(typeId),
      });
      setF({ ...f, externalId: '', offerText: '', bonusCode: '' });
      setOutcome({ ok: `Offer ${r.data.id} created.` });
      onCreated();
    } catch (err) {
      setOutcome(failure(err));
    }
  };
  return (
    <form onSubmit={create} className="card" aria-labelledby="new-offer" noValidate>
      <h3 id="new-offer">New offer</h3>
      <div className="grid">
        <Field
          id="new-offer-external"
          label="External id"
          value={f.externalId}
          onChange={set('externalId')}
          outcome={outcome}
          field="externalId"
        />
        <SelectField
          id="new-offer-type"
          label="Offer type"
          value={typeId}
          onChange={set('offerTypeId')}
          options={(types.data?.data ?? []).map((t) => [t.id, t.name])}
        />
        <Field
          id="new-offer-text"
          label="Offer text"
          value={f.offerText}
          onChange={set('offerText')}
          outcome={outcome}
          field="offerText"
        />
        <Field
          id="new-offer-expiry"
          label="Bonus expiry date"
          type="date"
          value={f.bonusExpiryDate}
          onChange={set('bonusExpiryDate')}
          outcome={outcome}
          field="bonusExpiryDate"
        />
        <Field
          id="new-offer-code"
          label="Bonus code"
          value={f.bonusCode}
          onChange={set('bonusCode')}
          outcome={outcome}
          field="bonusCode"
        />
      </div>
      <OutcomeLine outcome={outcome} shown={NEW_OFFER_FIELDS} />
      <button type="submit">Create offer</button>
    </form>
  );
}
