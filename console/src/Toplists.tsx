import { type KeyboardEvent, useEffect, useState } from 'react';
import {
  api,
  type Brand,
  type Edition,
  type Offer,
  type Page,
  type Template,
  type Toplist,
  type ToplistItem,
} from './api.ts';
import { siteFilter, useSites } from './choices.ts';
import { EditionHistory } from './Editions.tsx';
import { Fields, useAction } from './form.tsx';
import { SearchBox, SearchPicker, useDebounced, useNames, usePagedList } from './lists.tsx';
import { NewToplist, RenameToplist } from './NewToplist.tsx';
import { applyOrder, SuggestedOrder } from './SuggestedOrder.tsx';
import { ToplistSchedule, windowState } from './ToplistSchedule.tsx';
import { ACTIONS, Pager, Table } from './table.tsx';
import { choicesOf, InputField, OutcomeLine, Status, useLoad } from './ui.tsx';

const GEO_TYPES: [string, string][] = [
  ['country', 'Country'],
  ['market', 'Market'],
  ['global', 'Global'],
];

/** Toplists filtered by site, template and geo, and a new one; picking or creating one (or opening `#/toplists/{id}`) opens its draft editor. */
export function ToplistsScreen() {
  const [filter, setFilter] = useState({ site: '', template: '', geoType: '', geoCode: '' });
  const setOf = (k: keyof typeof filter) => (v: string) => setFilter({ ...filter, [k]: v });
  const [openId, setOpenId] = useState<number | null>(() => {
    const linked = /^#\/toplists\/([1-9][0-9]{0,9})$/.exec(window.location.hash);
    return linked ? Number(linked[1]) : null;
  });
  const [creating, setCreating] = useState(false);
  const sites = useSites();
  const templates = useLoad(() => api<Page<Template>>('GET', '/templates?per_page=100'), '');
  const params: Record<string, string> = {};
  if (filter.site) params.site_id = filter.site;
  if (filter.template) params.template_id = filter.template;
  if (filter.geoType) params.geo_type = filter.geoType;
  if (filter.geoCode.trim()) params.geo_code = filter.geoCode.trim().toUpperCase();
  const list = usePagedList<Toplist>('/toplists', { params, perPage: 50 });
  const siteName = sites.domainOf;

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
        <SearchBox id="f-search" label="Search toplists" value={list.q} onChange={list.setQ} />
        <Fields
          specs={[
            siteFilter('f-site', sites),
            {
              key: 'template',
              id: 'f-template',
              label: 'Template',
              all: 'All templates',
              options: choicesOf(templates, (t) => t.name),
            },
            { key: 'geoType', id: 'f-geo-type', label: 'Geo type', all: 'Any', options: GEO_TYPES },
          ]}
          f={filter}
          set={setOf}
        />
        <InputField
          id="f-geo-code"
          label="Geo code"
          value={filter.geoCode}
          maxLength={32}
          placeholder="e.g. DE"
          onChange={setOf('geoCode')}
        />
      </form>
      <Status load={list} empty={list.data?.data.length === 0 && 'No toplists match these filters.'}>
        <p className="muted small">{list.data?.meta.total} toplists</p>
        <Table
          rows={list.data?.data ?? []}
          columns={[
            { head: 'Name', cell: (t) => t.name },
            { head: 'Slug', cell: (t) => <code>{t.slug}</code> },
            { head: 'Site', cell: (t) => siteName(t.siteId) },
            { head: 'Geo', cell: (t) => `${t.geo.type} ${t.geo.code}` },
            {
              head: 'Live',
              cell: (t) => (
                <>
                  <LiveBadge t={t} /> <ScheduleBadge t={t} />
                </>
              ),
            },
            {
              head: ACTIONS,
              cell: (t) => (
                <button
                  type="button"
                  onClick={() => setOpenId(t.id)}
                  aria-label={`Edit ${t.name} (${t.geo.code})`}
                >
                  Edit
                </button>
              ),
            },
          ]}
        />
        <Pager list={list} label="Toplist pages" />
      </Status>
      {creating ? (
        <NewToplist
          onCancel={() => setCreating(false)}
          onCreated={(t) => {
            // The new toplist opens in the editor at its own address.
            window.history.replaceState(null, '', `#/toplists/${t.id}`);
            setCreating(false);
            setOpenId(t.id);
          }}
        />
      ) : (
        <button type="button" className="primary" onClick={() => setCreating(true)}>
          New toplist
        </button>
      )}
    </section>
  );
}

