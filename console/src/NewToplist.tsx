import { useState } from 'react';
import { api, type Page, type Template, type Toplist } from './api.ts';
import { useSites } from './choices.ts';
import { type FieldSpec, FormCard, useForm } from './form.tsx';
import { slugOf } from './slug.ts';
import { choicesOf, useLoad } from './ui.tsx';

const GEO_TYPES: [string, string][] = [
  ['country', 'Country'],
  ['market', 'Market'],
  ['global', 'Global'],
];

type NewFields = {
  name: string;
  slug: string;
  siteId: string;
  templateId: string;
  ownerId: string;
  geoType: string;
  geoCode: string;
  coveredCountries: string;
  currentPeriod: string;
};

const EMPTY: NewFields = {
  name: '',
  slug: '',
  siteId: '',
  templateId: '',
  ownerId: '',
  geoType: 'country',
  geoCode: '',
  coveredCountries: '',
  currentPeriod: '',
};

/**
 * A new toplist: name (the slug follows it until edited), site, template, owner and geo, the
 * period it covers; the API checks the slug and the geo, and its 422 shows beside the field.
 */
export function NewToplist({
  onCreated,
  onCancel,
}: {
  onCreated: (t: Toplist) => void;
  onCancel: () => void;
}) {
  const sites = useSites();
  const templates = useLoad(() => api<Page<Template>>('GET', '/templates?per_page=100'), 'new-toplist');
  const owners = useLoad(
    () => api<Page<{ id: number; name: string }>>('GET', '/owners?per_page=100'),
    'new-toplist',
  );
  const form = useForm<NewFields>(EMPTY);
  const [slugEdited, setSlugEdited] = useState(false);
  const { f } = form;
  const set = (k: keyof NewFields) => (v: string) => {
    if (k === 'slug') setSlugEdited(true);
    form.setF((old) => ({ ...old, [k]: v, ...(k === 'name' && !slugEdited ? { slug: slugOf(v) } : {}) }));
  };
  const firstOf = (load: { data?: { data: readonly { id: number }[] } }) =>
    String(load.data?.data[0]?.id ?? '');
  const picked = (k: 'siteId' | 'templateId' | 'ownerId', load: Parameters<typeof firstOf>[0]) =>
    Number(f[k] || firstOf(load));
  const specs: FieldSpec<keyof NewFields>[] = [
    { key: 'name', id: 'new-toplist-name', label: 'Name', required: true },
    { key: 'slug', id: 'new-toplist-slug', label: 'Slug', required: true },
    { key: 'siteId', id: 'new-toplist-site', label: 'Site', options: choicesOf(sites, (s) => s.domain) },
    {
      key: 'templateId',
      id: 'new-toplist-template',
      label: 'Template',
      options: choicesOf(templates, (t) => t.name),
    },
    { key: 'ownerId', id: 'new-toplist-owner', label: 'Owner', options: choicesOf(owners, (o) => o.name) },
    { key: 'geoType', id: 'new-toplist-geo-type', label: 'Geo type', field: 'geo.type', options: GEO_TYPES },
    ...(f.geoType === 'global'
      ? []
      : [
          {
            key: 'geoCode' as const,
            id: 'new-toplist-geo-code',
            label: f.geoType === 'country' ? 'Country code (e.g. SE)' : 'Market code (e.g. NORDICS)',
            field: 'geo.code',
            required: true,
          },
        ]),
    ...(f.geoType === 'market'
      ? [
          {
            key: 'coveredCountries' as const,
            id: 'new-toplist-covered',
            label: 'Countries it covers (comma-separated)',
            field: 'geo.coveredCountries',
            required: true,
          },
        ]
      : []),
    { key: 'currentPeriod', id: 'new-toplist-period', label: 'Period it covers (e.g. December 2026)' },
  ];
  const create = () =>
    form.run(async () => {
      // Country and market codes are upper-case; a global list's code is always ROW.
      const code = f.geoType === 'global' ? 'ROW' : f.geoCode.trim().toUpperCase();
      const covered = f.coveredCountries
        .split(',')
        .map((c) => c.trim().toUpperCase())
        .filter(Boolean);
      const r = await api<{ data: Toplist }>('POST', '/toplists', {
        name: f.name.trim(),
        slug: f.slug.trim(),
        siteId: picked('siteId', sites),
        templateId: picked('templateId', templates),
        ownerId: picked('ownerId', owners),
        geo: { type: f.geoType, code, ...(f.geoType === 'market' ? { coveredCountries: covered } : {}) },
        ...(f.currentPeriod.trim() ? { currentPeriod: f.currentPeriod.trim() } : {}),
      });
      form.setF(EMPTY);
      setSlugEdited(false);
      onCreated(r.data);
      return undefined;
    });
  return (
    <FormCard
      record={{ unit: 'toplist' }}
      form={{ ...form, set }}
      specs={specs}
      onSubmit={create}
      actions={
        <button type="button" onClick={onCancel}>
          Cancel
        </button>
      }
    />
  );
}

/** Renames a toplist (and changes its slug, which sites asking by slug then use). */
export function RenameToplist({ toplist, onSaved }: { toplist: Toplist; onSaved: () => void }) {
  const form = useForm({ name: toplist.name, slug: toplist.slug });
  const save = () =>
    form.run(async () => {
      const body: Record<string, string> = {};
      if (form.f.name.trim() !== toplist.name) body.name = form.f.name.trim();
      if (form.f.slug.trim() !== toplist.slug) body.slug = form.f.slug.trim();
      if (Object.keys(body).length === 0) return 'Nothing to change.';
      await api('PATCH', `/toplists/${toplist.id}`, body);
      onSaved();
      return body.slug ? 'Renamed. Sites that ask for it by slug must use the new slug.' : 'Renamed.';
    });
  return (
    <FormCard
      id="rename-toplist"
      title="Name and slug"
      heading="h2"
      grid={false}
      form={form}
      specs={[
        { key: 'name', id: 'rename-toplist-name', label: 'Name', required: true },
        { key: 'slug', id: 'rename-toplist-slug', label: 'Slug', required: true },
      ]}
      submit="Rename"
      onSubmit={save}
    />
  );
}
