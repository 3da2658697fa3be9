import { describe, expect, it } from 'vitest';
import { AGENT_JS_API_PREFIX, agentPermissions, clusterServiceImports, hubServiceExports } from './accounts.js';

/** NATS subject matching: `*` one token, `>` the rest. */
function matches(pattern: string, subject: string): boolean {
  const p = pattern.split('.');
  const s = subject.split('.');
  for (let i = 0; i < p.length; i++) {
    if (p[i] === '>') return s.length > i;
    if (p[i] !== '*' && p[i] !== s[i]) return false;
  }
  return p.length === s.length;
}

describe('NATS accounts of the link', () => {
  it('imports only the cluster’s own durable, status and heartbeat, each under a hub export', () => {
    const imports = clusterServiceImports('a');
    expect(imports.map((i) => i.subject)).toEqual([
      '$JS.API.CONSUMER.INFO.DESIRED.agent-a',
      '$JS.API.CONSUMER.MSG.NEXT.DESIRED.agent-a',
      '$JS.ACK.DESIRED.agent-a.>',
      'flotilla.status.a.>',
      'flotilla.heartbeat.a',
    ]);
    for (const i of imports) {
      expect(hubServiceExports().some((e) => matches(e.subject, i.subject.replace(/>$/, 'x')))).toBe(true);
    }
    expect(imports[0]!.localSubject).toBe(`${AGENT_JS_API_PREFIX}.CONSUMER.INFO.DESIRED.agent-a`);
  });

  it('scopes agent permissions to its imports and its inbox', () => {
    const p = agentPermissions('a');
    expect(p.publish.allow).toEqual(clusterServiceImports('a').map((i) => i.localSubject));
    expect(p.subscribe.allow).toEqual(['_INBOX_a.>']);
    // The traps of the recipe: no wildcard over consumer names, no direct reads, no deletes, and
    // no consumer creation of any kind (the hub owns every agent's durable).
    for (const s of p.publish.allow) {
      expect(s).not.toMatch(/DESIRED\.(>|\*)|MSG\.GET|DELETE|CREATE|UPDATE|^\$JS\.API/);
    }
    expect(agentPermissions('b').publish.allow.some((s) => p.publish.allow.includes(s))).toBe(false);
  });
});
