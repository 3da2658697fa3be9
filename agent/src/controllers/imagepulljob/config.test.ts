import { describe, expect, it } from 'vitest';
import { SettingsReader } from '../../settings/reader.js';
import { IMAGEPULLJOB_SETTINGS } from './config.js';

describe('FLOTILLA_IMAGEPULLJOB_SECRET_NAMESPACES', () => {
  const parse = (value: string | undefined): { names: string[] | undefined; problems: string[] } => {
    const read = new SettingsReader({}, { FLOTILLA_IMAGEPULLJOB_SECRET_NAMESPACES: value });
    return { names: read.read(IMAGEPULLJOB_SETTINGS).pullSecretNamespaces, problems: read.problems };
  };

  it('reads every namespace when unset or *', () => {
    expect(parse(undefined).names).toBeUndefined();
    expect(parse(' * ').names).toBeUndefined();
  });

  it('reads a list, and an empty value as no namespace at all', () => {
    expect(parse('team-a, team-b').names).toEqual(['team-a', 'team-b']);
    expect(parse('').names).toEqual([]);
  });

  it('names what is not a namespace', () => {
    expect(parse('ok,Not_OK').problems).toEqual([
      'FLOTILLA_IMAGEPULLJOB_SECRET_NAMESPACES: "Not_OK" is not a namespace name',
    ]);
  });
});
