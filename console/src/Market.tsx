import { type FormEvent, useState } from 'react';
import {
  ApiError,
  type Availability,
  api,
  type Connection,
  type Placement,
  type Product,
  type Statement,
  type StatementListed,
} from './api.ts';
import { useAction } from './form.tsx';
import { formatMoney } from './money.ts';
import { ACTIONS, LoadedTable, Table } from './table.tsx';
import { Field, type Outcome, OutcomeLine, SelectField, Status, useLoad } from './ui.tsx';

/** Products the calendar loads at once when "all products" is chosen (one request each). */
const CALENDAR_PRODUCTS = 12;

const when = (iso: string) => iso.replace('T', ' ').slice(0, 16);
const count = (n: number | null) => (n === null ? '—' : n.toLocaleString('en'));
const priceText = (p: Pick<Product, 'pricing' | 'price' | 'currency'>) =>
  `${formatMoney(p.price, p.currency)} ${p.pricing === 'cpm' ? 'CPM' : 'per month'}`;

const PRICINGS: [string, string][] = [
  ['cpm', 'CPM (per 1000 impressions)'],
  ['flat', 'Flat monthly fee'],
];

/** The text fields of a new product, by the API field each one fills. */
const PRODUCT_FIELDS = [
  ['name', 'Name'],
  ['geos', 'Geos (comma list, e.g. DE, SE)'],
  ['first_month', 'First month (YYYY-MM)'],
  ['last_month', 'Last month (YYYY-MM)'],
] as const;

/** A disabled button's reason, for people (title) and for screen readers (aria-description). */
const whyDisabled = (why: string | null) =>
  why ? { disabled: true, title: why, 'aria-description': why } : { disabled: false };

/** Products and prices: every product on sale, a form to offer a mapped placement, and price edits. */
export function ProductsScreen() {
  const list = useLoad(() => api<{ data: Product[] }>('GET', '/market/products'), 'products');
  const [editing, setEditing] = useState<string | null>(null);
  // The form closes on save: its success line shows here.
  const [saved, setSaved] = useState<Outcome>({});
  return (
    <section>
      <h1>Products and prices</h1>
      <OutcomeLine outcome={saved} />
      <LoadedTable
        load={list}
        empty="No products yet: offer a mapped placement below."
        testId="products"
        columns={[
          {
            head: 'Product',
            rowHeader: true,
            cell: (p) => <strong>{p.name}</strong>,
            sub: (p) => `${p.publisher} · ${p.inventory_id} · ${p.sizes.join(', ')}`,
          },
          { head: 'Geos', cell: (p) => p.geos.join(', ') },
          { head: 'Months', cell: (p) => `${p.first_month} to ${p.last_month}` },
          { head: 'Price', num: true, cell: (p) => priceText(p) },
          {
            head: 'Status',
            cell: (p) => <span className={`badge ${p.status === 'active' ? '' : 'off'}`}>{p.status}</span>,
          },
          {
            head: ACTIONS,
            cell: (p) => (
              <button
                type="button"
                aria-expanded={editing === p.id}
                aria-label={`Edit price of ${p.name}`}
                onClick={() => setEditing(editing === p.id ? null : p.id)}
              >
                Edit price
              </button>
            ),
          },
        ]}
        expanded={(p) =>
          editing === p.id ? (
            <PriceForm
              product={p}
              onSaved={(ok) => {
                setEditing(null);
                setSaved({ ok });
                list.reload();
              }}
            />
          ) : null
        }
      />
      <NewProduct onCreated={list.reload} />
    </section>
  );
}

