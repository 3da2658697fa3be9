/** `flotilla tokens ...`: create (the secret is printed once, to stdout only), list, revoke. */
import type { ApiToken, ApiTokenList, CreatedApiToken } from '@flotilla/api';
import { isUuid, str } from '../args.js';
import { seg, type HubClient } from '../client.js';
import { confirm, print, type Command } from '../context.js';
import { CliError, usageError } from '../errors.js';
import { age, orDash, renderData } from '../output.js';

const ROLES = ['viewer', 'operator', 'admin', 'bootstrap'];

const create: Command = {
  group: 'tokens',
  verb: 'create',
  args: ['NAME'],
  summary: 'Create an API token; the secret is printed once, to stdout.',
  options: { role: { type: 'string', value: 'ROLE', description: 'viewer, operator, admin or bootstrap' } },
  async run(ctx, { positionals: [name], options }) {
    const role = str(options, 'role');
    if (role === undefined || !ROLES.includes(role)) throw usageError(`--role must be one of ${ROLES.join(', ')}`);
    const t = await ctx.client.request<CreatedApiToken>('POST', '/tokens', { body: { name, role } });
    if (ctx.format === 'table') {
      ctx.stderr(`token ${t.name} (${t.role}, id ${t.id}) created; it is shown only this once:\n`);
      ctx.stdout(`${t.token}\n`);
    } else {
      ctx.stdout(renderData(ctx.format, t));
    }
    return 0;
  },
};

const list: Command = {
  group: 'tokens',
  verb: 'list',
  summary: 'List API tokens (never their secrets).',
  async run(ctx) {
    const { items } = await ctx.client.request<ApiTokenList>('GET', '/tokens');
    const now = ctx.now();
    const columns = [
      { header: 'id', value: (t: ApiToken) => t.id },
      { header: 'name', value: (t: ApiToken) => t.name },
      { header: 'role', value: (t: ApiToken) => t.role },
      { header: 'created', value: (t: ApiToken) => age(t.createdAt, now) },
      { header: 'revoked', value: (t: ApiToken) => (t.revokedAt ? age(t.revokedAt, now) : orDash(null)) },
    ];
    print(ctx, items, columns, items);
    return 0;
  },
};

/** The id of the one active token named `name`; none or several is an error. */
async function activeTokenId(client: HubClient, name: string): Promise<string> {
  const { items } = await client.request<ApiTokenList>('GET', '/tokens');
  const active = items.filter((t) => t.name === name && t.revokedAt === null);
  if (active.length === 0) throw new CliError('CLI_ERR_NOT_FOUND', `no active token named ${name}`);
  if (active.length > 1)
    throw new CliError('CLI_ERR_AMBIGUOUS', `${active.length} active tokens are named ${name}; revoke by id`);
  return active[0]!.id;
}

const revoke: Command = {
  group: 'tokens',
  verb: 'revoke',
  args: ['ID|NAME'],
  summary: 'Revoke an API token by id, or by name when exactly one active token has it.',
  async run(ctx, { positionals: [ref] }) {
    const id = isUuid(ref!) ? ref! : await activeTokenId(ctx.client, ref!);
    const t = await ctx.client.request<ApiToken>('DELETE', `/tokens/${seg(id)}`);
    confirm(ctx, `token ${t.name} (${t.id}) revoked`, t);
    return 0;
  },
};

export const tokenCommands: readonly Command[] = [create, list, revoke];
