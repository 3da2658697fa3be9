/** `flotilla tokens ...`: create (the secret is printed once, to stdout only), list, revoke. */
import type { ApiToken, ApiTokenList, CreatedApiToken } from '@flotilla/api';
import { str } from '../args.js';
import { seg } from '../client.js';
import { confirm, print, type Command } from '../context.js';
import { CliError, usageError } from '../errors.js';
import { age, orDash, renderData } from '../output.js';

const ROLES = ['viewer', 'operator', 'admin', 'bootstrap'];
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function tokenCommands(): Command[] {
  return [
    {
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
    },
    {
      group: 'tokens',
      verb: 'list',
      args: [],
      summary: 'List API tokens (never their secrets).',
      options: {},
      async run(ctx) {
        const { items } = await ctx.client.request<ApiTokenList>('GET', '/tokens');
        const now = ctx.now();
        print(
          ctx,
          items,
          [
            { header: 'id', value: (t: ApiToken) => t.id },
            { header: 'name', value: (t) => t.name },
            { header: 'role', value: (t) => t.role },
            { header: 'created', value: (t) => age(t.createdAt, now) },
            { header: 'revoked', value: (t) => (t.revokedAt ? age(t.revokedAt, now) : orDash(null)) },
          ],
          items,
        );
        return 0;
      },
    },
    {
      group: 'tokens',
      verb: 'revoke',
      args: ['ID|NAME'],
      summary: 'Revoke an API token by id, or by name when exactly one active token has it.',
      options: {},
      async run(ctx, { positionals: [ref] }) {
        let id = ref!;
        if (!UUID.test(id)) {
          const { items } = await ctx.client.request<ApiTokenList>('GET', '/tokens');
          const active = items.filter((t) => t.name === ref && t.revokedAt === null);
          if (active.length === 0) throw new CliError('CLI_ERR_NOT_FOUND', `no active token named ${ref}`);
          if (active.length > 1)
            throw new CliError('CLI_ERR_AMBIGUOUS', `${active.length} active tokens are named ${ref}; revoke by id`);
          id = active[0]!.id;
        }
        const t = await ctx.client.request<ApiToken>('DELETE', `/tokens/${seg(id)}`);
        confirm(ctx, `token ${t.name} (${t.id}) revoked`, t);
        return 0;
      },
    },
  ];
}
