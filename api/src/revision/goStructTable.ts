/**
 * The JSON shape of Go structs, as test/vectors generates it from the Go types by reflection.
 *
 * Type expressions: `string`, `bool`, `int32`, `int64`; the hand-modelled JSON codecs
 * `quantity` (resource.Quantity), `intOrString`, `time` (metav1.Time), `raw` (metav1.FieldsV1);
 * `*T` (pointer), `[]T` (slice), `map[]T` (map with string keys); otherwise a struct name
 * such as `core.Container` that is a key of the table.
 */
export type GoField = readonly [name: string, type: string, omitEmpty?: 'omitempty'];

export type GoStructTable = Readonly<Record<string, readonly GoField[]>>;
