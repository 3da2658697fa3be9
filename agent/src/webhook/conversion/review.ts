/**
 * The ConversionReview envelope (apiextensions.k8s.io/v1 and v1beta1, the versions the CRDs
 * declare): reading the apiserver's request and answering it with api's converters. Pure: the
 * server hands in the body and writes out what this returns.
 *
 * A review whose uid cannot be read cannot be answered and gets HTTP 400. Anything else wrong — a
 * missing desiredAPIVersion, an object of an unknown kind, a malformed field — gets a Failure
 * result naming every bad field (`request.objects[1].spec.namespace: ...`), which the apiserver
 * passes on to the client whose read or write needed the conversion. Nothing here throws on input.
 */
import { convertKruiseObject, type FieldError, formatFieldError, isRecord, required } from '@flotilla/api';

const REVIEW_VERSIONS = ['apiextensions.k8s.io/v1', 'apiextensions.k8s.io/v1beta1'];

export interface ConversionAnswer {
  /** HTTP status: 200 for every answered review, 400 when there is none to answer. */
  status: number;
  body: string;
  /** Whether the review's result is Success (false for 400s too). */
  succeeded: boolean;
  /** Objects converted (for metrics). */
  objects: number;
}

const badRequest = (message: string): ConversionAnswer => ({
  status: 400,
  body: `${message}\n`,
  succeeded: false,
  objects: 0,
});

function parse(body: string): unknown {
  try {
    return JSON.parse(body) as unknown;
  } catch {
    return undefined;
  }
}

/** The converted objects, or every field error of the request. */
function convertAll(request: Record<string, unknown>): { objects: unknown[] } | { errors: FieldError[] } {
  const desired = request.desiredAPIVersion;
  if (typeof desired !== 'string' || desired === '') return { errors: [required('request.desiredAPIVersion')] };
  if (!Array.isArray(request.objects)) return { errors: [required('request.objects', 'a list of objects')] };
  const objects: unknown[] = [];
  const errors: FieldError[] = [];
  request.objects.forEach((obj: unknown, i) => {
    const outcome = convertKruiseObject(obj, desired, `request.objects[${i}]`);
    if (outcome.ok) objects.push(outcome.object);
    else errors.push(...outcome.errors);
  });
  return errors.length > 0 ? { errors } : { objects };
}

/** The answer to a ConversionReview request body. */
export function answerConversionReview(body: string): ConversionAnswer {
  const review = parse(body);
  if (!isRecord(review)) return badRequest('request body is not a JSON object');
  const apiVersion = String(review.apiVersion);
  if (!REVIEW_VERSIONS.includes(apiVersion) || review.kind !== 'ConversionReview') {
    return badRequest(
      `expected kind ConversionReview of ${REVIEW_VERSIONS.join(' or ')}, got ${apiVersion} ${String(review.kind)}`,
    );
  }
  const request = review.request;
  if (!isRecord(request) || typeof request.uid !== 'string' || request.uid === '') {
    return badRequest('request.uid is missing');
  }
  const outcome = convertAll(request);
  const response =
    'objects' in outcome
      ? { uid: request.uid, result: { status: 'Success' }, convertedObjects: outcome.objects }
      : {
          uid: request.uid,
          result: { status: 'Failure', message: outcome.errors.map(formatFieldError).join('; ') },
        };
  return {
    status: 200,
    body: JSON.stringify({ apiVersion, kind: 'ConversionReview', response }),
    succeeded: 'objects' in outcome,
    objects: 'objects' in outcome ? outcome.objects.length : 0,
  };
}