/** Changes a product's pricing and price (exact decimal text, as the API takes it). */
function PriceForm({ product, onSaved }: { product: Product; onSaved: (note: string) => void }) {
  const [pricing, setPricing] = useState<string>(product.pricing);
  const [price, setPrice] = useState(product.price.replace(/(\.\d\d)0+$/, '$1'));
  const action = useAction();
  const submit = (e: FormEvent) => {
    e.preventDefault();
    void action.run(async () => {
      const res = await api<{ data: Product }>('PATCH', `/market/products/${product.id}`, { pricing, price });
      onSaved(`Price of ${res.data.name}: ${priceText(res.data)}.`);
      return undefined;
    });
  };
  return (
    <form className="row" onSubmit={submit} aria-label={`Price of ${product.name}`}>
      <SelectField
        id={`pricing-${product.id}`}
        label="Pricing"
        value={pricing}
        onChange={setPricing}
        options={PRICINGS}
      />
      <Field
        id={`price-${product.id}`}
        label={`Price (${product.currency})`}
        value={price}
        onChange={setPrice}
        outcome={action.outcome}
        field="price"
        required
      />
      <button type="submit" className="primary" {...whyDisabled(action.busy ? 'Saving…' : null)}>
        Save price
      </button>
      <OutcomeLine outcome={action.outcome} shown={['price', 'pricing']} />
    </form>
  );
}

/** Offers a placement mapped on a verified connection as a product. */
function NewProduct({ onCreated }: { onCreated: () => void }) {
  const conns = useLoad(() => api<{ data: Connection[] }>('GET', '/adserver/connections'), 'connections');
  const places = useLoad(() => api<{ data: Placement[] }>('GET', '/adserver/placements'), 'placements');
  const verified = (conns.data?.data ?? []).filter((c) => c.currency);
  const [connection, setConnection] = useState('');
  const conn = verified.find((c) => c.id === connection) ?? verified[0];
  const mapped = (places.data?.data ?? []).filter((p) => conn && p.slots[conn.id]);
  const [placement, setPlacement] = useState('');
  const place = mapped.find((p) => String(p.id) === placement) ?? mapped[0];
  const [v, setV] = useState({ name: '', geos: '', first_month: '', last_month: '', price: '' });
  const [pricing, setPricing] = useState('cpm');
  const set = (k: keyof typeof v) => (value: string) => setV((old) => ({ ...old, [k]: value }));
  const action = useAction();
  const why = !conn
    ? 'No verified ad-server connection: connect one under Ad servers first.'
    : !place
      ? 'No placement is mapped to a slot of this connection: map one under Ad servers.'
      : action.busy
        ? 'Saving…'
        : null;
  const submit = (e: FormEvent) => {
    e.preventDefault();
    if (!conn || !place) return;
    void action.run(async () => {
      const res = await api<{ data: Product }>('POST', '/market/products', {
        connection_id: conn.id,
        placement_id: place.id,
        name: v.name,
        geos: v.geos
          .split(',')
          .map((g) => g.trim().toUpperCase())
          .filter(Boolean),
        first_month: v.first_month,
        last_month: v.last_month,
        pricing,
        price: v.price,
      });
      onCreated();
      return `Product ${res.data.name} is on sale at ${priceText(res.data)}.`;
    });
  };
  return (
    <form className="card" onSubmit={submit} aria-labelledby="new-product">
      <h2 id="new-product">New product</h2>
      <Status load={conns}>
        <div className="row">
          <SelectField
            id="product-connection"
            label="Connection"
            value={conn?.id ?? ''}
            onChange={setConnection}
            options={verified.map((c) => [c.id, `${c.publisher} (${c.environment}, ${c.currency})`])}
          />
          <SelectField
            id="product-placement"
            label="Placement"
            value={place ? String(place.id) : ''}
            onChange={setPlacement}
            options={mapped.map((p) => [p.id, `${p.name} → ${conn ? p.slots[conn.id] : ''}`])}
          />
        </div>
        <div className="row">
          {PRODUCT_FIELDS.map(([key, label]) => (
            <Field
              key={key}
              id={`product-${key}`}
              label={label}
              value={v[key]}
              onChange={set(key)}
              outcome={action.outcome}
              field={key}
              required
            />
          ))}
          <SelectField
            id="product-pricing"
            label="Pricing"
            value={pricing}
            onChange={setPricing}
            options={PRICINGS}
          />
          <Field
            id="product-price"
            label={`Price${conn ? ` (${conn.currency})` : ''}`}
            value={v.price}
            onChange={set('price')}
            outcome={action.outcome}
            field="price"
            required
          />
        </div>
        <button type="submit" className="primary" {...whyDisabled(why)}>
          Offer product
        </button>
        {why && !action.busy && <p className="muted">{why}</p>}
        <OutcomeLine
          outcome={action.outcome}
          shown={['name', 'geos', 'first_month', 'last_month', 'price']}
        />
      </Status>
    </form>
  );
}

