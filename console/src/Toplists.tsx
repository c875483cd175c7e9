import { type KeyboardEvent, useEffect, useState } from 'react';
import {
  api,
  type Brand,
  type Edition,
  type Offer,
  type Page,
  type Site,
  type Template,
  type Toplist,
  type ToplistItem,
} from './api.ts';
import { EditionHistory } from './Editions.tsx';
import { ToplistSchedule, windowState } from './ToplistSchedule.tsx';
import { failure, type Outcome, OutcomeLine, SelectField, Status, useLoad } from './ui.tsx';

/** Toplists filtered by site, template and geo; picking one opens its draft editor. */
export function ToplistsScreen() {
  const [filter, setFilter] = useState({ site: '', template: '', geoType: '', geoCode: '' });
  const [openId, setOpenId] = useState<number | null>(null);
  const sites = useLoad(() => api<Page<Site>>('GET', '/sites?per_page=100'), '');
  const templates = useLoad(() => api<Page<Template>>('GET', '/templates?per_page=100'), '');
  const query = new URLSearchParams({ per_page: '100' });
  if (filter.site) query.set('site_id', filter.site);
  if (filter.template) query.set('template_id', filter.template);
  if (filter.geoType) query.set('geo_type', filter.geoType);
  if (filter.geoCode.trim()) query.set('geo_code', filter.geoCode.trim().toUpperCase());
  const qs = query.toString();
  const list = useLoad(() => api<Page<Toplist>>('GET', `/toplists?${qs}`), qs);
  const siteName = (id: number) => sites.data?.data.find((s) => s.id === id)?.domain ?? `site ${id}`;

  if (openId !== null) {
    return (
      <ToplistEditor
        id={openId}
        onClose={() => {
          setOpenId(null);
          list.reload();
        }}
        siteName={siteName}
      />
    );
  }
  return (
    <section>
      <h1>Toplists</h1>
      <form className="row" aria-label="Filter toplists" onSubmit={(e) => e.preventDefault()}>
        <SelectField
          id="f-site"
          label="Site"
          all="All sites"
          value={filter.site}
          onChange={(v) => setFilter({ ...filter, site: v })}
          options={(sites.data?.data ?? []).map((s) => [s.id, s.domain])}
        />
        <SelectField
          id="f-template"
          label="Template"
          all="All templates"
          value={filter.template}
          onChange={(v) => setFilter({ ...filter, template: v })}
          options={(templates.data?.data ?? []).map((t) => [t.id, t.name])}
        />
        <SelectField
          id="f-geo-type"
          label="Geo type"
          all="Any"
          value={filter.geoType}
          onChange={(v) => setFilter({ ...filter, geoType: v })}
          options={[
            ['country', 'Country'],
            ['market', 'Market'],
            ['global', 'Global'],
          ]}
        />
        <div className="field">
          <label htmlFor="f-geo-code">Geo code</label>
          <input
            id="f-geo-code"
            value={filter.geoCode}
            maxLength={32}
            placeholder="e.g. DE"
            onChange={(e) => setFilter({ ...filter, geoCode: e.target.value })}
          />
        </div>
      </form>
      <Status
        loading={list.loading}
        error={list.error}
        empty={list.data?.data.length === 0 && 'No toplists match these filters.'}
      >
        <p className="muted small">
          {list.data?.meta.total} toplists
          {(list.data?.meta.total ?? 0) > 100 ? ' (first 100 shown; narrow the filters)' : ''}
        </p>
        <div className="table-wrap">
          <table>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Slug</th>
                <th scope="col">Site</th>
                <th scope="col">Geo</th>
                <th scope="col">Live</th>
                <th scope="col">
                  <span className="sr-only">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {list.data?.data.map((t) => (
                <tr key={t.id}>
                  <td>{t.name}</td>
                  <td>
                    <code>{t.slug}</code>
                  </td>
                  <td>{siteName(t.siteId)}</td>
                  <td>
                    {t.geo.type} {t.geo.code}
                  </td>
                  <td>
                    {t.liveVersion ? (
                      <span className="badge">v{t.liveVersion}</span>
                    ) : (
                      <span className="badge off">unpublished</span>
                    )}{' '}
                    <ScheduleBadge t={t} />
                  </td>
                  <td>
                    <button
                      type="button"
                      onClick={() => setOpenId(t.id)}
                      aria-label={`Edit ${t.name} (${t.geo.code})`}
                    >
                      Edit
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </Status>
    </section>
  );
}

function ScheduleBadge({ t }: { t: Toplist }) {
  const state = windowState(t);
  if (state === 'before') return <span className="badge off">scheduled</span>;
  if (state === 'after') return <span className="badge off">window ended</span>;
  return null;
}

const move = <T,>(list: T[], from: number, to: number): T[] => {
  if (to < 0 || to >= list.length || from === to) return list;
  const next = [...list];
  const [it] = next.splice(from, 1);
  next.splice(to, 0, it as T);
  return next;
};

/** One toplist's draft: items (add, remove, reorder by drag or keyboard, brand/offer), publish, editions, JSON preview. */
function ToplistEditor({
  id,
  onClose,
  siteName,
}: {
  id: number;
  onClose: () => void;
  siteName: (id: number) => string;
}) {
  const toplist = useLoad(() => api<{ data: Toplist }>('GET', `/toplists/${id}`), String(id));
  const brands = useLoad(() => api<Page<Brand>>('GET', '/brands?per_page=100'), '');
  const editions = useLoad(() => api<{ data: Edition[] }>('GET', `/toplists/${id}/editions`), String(id));
  const [items, setItems] = useState<ToplistItem[] | null>(null);
  const [offers, setOffers] = useState<Record<number, Offer[]>>({});
  const [outcome, setOutcome] = useState<Outcome>({});
  const [dragFrom, setDragFrom] = useState<number | null>(null);
  const [shownVersion, setShownVersion] = useState<string | null>(null);
  const [dirty, setDirty] = useState(false);

  useEffect(() => {
    if (toplist.data && items === null) setItems(toplist.data.data.items);
  }, [toplist.data, items]);
  const needed = [...new Set((items ?? []).map((i) => i.brandId))].filter((b) => !offers[b]).join(',');
  useEffect(() => {
    for (const b of needed ? needed.split(',').map(Number) : []) {
      api<Page<Offer>>('GET', `/offers?brand_id=${b}&per_page=100`).then(
        (r) => setOffers((o) => ({ ...o, [b]: r.data })),
        () => setOffers((o) => ({ ...o, [b]: [] })),
      );
    }
  }, [needed]);

  const edit = (next: ToplistItem[]) => {
    setItems(next.map((it, i) => ({ ...it, position: i + 1 })));
    setDirty(true);
    setOutcome({});
  };
  const focusRow = (index: number) =>
    requestAnimationFrame(() => document.querySelector<HTMLElement>(`[data-handle="${index}"]`)?.focus());
  const onHandleKey = (index: number) => (e: KeyboardEvent) => {
    if (!items) return;
    const to = e.key === 'ArrowUp' ? index - 1 : e.key === 'ArrowDown' ? index + 1 : null;
    if (to === null || to < 0 || to >= items.length) return;
    e.preventDefault();
    edit(move(items, index, to));
    focusRow(to);
  };
  const firstBrand = brands.data?.data[0];
  const addItem = async () => {
    if (!items || !firstBrand) return;
    const list =
      offers[firstBrand.id] ??
      (await api<Page<Offer>>('GET', `/offers?brand_id=${firstBrand.id}&per_page=100`)).data;
    setOffers((o) => ({ ...o, [firstBrand.id]: list }));
    if (!list[0]) return setOutcome({ error: `${firstBrand.name} has no offer to add` });
    edit([...items, { position: items.length + 1, brandId: firstBrand.id, offerId: list[0].id }]);
  };
  const pickBrand = async (index: number, brandId: number) => {
    if (!items) return;
    const list =
      offers[brandId] ?? (await api<Page<Offer>>('GET', `/offers?brand_id=${brandId}&per_page=100`)).data;
    setOffers((o) => ({ ...o, [brandId]: list }));
    edit(items.map((it, i) => (i === index ? { ...it, brandId, offerId: list[0]?.id ?? 0 } : it)));
  };
  const saveDraft = async () => {
    if (!items) return false;
    try {
      const r = await api<{ data: Toplist }>('PUT', `/toplists/${id}/items`, {
        // The item id, deal id and lock travel back unchanged so the wire item keeps its identity.
        items: items.map((it) => ({
          ...(it.id === undefined ? {} : { id: it.id }),
          position: it.position,
          brandId: it.brandId,
          offerId: it.offerId,
          ...(it.dealId === undefined ? {} : { dealId: it.dealId }),
          ...(it.isLocked === undefined ? {} : { isLocked: it.isLocked }),
        })),
      });
      setItems(r.data.items);
      setDirty(false);
      setOutcome({ ok: 'Draft saved.' });
      return true;
    } catch (err) {
      setOutcome(failure(err));
      return false;
    }
  };
  const publish = async () => {
    if (dirty && !(await saveDraft())) return;
    try {
      const r = await api<{ data: { version: number } }>('POST', `/toplists/${id}/publish`, {});
      setOutcome({ ok: `Published version ${r.data.version}.` });
      toplist.reload();
      editions.reload();
      setShownVersion(String(r.data.version));
    } catch (err) {
      setOutcome(failure(err));
    }
  };
  const unpublish = async () => {
    if (!window.confirm('Unpublish this toplist? Sites stop receiving it.')) return;
    try {
      await api('POST', `/toplists/${id}/unpublish`);
      setOutcome({ ok: 'Unpublished.' });
      toplist.reload();
    } catch (err) {
      setOutcome(failure(err));
    }
  };

  const t = toplist.data?.data;
  return (
    <section>
      <button type="button" onClick={onClose}>
        ← All toplists
      </button>
      <Status loading={toplist.loading && !t} error={toplist.error}>
        {t && (
          <>
            <h1>{t.name}</h1>
            <p className="muted">
              <code>{t.slug}</code> · {siteName(t.siteId)} · {t.geo.type} {t.geo.code} ·{' '}
              {t.liveVersion ? (
                <span className="badge">live v{t.liveVersion}</span>
              ) : (
                <span className="badge off">unpublished</span>
              )}
              {dirty && <span className="badge off"> unsaved changes</span>}
            </p>
            <div className="split editor">
              <div>
                <h2 id="items-heading">Draft items</h2>
                <p className="muted small" id="reorder-help">
                  Drag a row, or focus its handle (⇅) and press ↑ / ↓ to move it.
                </p>
                {items && items.length === 0 && <p className="muted">No items in the draft yet.</p>}
                <ol className="items" aria-labelledby="items-heading">
                  {items?.map((it, i) => {
                    const brandName =
                      brands.data?.data.find((b) => b.id === it.brandId)?.name ?? `brand ${it.brandId}`;
                    return (
                      <li
                        key={`${it.position}-${it.brandId}-${it.offerId}`}
                        draggable
                        onDragStart={() => setDragFrom(i)}
                        onDragOver={(e) => e.preventDefault()}
                        onDrop={() => {
                          if (dragFrom !== null) edit(move(items, dragFrom, i));
                          setDragFrom(null);
                        }}
                        className={dragFrom === i ? 'dragging' : undefined}
                      >
                        <button
                          type="button"
                          data-handle={i}
                          aria-describedby="reorder-help"
                          aria-label={`Position ${i + 1}: ${brandName}. Move with arrow keys`}
                          onKeyDown={onHandleKey(i)}
                        >
                          ⇅
                        </button>
                        <span className="pos">{i + 1}</span>
                        <label className="sr-only" htmlFor={`brand-${i}`}>
                          Brand at position {i + 1}
                        </label>
                        <select
                          id={`brand-${i}`}
                          value={it.brandId}
                          onChange={(e) => pickBrand(i, Number(e.target.value))}
                        >
                          {brands.data?.data.map((b) => (
                            <option key={b.id} value={b.id}>
                              {b.name}
                            </option>
                          ))}
                        </select>
                        <label className="sr-only" htmlFor={`offer-${i}`}>
                          Offer at position {i + 1}
                        </label>
                        <select
                          id={`offer-${i}`}
                          value={it.offerId}
                          onChange={(e) =>
                            edit(
                              items.map((x, j) => (j === i ? { ...x, offerId: Number(e.target.value) } : x)),
                            )
                          }
                        >
                          {(offers[it.brandId] ?? []).map((o) => (
                            <option key={o.id} value={o.id}>
                              #{o.id} {o.offerText.slice(0, 40)}
                            </option>
                          ))}
                        </select>
                        <button
                          type="button"
                          onClick={() => edit(move(items, i, i - 1))}
                          disabled={i === 0}
                          aria-label={`Move position ${i + 1} up`}
                        >
                          ↑
                        </button>
                        <button
                          type="button"
                          onClick={() => edit(move(items, i, i + 1))}
                          disabled={i === items.length - 1}
                          aria-label={`Move position ${i + 1} down`}
                        >
                          ↓
                        </button>
                        <button
                          type="button"
                          onClick={() => edit(items.filter((_, j) => j !== i))}
                          aria-label={`Remove position ${i + 1}`}
                        >
                          Remove
                        </button>
                      </li>
                    );
                  })}
                </ol>
                <div className="row">
                  <button type="button" onClick={addItem} disabled={!firstBrand || t.locked}>
                    Add item
                  </button>
                  <button type="button" onClick={saveDraft} disabled={!dirty}>
                    Save draft
                  </button>
                  <button type="button" className="primary" onClick={publish}>
                    Publish
                  </button>
                  <button type="button" onClick={unpublish} disabled={!t.liveVersion}>
                    Unpublish
                  </button>
                </div>
                <OutcomeLine outcome={outcome} />
              </div>
              <div>
                <ToplistSchedule toplist={t} onSaved={toplist.reload} />
                <EditionHistory
                  toplistId={id}
                  editions={editions.data?.data}
                  loading={editions.loading}
                  error={editions.error}
                  shown={shownVersion}
                  onShow={setShownVersion}
                />
              </div>
            </div>
          </>
        )}
      </Status>
    </section>
  );
}
