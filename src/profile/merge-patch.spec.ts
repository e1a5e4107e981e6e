import { mergePatch } from './merge-patch';

describe('mergePatch', () => {
  it('sets new and changed keys with dotted paths', () => {
    expect(mergePatch({ a: 1 }, { a: 2, b: 'x' }, 'settings')).toEqual({
      merged: { a: 2, b: 'x' },
      set: { 'settings.a': 2, 'settings.b': 'x' },
      unset: [],
    });
  });

  it('removes keys set to null, and ignores null for absent keys', () => {
    expect(mergePatch({ a: 1, b: 2 }, { a: null, zz: null }, 'settings')).toEqual({
      merged: { b: 2 },
      set: {},
      unset: ['settings.a'],
    });
  });

  it('merges nested objects key by key', () => {
    const target = { ui: { theme: 'dark', font: { size: 12, family: 'mono' } }, keep: true };
    const result = mergePatch(target, { ui: { font: { size: 14, family: null } } }, 'settings');
    expect(result).toEqual({
      merged: { ui: { theme: 'dark', font: { size: 14 } }, keep: true },
      set: { 'settings.ui.font.size': 14 },
      unset: ['settings.ui.font.family'],
    });
    expect(target.ui.font).toEqual({ size: 12, family: 'mono' });
  });

  it('replaces a non-object with the patch object, without its nulls', () => {
    expect(mergePatch({ a: 'text' }, { a: { b: 1, c: null } }, 'settings')).toEqual({
      merged: { a: { b: 1 } },
      set: { 'settings.a': { b: 1 } },
      unset: [],
    });
  });

  it('replaces an object with a scalar', () => {
    expect(mergePatch({ a: { b: 1 } }, { a: false }, 'settings')).toEqual({
      merged: { a: false },
      set: { 'settings.a': false },
      unset: [],
    });
  });

  it('keeps an empty object an empty object', () => {
    expect(mergePatch({ a: { b: 1 } }, { a: { b: null } }, 'settings').merged).toEqual({ a: {} });
    expect(mergePatch({}, { a: {} }, 'settings').set).toEqual({ 'settings.a': {} });
  });
});