/** One cell of the calendar: available / held / booked, what remains, and whether the lines are at risk. */
function Cell({ a }: { a: Availability | undefined }) {
  if (!a) return <span className="muted">not offered</span>;
  if (a.source === 'pending') return <span className="muted">not fetched yet</span>;
  return (
    <div
      data-cell={`${a.geo} ${a.month}`}
      className={a.at_risk ? 'at-risk' : undefined}
      title={a.last_error ? `Last fetch failed: ${a.last_error}` : undefined}
    >
      <div>
        {a.source === 'none' ? 'no forecast: no limit' : `${count(a.available)} available`}
        {a.source === 'listed' && ' (listed)'}
      </div>
      <div className="muted small">
        {count(a.held)} held · {count(a.booked)} booked
      </div>
      {a.remaining !== null && <div>{count(a.remaining)} left</div>}
      {a.at_risk && <span className="badge off">at risk</span>}
    </div>
  );
}

/** The availability calendar: product × geo rows, month columns, each cell with its figure, holds and bookings. */
export function CalendarScreen() {
  const products = useLoad(() => api<{ data: Product[] }>('GET', '/market/products'), 'products');
  const all = (products.data?.data ?? []).filter((p) => p.status === 'active');
  const [chosen, setChosen] = useState('');
  const shown = chosen ? all.filter((p) => p.id === chosen) : all.slice(0, CALENDAR_PRODUCTS);
  const cells = useLoad(
    async () =>
      new Map(
        await Promise.all(
          shown.map(
            async (p) =>
              [
                p.id,
                (await api<{ data: Availability[] }>('GET', `/market/products/${p.id}/availability`)).data,
              ] as const,
          ),
        ),
      ),
    shown.map((p) => p.id).join(','),
  );
  const byProduct = cells.data ?? new Map<string, Availability[]>();
  const months = [...new Set([...byProduct.values()].flat().map((a) => a.month))].sort();
  const rows = shown.flatMap((p) => p.geos.map((geo) => ({ p, geo, id: `${p.id}:${geo}` })));
  const at = (r: (typeof rows)[number], month: string) =>
    byProduct.get(r.p.id)?.find((a) => a.geo === r.geo && a.month === month);
  return (
    <section>
      <h1>Availability calendar</h1>
      <p className="muted">
        Per product, geo and month: the ad server's forecast (or the listed figure), what reservations hold
        and what is booked. A cell whose holds and bookings exceed its figure is at risk: nothing is cut.
      </p>
      <SelectField
        id="calendar-product"
        label="Product"
        value={chosen}
        onChange={setChosen}
        options={all.map((p) => [p.id, p.name])}
        all={all.length > CALENDAR_PRODUCTS ? `The first ${CALENDAR_PRODUCTS} products` : 'All products'}
      />
      <Status load={products} empty={all.length ? false : 'No products on sale.'}>
        <Status load={cells}>
          <Table
            testId="calendar"
            label="Availability by product, geo and month"
            className="calendar"
            rows={rows}
            columns={[
              { head: 'Product · geo', rowHeader: true, cell: (r) => r.p.name, sub: (r) => r.geo },
              ...months.map((m) => ({ head: m, cell: (r: (typeof rows)[number]) => <Cell a={at(r, m)} /> })),
            ]}
          />
        </Status>
      </Status>
    </section>
  );
}

