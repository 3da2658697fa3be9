/** Shapes shared by every REST endpoint: errors, pagination, label selectors. */
import { Type, type Static, type TArray, type TObject, type TOptional, type TSchema, type TString } from 'typebox';

/** One problem with one field of a request, e.g. `spec.replicas: must be >= 0`. */
export const FieldProblem = Type.Object({ path: Type.String(), message: Type.String() });
export type FieldProblem = Static<typeof FieldProblem>;

/** Every error response: a stable code (`HUB_ERR_*`), a message, and field problems for 400s. */
export const ErrorResponse = Type.Object({
  error: Type.Object({
    code: Type.String(),
    message: Type.String(),
    details: Type.Optional(Type.Array(FieldProblem)),
  }),
});
export type ErrorResponse = Static<typeof ErrorResponse>;

export const MAX_PAGE_SIZE = 1000;

/** Revisions are Postgres integers: 1..2^31-1. */
export const Revision = Type.Integer({ minimum: 1, maximum: 2 ** 31 - 1 });
export const DEFAULT_PAGE_SIZE = 100;

/** `limit` + opaque `continue` token, as the Kubernetes API pages lists. */
export const PageQuery = Type.Object({
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_PAGE_SIZE })),
  continue: Type.Optional(Type.String({ maxLength: 512 })),
});
export type PageQuery = Static<typeof PageQuery>;

export const LabelMap = Type.Record(Type.String({ maxLength: 317 }), Type.String({ maxLength: 63 }));
export type LabelMap = Static<typeof LabelMap>;

export const LabelSelectorRequirement = Type.Object(
  {
    key: Type.String({ minLength: 1, maxLength: 317 }),
    operator: Type.Union([
      Type.Literal('In'),
      Type.Literal('NotIn'),
      Type.Literal('Exists'),
      Type.Literal('DoesNotExist'),
    ]),
    values: Type.Optional(Type.Array(Type.String({ maxLength: 63 }))),
  },
  { additionalProperties: false },
);
export type LabelSelectorRequirement = Static<typeof LabelSelectorRequirement>;

/** A Kubernetes-style label selector; the empty selector matches everything. */
export const LabelSelector = Type.Object(
  {
    matchLabels: Type.Optional(LabelMap),
    matchExpressions: Type.Optional(Type.Array(LabelSelectorRequirement)),
  },
  { additionalProperties: false },
);
export type LabelSelector = Static<typeof LabelSelector>;

/** `{ items, continue }`: `continue` is present only when more items exist. */
export function Page<T extends TSchema>(item: T): TObject<{ items: TArray<T>; continue: TOptional<TString> }> {
  return Type.Object({ items: Type.Array(item), continue: Type.Optional(Type.String()) });
}
