import { describe, expect, it } from 'vitest';
import { bool, dnsLabel, dnsSubdomain, duration, httpUrl, int, labels, list, matching, oneOf, port } from './kinds.js';
import type { Kind } from './setting.js';

/** The value of `text`, and what the kind reported. */
function parse<T>(kind: Kind<T>, text: string): { value: T | undefined; problems: string[] } {
  const problems: string[] = [];
  return { value: kind.parse(text, (m) => problems.push(m)), problems };
}

describe('setting kinds', () => {
  it('read whole numbers in a range', () => {
    expect(parse(int(1, 30), '30')).toEqual({ value: 30, problems: [] });
    for (const bad of ['0', '31', '1.5', '1e1', '0x1', '-1']) {
      expect(parse(int(1, 30), bad).problems).toEqual([`must be an integer 1-30, got "${bad}"`]);
    }
    expect(parse(port(), '0').value).toBe(0);
    expect(parse(port(), '70000').problems).toEqual(['must be a port number 0-65535, got "70000"']);
  });

  it('read true or false, and one of some words', () => {
    expect(parse(bool(), 'false').value).toBe(false);
    expect(parse(bool(), 'no').problems).toEqual(['must be true or false, got "no"']);
    expect(parse(oneOf(['Fail', 'Ignore']), 'Maybe').problems).toEqual(['must be Fail or Ignore, got "Maybe"']);
    expect(parse(oneOf(['a', 'b', 'c']), 'd').problems).toEqual(['must be one of a, b, c, got "d"']);
  });

  it('read durations in milliseconds, a bare number as seconds, and show them back', () => {
    const d = duration();
    expect([parse(d, '500ms').value, parse(d, '15s').value, parse(d, '2m').value, parse(d, '1.5').value]).toEqual([
      500, 15_000, 120_000, 1500,
    ]);
    expect(parse(d, '0s').problems).toEqual(['must be a positive duration like 500ms, 15s or 2m, got "0s"']);
    expect(parse(d, 'soon').problems).toHaveLength(1);
    expect([d.show!(120_000), d.show!(15_000), d.show!(1500), d.show!(3_600_000)]).toEqual([
      '2m',
      '15s',
      '1500ms',
      '1h',
    ]);
  });

  it('read Kubernetes names', () => {
    expect(parse(dnsLabel(), 'east-1').value).toBe('east-1');
    expect(parse(dnsLabel(), 'East_1').problems).toEqual([
      `must be a DNS label (lower-case letters, digits, '-'), got "East_1"`,
    ]);
    expect(parse(dnsLabel(), 'a'.repeat(64)).problems).toHaveLength(1);
    expect(parse(dnsSubdomain('a node name'), 'node-1.example.com').value).toBe('node-1.example.com');
    for (const bad of ['Node', 'a..b', 'a.-b', '-a']) {
      expect(parse(dnsSubdomain('a node name'), bad).problems).toEqual([`must be a node name, got "${bad}"`]);
    }
  });

  it('read lists, an empty text as an empty list, checking each item', () => {
    const k = list('list', { test: (t) => t !== 'bad', what: 'a good item' });
    expect(k.emptyIsValue).toBe(true);
    expect(parse(k, ' a, ,b ')).toEqual({ value: ['a', 'b'], problems: [] });
    expect(parse(k, '')).toEqual({ value: [], problems: [] });
    expect(parse(k, 'a,bad').problems).toEqual(['"bad" is not a good item']);
    expect(k.show!(['*', '-webhook'])).toBe('*,-webhook');
  });

  it('read labels with Kubernetes syntax', () => {
    expect(parse(labels(), 'env=prod, example.com/tier=,region=eu-1').value).toEqual({
      env: 'prod',
      'example.com/tier': '',
      region: 'eu-1',
    });
    expect(parse(labels(), 'env=prod,bad label=x,env=dev,novalue,a/b/c=x,k=' + 'v'.repeat(64)).problems).toEqual([
      '"bad label=x" is not a label key=value',
      'label env given twice',
      '"novalue" is not a label key=value',
      '"a/b/c=x" is not a label key=value',
      `"k=${'v'.repeat(64)}" is not a label key=value`,
    ]);
  });

  it('read http(s) URLs without credentials, and patterns', () => {
    expect(parse(httpUrl(), 'https://hub.example:8443//').value).toBe('https://hub.example:8443');
    for (const bad of ['ftp://hub', 'https://u:p@hub', 'hub:8080', 'not a url']) {
      expect(parse(httpUrl(), bad).problems).toEqual([`must be an http(s) URL without credentials, got "${bad}"`]);
    }
    expect(parse(matching(/^x+$/, 'only x'), 'xy').problems).toEqual(['must be only x, got "xy"']);
  });
});
