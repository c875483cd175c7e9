import { describe, expect, it } from 'vitest';
import { cellText, fieldChanges } from './audit-diff.ts';

describe('audit before/after as field changes', () => {
  it('lists only the fields that differ, labelled in words, nested records by path', () => {
    expect(
      fieldChanges(
        { liveVersion: '1', liveFrom: null, site: { id: 2, name: 'A' }, same: 3 },
        { liveVersion: '2', liveFrom: '2026-12-04T09:00:00Z', site: { id: 2, name: 'B' }, same: 3 },
      ),
    ).toEqual([
      { field: 'Live version', before: '1', after: '2' },
      { field: 'Live from', before: '—', after: '2026-12-04T09:00:00Z' },
      { field: 'Site › name', before: 'A', after: 'B' },
    ]);
  });

  it('treats a missing side (a creation, a deletion) as no fields, and keeps new fields after old ones', () => {
    expect(fieldChanges(null, { name: 'x', scopes: ['admin', 'catalog:read'] })).toEqual([
      { field: 'Name', before: '—', after: 'x' },
      { field: 'Scopes', before: '—', after: 'admin, catalog:read' },
    ]);
    expect(fieldChanges({ status: 'active' }, { status: 'active', reason: 'spam' })).toEqual([
      { field: 'Reason', before: '—', after: 'spam' },
    ]);
    expect(fieldChanges({ a: 1 }, undefined)).toEqual([{ field: 'A', before: '1', after: '—' }]);
    expect(fieldChanges('x', 'y')).toEqual([]);
  });

  it('writes lists of records and empty values so a cell can hold them', () => {
    expect(cellText([])).toBe('—');
    expect(cellText('')).toBe('—');
    expect(cellText([{ brand: 'A' }])).toBe('[{"brand":"A"}]');
    expect(cellText({ a: 1 })).toBe('{"a":1}');
    expect(cellText(false)).toBe('false');
    expect(fieldChanges({ meta: {} }, { meta: { x: 1 } })).toEqual([
      { field: 'Meta › x', before: '—', after: '1' },
    ]);
  });
});
