import { describe, expect, it } from 'vitest';
import { pullSecretNamespacesFromEnv } from './config.js';

describe('pullSecretNamespacesFromEnv', () => {
  const parse = (value: string | undefined): { names: string[] | undefined; problems: string[] } => {
    const problems: string[] = [];
    return {
      names: pullSecretNamespacesFromEnv({ FLOTILLA_IMAGEPULLJOB_SECRET_NAMESPACES: value }, problems),
      problems,
    };
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