/** The statement's CSV, fetched with the session and handed to the browser as a download. */
async function downloadCsv(id: string): Promise<string> {
  const res = await fetch(`/api/admin/v1/market/statements/${id}/csv`, { credentials: 'same-origin' });
  if (!res.ok) {
    const body = await res.json().catch(() => ({}));
    throw new ApiError(res.status, body.code ?? 'error', body.message ?? res.statusText);
  }
  const name = /filename="([^"]+)"/.exec(res.headers.get('content-disposition') ?? '')?.[1] ?? `${id}.csv`;
  const url = URL.createObjectURL(await res.blob());
  const a = document.createElement('a');
  a.href = url;
  a.download = name;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
  return name;
}

/** Statements: every issued statement, one opened with its lines and adjustments, CSV and a printable view. */
export function StatementsScreen() {
  const list = useLoad(() => api<{ data: StatementListed[] }>('GET', '/market/statements'), 'statements');
  const [openId, setOpenId] = useState<string | null>(null);
  const rows = list.data?.data ?? [];
  const currentId = openId ?? rows[0]?.id;
  return (
    <section>
      <h1>Statements</h1>
      <PullNow />
      <LoadedTable
        load={list}
        empty="No statement issued yet: a booked reservation's month gets one once it is over (Reservations)."
        testId="statements"
        rowProps={(s) => ({ 'aria-current': s.id === currentId })}
        columns={[
          {
            head: 'Campaign',
            rowHeader: true,
            cell: (s) => <strong>{s.campaign_name}</strong>,
            sub: (s) => s.advertiser_name,
          },
          { head: 'Month', cell: (s) => s.month },
          { head: 'Total', num: true, cell: (s) => formatMoney(s.total, s.currency) },
          {
            head: 'With adjustments',
            num: true,
            cell: (s) => formatMoney(s.adjusted_total, s.currency),
            sub: (s) => (Number(s.adjustments_total) ? `${s.adjustments_total} adjusted` : undefined),
          },
          { head: 'Issued', cell: (s) => when(s.issued_at), sub: (s) => s.issued_by },
          {
            head: ACTIONS,
            cell: (s) => (
              <button
                type="button"
                aria-pressed={s.id === currentId}
                aria-label={`Open statement ${s.campaign_name} ${s.month}`}
                onClick={() => setOpenId(s.id)}
              >
                Open
              </button>
            ),
          },
        ]}
      />
      {currentId && <StatementDetail key={currentId} id={currentId} />}
    </section>
  );
}

/** Pulls a connection's delivery now (the job does it on schedule): issued statements then reconcile against it. */
function PullNow() {
  const conns = useLoad(() => api<{ data: Connection[] }>('GET', '/adserver/connections'), 'connections');
  const list = conns.data?.data ?? [];
  const [chosen, setChosen] = useState('');
  const conn = list.find((c) => c.id === chosen) ?? list[0];
  const action = useAction();
  const why = !conn
    ? 'No ad-server connection: connect one under Ad servers first.'
    : action.busy
      ? 'A pull is under way.'
      : null;
  const pull = () =>
    void action.run(async () => {
      const res = await api<{
        data: {
          state: string;
          date_from: string | null;
          date_to: string | null;
          matched: number;
          error: string | null;
        };
      }>('POST', `/adserver/connections/${conn!.id}/reports/pull`);
      const r = res.data;
      if (r.state !== 'ok') throw new Error(`The pull failed: ${r.error ?? r.state}`);
      return r.date_from
        ? `Pulled ${r.matched} delivery rows of ${r.date_from} to ${r.date_to} from ${conn!.publisher}.`
        : `Nothing to pull from ${conn!.publisher}: no pushed line has ended days yet.`;
    });
  return (
    <section className="row card" aria-label="Delivery figures">
      <SelectField
        id="pull-connection"
        label="Ad server"
        value={conn?.id ?? ''}
        onChange={setChosen}
        options={list.map((c) => [c.id, `${c.publisher} (${c.environment})`])}
      />
      <button type="button" {...whyDisabled(why)} onClick={pull}>
        Pull delivery now
      </button>
      <OutcomeLine outcome={action.outcome} />
    </section>
  );
}