function LiveBadge({ t, prefix = 'v' }: { t: Toplist; prefix?: string }) {
  return t.liveVersion ? (
    <span className="badge">
      {prefix}
      {t.liveVersion}
    </span>
  ) : (
    <span className="badge off">unpublished</span>
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

interface DraftViolation {
  /** Null for an item not saved yet. */
  itemId: number | null;
  position: number;
  brandName: string;
  country: string;
  rule: string;
  reason: string;
}

/**
 * Where the draft's brands, as they stand in the editor (saved or not), may not be advertised in a
 * country the list covers: what publishing them now would refuse (`POST /toplists/{id}/compliance`,
 * nothing written). Asked again a moment after each edit and on every save.
 */
function DraftCompliance({
  toplistId,
  items,
  saves,
  dirty,
}: {
  toplistId: number;
  items: ToplistItem[];
  saves: number;
  dirty: boolean;
}) {
  const proposed = useDebounced(
    JSON.stringify(
      items.map((it) => ({
        ...(it.id === undefined ? {} : { id: it.id }),
        position: it.position,
        brandId: it.brandId,
        offerId: it.offerId,
      })),
    ),
    300,
  );
  const check = useLoad(
    () =>
      api<{ data: { publishable: boolean; violations: DraftViolation[] } }>(
        'POST',
        `/toplists/${toplistId}/compliance`,
        { items: JSON.parse(proposed) },
      ),
    `${toplistId}:${saves}:${proposed}`,
  );
  const found = check.data?.data;
  return (
    <section aria-label="Draft compliance">
      <h2>Compliance</h2>
      <Status load={check}>
        {found &&
          (found.violations.length === 0 ? (
            <p className="muted small" data-testid="draft-compliant">
              {dirty ? 'The draft with your unsaved changes' : 'The saved draft'} may be published: every
              brand may be advertised where the list is shown.
            </p>
          ) : (
            <ul className="violations" data-testid="draft-violations">
              {found.violations.map((v) => (
                <li key={`${v.itemId ?? `p${v.position}`}:${v.country}:${v.rule}`}>
                  <strong>
                    Position {v.position}: {v.brandName}
                  </strong>{' '}
                  may not be advertised in {v.country} — {v.reason} (<code>{v.rule}</code>)
                </li>
              ))}
            </ul>
          ))}
      </Status>
    </section>
  );
}

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
  const editions = useLoad(
    () => api<{ data: Edition[] }>('GET', `/toplists/${id}/editions?per_page=100`),
    String(id),
  );
  const [items, setItems] = useState<ToplistItem[] | null>(null);
  const [offers, setOffers] = useState<Record<number, Offer[]>>({});
  const action = useAction();
  const { setOutcome } = action;
  const [dragFrom, setDragFrom] = useState<number | null>(null);
  const [shownVersion, setShownVersion] = useState<string | null>(null);
  const [dirty, setDirty] = useState(false);
  const [saves, setSaves] = useState(0);

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
  const [picked, setPicked] = useState<Record<number, string>>({});
  const fetched = useNames(
    '/brands',
    (items ?? []).map((i) => i.brandId).filter((b) => !(b in picked)),
    (r) => String(r.name),
  );
  const brandName = (id: number) => picked[id] ?? fetched[id] ?? `brand ${id}`;
  const offersOf = async (brandId: number) => {
    const list =
      offers[brandId] ?? (await api<Page<Offer>>('GET', `/offers?brand_id=${brandId}&per_page=100`)).data;
    setOffers((o) => ({ ...o, [brandId]: list }));
    return list;
  };
  /** Puts a brand (picked by search) at `index`, or adds it at the end, with its first offer. */
  const placeBrand = async (index: number | null, b: Brand) => {
    if (!items) return;
    setPicked((n) => ({ ...n, [b.id]: b.name }));
    const list = await offersOf(b.id);
    if (!list[0]) return setOutcome({ error: `${b.name} has no offer to add` });
    const offerId = list[0].id;
    if (index === null) edit([...items, { position: items.length + 1, brandId: b.id, offerId }]);
    else edit(items.map((it, i) => (i === index ? { ...it, brandId: b.id, offerId } : it)));
  };
  const searchOffers = async (brandId: number, q: string) =>
    (await api<Page<Offer>>('GET', `/offers?brand_id=${brandId}&q=${encodeURIComponent(q)}&per_page=20`))
      .data;
  const offerText = (brandId: number, offerId: number) => {
    const o = offers[brandId]?.find((x) => x.id === offerId);
    return o ? `#${o.id} ${o.offerText.slice(0, 40)}` : `offer #${offerId}`;
  };
  const searchBrands = async (q: string) =>
    (await api<Page<Brand>>('GET', `/brands?q=${encodeURIComponent(q)}&per_page=20`)).data;
  const saveDraft = async (list = items) =>
    list !== null &&
    action.run(async () => {
      const r = await api<{ data: Toplist }>('PUT', `/toplists/${id}/items`, {
        // The item id, deal id and lock travel back unchanged so the wire item keeps its identity.
        items: list.map((it) => ({
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
      setSaves((n) => n + 1);
      return 'Draft saved.';
    });
  const publish = async () => {
    if (dirty && !(await saveDraft())) return;
    await action.run(async () => {
      const r = await api<{ data: { version: number } }>('POST', `/toplists/${id}/publish`, {});
      toplist.reload();
      editions.reload();
      setShownVersion(String(r.data.version));
      return `Published version ${r.data.version}.`;
    });
  };
  const unpublish = () => {
    if (!window.confirm('Unpublish this toplist? Sites stop receiving it.')) return;
    void action.run(async () => {
      await api('POST', `/toplists/${id}/unpublish`);
      toplist.reload();
      return 'Unpublished.';
    });
  };

  const t = toplist.data?.data;
  return (
    <section>
      <button type="button" onClick={onClose}>
        ← All toplists
      </button>
      <Status load={toplist}>
        {t && (
          <>
            <h1>{t.name}</h1>
            <p className="muted">
              <code>{t.slug}</code> · {siteName(t.siteId)} · {t.geo.type} {t.geo.code} ·{' '}
              <LiveBadge t={t} prefix="live v" />
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
                    const name = brandName(it.brandId);
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
                          aria-label={`Position ${i + 1}: ${name}. Move with arrow keys`}
                          onKeyDown={onHandleKey(i)}
                        >
                          ⇅
                        </button>
                        <span className="pos">{i + 1}</span>
                        <SearchPicker
                          id={`brand-${i}`}
                          label={`Brand at position ${i + 1}`}
                          current={name}
                          search={searchBrands}
                          optionText={(b) => b.name}
                          optionKey={(b) => b.id}
                          onPick={(b) => placeBrand(i, b)}
                        />
                        <SearchPicker
                          id={`offer-${i}`}
                          label={`Offer at position ${i + 1}`}
                          current={offerText(it.brandId, it.offerId)}
                          search={(q) => searchOffers(it.brandId, q)}
                          optionText={(o) => `#${o.id} ${o.offerText.slice(0, 40)}`}
                          optionKey={(o) => o.id}
                          onPick={(o) => {
                            setOffers((all) => ({ ...all, [o.brandId]: [o, ...(all[o.brandId] ?? [])] }));
                            edit(items.map((x, j) => (j === i ? { ...x, offerId: o.id } : x)));
                          }}
                        />
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
                {!t.locked && (
                  <SearchPicker
                    id="add-brand"
                    label="Add a brand"
                    current="Add a brand:"
                    search={searchBrands}
                    optionText={(b) => b.name}
                    optionKey={(b) => b.id}
                    onPick={(b) => placeBrand(null, b)}
                  />
                )}
                <div className="row">
                  <button type="button" onClick={() => saveDraft()} disabled={!dirty}>
                    Save draft
                  </button>
                  <button type="button" className="primary" onClick={publish}>
                    Publish
                  </button>
                  <button type="button" onClick={unpublish} disabled={!t.liveVersion}>
                    Unpublish
                  </button>
                </div>
                <OutcomeLine outcome={action.outcome} />
                {items && <DraftCompliance toplistId={id} items={items} saves={saves} dirty={dirty} />}
              </div>
              <div>
                <SuggestedOrder
                  toplistId={id}
                  onApply={async (order) => {
                    if (!items) return;
                    const next = applyOrder(items, order).map((it, i) => ({ ...it, position: i + 1 }));
                    setItems(next);
                    if (await saveDraft(next))
                      setOutcome({ ok: 'Suggested order written to the draft (not published).' });
                  }}
                />
                <ToplistSchedule toplist={t} onSaved={toplist.reload} />
                <RenameToplist key={`${t.name}|${t.slug}`} toplist={t} onSaved={toplist.reload} />
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
