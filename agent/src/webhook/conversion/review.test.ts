import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { answerConversionReview } from './review.js';

const ALPHA = 'apps.kruise.io/v1alpha1';
const BETA = 'apps.kruise.io/v1beta1';
const sidecarSet = (spec: object, apiVersion = ALPHA): object => ({
  apiVersion,
  kind: 'SidecarSet',
  metadata: { name: 'ss', uid: 'u1', resourceVersion: '7' },
  spec,
});
const review = (request: object, apiVersion = 'apiextensions.k8s.io/v1'): string =>
  JSON.stringify({ apiVersion, kind: 'ConversionReview', request });

const responseOf = (
  body: string,
): { uid: string; result: { status: string; message?: string }; convertedObjects?: unknown[] } => {
  const answer = answerConversionReview(body);
  expect(answer.status).toBe(200);
  return (JSON.parse(answer.body) as { response: never }).response;
};

describe('ConversionReview', () => {
  it('converts every object to the desired version, answering with the request uid', () => {
    const response = responseOf(
      review({ uid: 'r1', desiredAPIVersion: BETA, objects: [sidecarSet({ namespace: 'a' }), sidecarSet({}, BETA)] }),
    );
    expect(response.uid).toBe('r1');
    expect(response.result).toEqual({ status: 'Success' });
    expect(response.convertedObjects).toHaveLength(2);
    expect(response.convertedObjects![0]).toMatchObject({
      apiVersion: BETA,
      spec: { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'a' } } },
    });
    expect(response.convertedObjects![1]).toEqual(sidecarSet({}, BETA));
  });

  it('answers in the review version it was asked in (v1beta1 too)', () => {
    const answer = answerConversionReview(
      review({ uid: 'r2', desiredAPIVersion: ALPHA, objects: [] }, 'apiextensions.k8s.io/v1beta1'),
    );
    expect(JSON.parse(answer.body)).toMatchObject({
      apiVersion: 'apiextensions.k8s.io/v1beta1',
      kind: 'ConversionReview',
    });
  });

  it('fails the review naming each malformed field, converting nothing', () => {
    const response = responseOf(
      review({
        uid: 'r3',
        desiredAPIVersion: BETA,
        objects: [sidecarSet({}), sidecarSet({ namespace: 5 }), { ...sidecarSet({}), kind: 'Widget' }],
      }),
    );
    expect(response.result.status).toBe('Failure');
    expect(response.result.message).toBe(
      'request.objects[1].spec.namespace: Invalid value: 5: must be of type string; ' +
        'request.objects[2].kind: Unsupported value: "Widget": supported values: "SidecarSet", "StatefulSet", "DaemonSet"',
    );
    expect(response.convertedObjects).toBeUndefined();
  });

  it('fails a review without desiredAPIVersion or objects, naming the field', () => {
    expect(responseOf(review({ uid: 'r4', objects: [] })).result.message).toBe(
      'request.desiredAPIVersion: Required value',
    );
    expect(responseOf(review({ uid: 'r5', desiredAPIVersion: BETA })).result.message).toBe(
      'request.objects: Required value: a list of objects',
    );
    expect(
      responseOf(review({ uid: 'r6', desiredAPIVersion: 'apps/v1', objects: [sidecarSet({})] })).result.message,
    ).toMatch(/^desiredAPIVersion: Unsupported value: "apps\/v1"/);
  });

  it('answers 400 when there is no review to answer', () => {
    expect(answerConversionReview('{').status).toBe(400);
    expect(answerConversionReview('[]').status).toBe(400);
    expect(
      answerConversionReview(JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview' })),
    ).toMatchObject({
      status: 400,
      body: 'expected kind ConversionReview of apiextensions.k8s.io/v1 or apiextensions.k8s.io/v1beta1, got admission.k8s.io/v1 AdmissionReview\n',
    });
    expect(answerConversionReview(review({ desiredAPIVersion: BETA, objects: [] })).body).toBe(
      'request.uid is missing\n',
    );
  });

  it('never throws, whatever the body', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (request) => {
        expect(() =>
          answerConversionReview(review({ uid: 'x', desiredAPIVersion: BETA, objects: [request] })),
        ).not.toThrow();
        expect(() => answerConversionReview(JSON.stringify(request))).not.toThrow();
      }),
      { numRuns: 300 },
    );
  });
});
