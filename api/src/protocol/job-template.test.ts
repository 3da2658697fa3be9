import { describe, expect, it } from 'vitest';
import { jobTemplateHash } from './job-template.js';

describe('jobTemplateHash', () => {
  const template = { metadata: { labels: { app: 'x' } }, spec: { containers: [{ name: 'main', image: 'task:v1' }] } };

  it('does not depend on key order', () => {
    const reordered = {
      spec: { containers: [{ image: 'task:v1', name: 'main' }] },
      metadata: { labels: { app: 'x' } },
    };
    expect(jobTemplateHash(reordered)).toBe(jobTemplateHash(template));
  });

  it('changes with any value, and is a short safe-encoded string', () => {
    const v2 = { ...template, spec: { containers: [{ name: 'main', image: 'task:v2' }] } };
    expect(jobTemplateHash(v2)).not.toBe(jobTemplateHash(template));
    expect(jobTemplateHash(template)).toMatch(/^[bcdfghjklmnpqrstvwxz2456789]{1,10}$/);
  });

  it('hashes an absent template too', () => {
    expect(jobTemplateHash(undefined)).toBe(jobTemplateHash(null));
  });
});
