import { describe, expect, it } from 'vitest';
import { renderAuthorization } from './render.js';

describe('renderAuthorization', () => {
  it('renders the hub with full access and each agent with its scoped permissions, hashes only', () => {
    const out = renderAuthorization(
      [{ user: 'hub', passwordHash: '$2a$04$hubhash' }],
      [{ cluster: 'a', user: 'agent-a', passwordHash: '$2a$04$ahash' }],
    );
    expect(out).toContain('{ user: "hub", password: "$2a$04$hubhash" }');
    expect(out).toContain(
      'user: "agent-a", password: "$2a$04$ahash", permissions: { publish: { allow: ["flotilla.status.a.>"',
    );
    expect(out).toContain('subscribe: { allow: ["_INBOX_a.>"] }');
    expect(out.trim().startsWith('#')).toBe(true);
  });
});