/** One statement as a document: what the printable view prints. */
function StatementDocument({ s }: { s: Statement }) {
  return (
    <article className="statement" data-testid="statement">
      <h2 id="statement-title">Statement {s.month}</h2>
      <p>
        <code>{s.id}</code> · advertiser <code>{s.advertiser_id}</code> · reservation{' '}
        <code>{s.reservation_id}</code> · issued {when(s.issued_at)} by {s.issued_by} · {s.currency}
      </p>
      <Table
        testId="statement-lines"
        rows={s.lines}
        rowKey={(l) => l.line_no}
        columns={[
          { head: 'Line', rowHeader: true, cell: (l) => l.line_no, sub: (l) => l.line_item_id ?? undefined },
          { head: 'Geo', cell: (l) => l.geo },
          {
            head: 'Price',
            num: true,
            cell: (l) => formatMoney(l.price, s.currency),
            sub: (l) => (l.pricing === 'cpm' ? 'CPM' : 'per month'),
          },
          { head: 'Impressions', num: true, cell: (l) => count(l.impressions) },
          { head: 'Clicks', num: true, cell: (l) => count(l.clicks) },
          { head: 'Days ran', num: true, cell: (l) => `${l.days_ran} / ${l.days_in_month}` },
          { head: 'Amount', num: true, cell: (l) => formatMoney(l.amount, s.currency) },
        ]}
      />
      <p className="num">
        Total as issued: <strong data-testid="statement-total">{formatMoney(s.total, s.currency)}</strong>
      </p>
      {s.adjustments.length > 0 && (
        <>
          <h3>Adjustments</h3>
          <Table
            testId="statement-adjustments"
            rows={s.adjustments.map((a, n) => ({ ...a, n }))}
            rowKey={(a) => a.n}
            columns={[
              { head: 'When', rowHeader: true, cell: (a) => when(a.at) },
              { head: 'Line', cell: (a) => a.line_no, sub: (a) => a.reason },
              { head: 'Impressions', num: true, cell: (a) => count(a.impressions_delta) },
              { head: 'Amount', num: true, cell: (a) => formatMoney(a.amount_delta, s.currency) },
            ]}
          />
          <p className="num">
            Total with adjustments: <strong>{formatMoney(s.adjusted_total, s.currency)}</strong>
          </p>
        </>
      )}
      <p className="muted small">
        CPM lines: price × impressions / 1000; flat lines: the monthly fee × the days the line ran / the days
        of the month. Figures are the ad server's; the statement is frozen once issued and later changes are
        adjustments.
      </p>
    </article>
  );
}

/** An opened statement: the document, Download CSV and the printable view. */
function StatementDetail({ id }: { id: string }) {
  const load = useLoad(() => api<{ data: Statement }>('GET', `/market/statements/${id}`), id);
  const action = useAction();
  const s = load.data?.data;
  return (
    <section aria-labelledby="statement-title" className="detail">
      <Status load={load}>
        {s && (
          <>
            <div className="row no-print">
              <button
                type="button"
                {...whyDisabled(action.busy ? 'The download is under way.' : null)}
                onClick={() => void action.run(async () => `Downloaded ${await downloadCsv(id)}.`)}
              >
                Download CSV
              </button>
              <a className="button" href={`#/statements/print/${id}`}>
                Printable view
              </a>
            </div>
            <OutcomeLine outcome={action.outcome} />
            <StatementDocument s={s} />
          </>
        )}
      </Status>
    </section>
  );
}

/** The printable statement (`#/statements/print/<id>`): the document alone, and Print. */
export function PrintableStatementScreen() {
  const id = window.location.hash.split('/')[3] ?? '';
  const load = useLoad(() => api<{ data: Statement }>('GET', `/market/statements/${id}`), id);
  const s = load.data?.data;
  return (
    <section className="printable">
      <div className="row no-print">
        <a href="#/statements">Back to statements</a>
        <button
          type="button"
          className="primary"
          {...whyDisabled(s ? null : 'The statement is not loaded yet.')}
          onClick={() => window.print()}
        >
          Print
        </button>
      </div>
      <Status load={load}>{s && <StatementDocument s={s} />}</Status>
    </section>
  );
}
