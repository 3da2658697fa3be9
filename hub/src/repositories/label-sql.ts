/** Label selectors as SQL predicates over a jsonb labels column (same semantics as matchesSelector). */
import { and, sql, type SQL } from 'drizzle-orm';
import type { AnyPgColumn } from 'drizzle-orm/pg-core';
import type { LabelSelector, LabelSelectorRequirement } from '@flotilla/api';

function requirementSql(column: AnyPgColumn | SQL, r: LabelSelectorRequirement): SQL {
  const values = r.values ?? [];
  // jsonb_exists is the function behind `?`, spelled out to keep `?` away from any placeholder parsing.
  const has = sql`jsonb_exists(${column}, ${r.key})`;
  const valueArray = sql`array[${sql.join(
    values.map((v) => sql`${v}`),
    sql`, `,
  )}]::text[]`;
  switch (r.operator) {
    case 'In':
      return values.length === 0 ? sql`false` : sql`(${column} ->> ${r.key}) = any(${valueArray})`;
    case 'NotIn':
      return values.length === 0 ? sql`true` : sql`(not ${has} or (${column} ->> ${r.key}) <> all(${valueArray}))`;
    case 'Exists':
      return has;
    case 'DoesNotExist':
      return sql`not ${has}`;
  }
}

export function selectorSql(column: AnyPgColumn | SQL, selector: LabelSelector): SQL | undefined {
  const parts: SQL[] = [];
  const matchLabels = selector.matchLabels ?? {};
  if (Object.keys(matchLabels).length > 0) parts.push(sql`${column} @> ${JSON.stringify(matchLabels)}::jsonb`);
  for (const r of selector.matchExpressions ?? []) parts.push(requirementSql(column, r));
  return parts.length === 0 ? undefined : and(...parts);
}
