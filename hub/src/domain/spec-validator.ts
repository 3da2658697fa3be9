/**
 * The spec validator the REST API uses: the api package's `validateKruiseObject`, so the hub
 * rejects exactly what a cluster would. It is injected into the app (tests may pass their own).
 */
import { validateKruiseObject } from '@flotilla/api';

export interface FieldProblem {
  path: string;
  message: string;
}

/** Validates a whole Kruise object (apiVersion, kind, metadata, spec); [] means valid. */
export type SpecValidator = (obj: unknown) => FieldProblem[];

/** The api package's validators, reduced to path + message. */
export const kruiseSpecValidator: SpecValidator = (obj) =>
  validateKruiseObject(obj).map((p) => ({ path: p.path, message: p.message }));
