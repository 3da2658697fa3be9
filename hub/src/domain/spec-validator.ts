/**
 * The spec validator the REST API uses: the api package's `validateKruiseObject`, so the hub
 * rejects exactly what a cluster would. It is injected into the app (tests may pass their own).
 */
import * as api from '@flotilla/api';

export interface FieldProblem {
  path: string;
  message: string;
}

/** Validates a whole Kruise object (apiVersion, kind, metadata, spec); [] means valid. */
export type SpecValidator = (obj: unknown) => FieldProblem[];

/**
 * Resolves `validateKruiseObject` from the api package. Looked up by name rather than imported
 * so the hub builds while the api's validators are still landing; without it only the REST
 * schema checks apply, and the hub logs that once at start (see server.ts).
 */
export function apiSpecValidator(): SpecValidator | undefined {
  const fn = (api as Record<string, unknown>)['validateKruiseObject'];
  if (typeof fn !== 'function') return undefined;
  return (obj) => (fn as SpecValidator)(obj).map((p) => ({ path: p.path, message: p.message }));
}

/** Minimal structural checks used when the api validators are unavailable. */
export const structuralValidator: SpecValidator = (obj) => {
  const spec = (obj as { spec?: unknown }).spec;
  if (typeof spec !== 'object' || spec === null || Array.isArray(spec)) {
    return [{ path: 'spec', message: 'Required value: must be an object' }];
  }
  return [];
};
