import Type from 'typebox';
import { Compile } from 'typebox/compile';
import { describe, expect, it } from 'vitest';
import { intOrString, mapOf, strictObject } from '../kruise/common/markers.js';
import { formatFieldError } from './field-error.js';
import { fieldPathOf, toFieldErrors } from './schema-errors.js';

const Schema = strictObject({
  spec: strictObject({
    replicas: Type.Optional(Type.Integer({ minimum: 0 })),
    partition: Type.Optional(intOrString()),
    containers: Type.Optional(Type.Array(strictObject({ name: Type.String(), image: Type.Optional(Type.String()) }))),
    images: Type.Optional(mapOf(strictObject({ tags: Type.Array(Type.String()) }))),
    type: Type.Optional(Type.String({ enum: ['A', 'B'] })),
  }),
});

const errorsOf = (document: unknown): string[] =>
  toFieldErrors(Schema, document, Compile(Schema).Errors(document)).map(formatFieldError);

describe('schema errors as field errors', () => {
  it('render array indexes and map keys in brackets', () => {
    expect(fieldPathOf(Schema, '/spec/containers/0/image')).toBe('spec.containers[0].image');
    expect(fieldPathOf(Schema, '/spec/images/docker.io~1library~1nginx/tags/1')).toBe(
      'spec.images[docker.io/library/nginx].tags[1]',
    );
    expect(fieldPathOf(Schema, '/spec/unknown/0')).toBe('spec.unknown[0]');
  });

  it('say what is wrong at which field', () => {
    expect(errorsOf({ spec: { replicas: -1 } })).toEqual([
      'spec.replicas: Invalid value: -1: must be greater than or equal to 0',
    ]);
    expect(errorsOf({ spec: { containers: [{ image: 1 }] } })).toEqual([
      'spec.containers[0].name: Required value',
      'spec.containers[0].image: Invalid value: 1: must be of type string',
    ]);
    expect(errorsOf({ spec: { type: 'C' } })).toEqual([
      'spec.type: Unsupported value: "C": supported values: "A", "B"',
    ]);
    expect(errorsOf({ spec: { replica: 1 } })).toEqual(['spec.replica: unknown field "spec.replica"']);
  });

  it('fold the branches of an int-or-string into one error', () => {
    expect(errorsOf({ spec: { partition: true } })).toEqual([
      'spec.partition: Invalid value: true: must be of type integer or string',
    ]);
  });
});
