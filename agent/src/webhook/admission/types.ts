/** admission.k8s.io/v1 AdmissionReview as the apiserver sends and expects it (the fields we use). */

export type Operation = 'CREATE' | 'UPDATE' | 'DELETE' | 'CONNECT';

export interface GroupVersionKind {
  group: string;
  version: string;
  kind: string;
}

export interface GroupVersionResource {
  group: string;
  version: string;
  resource: string;
}

export interface AdmissionRequest {
  uid: string;
  kind: GroupVersionKind;
  resource: GroupVersionResource;
  subResource?: string;
  name?: string;
  namespace?: string;
  operation: Operation;
  userInfo?: { username?: string; groups?: string[] };
  /** The object as it will be stored (CREATE, UPDATE); absent on DELETE. */
  object?: unknown;
  /** The stored object (UPDATE, DELETE). */
  oldObject?: unknown;
  dryRun?: boolean;
}

/** A metav1.Status cause: one field's problem, as kubectl prints it. */
export interface StatusCause {
  reason: string;
  message: string;
  field: string;
}

export interface AdmissionResponse {
  uid: string;
  allowed: boolean;
  status?: {
    code: number;
    reason?: string;
    message: string;
    details?: { causes: StatusCause[] };
  };
  patchType?: 'JSONPatch';
  /** Base64 of the JSON patch text. */
  patch?: string;
  warnings?: string[];
}

export interface AdmissionReview {
  apiVersion: 'admission.k8s.io/v1';
  kind: 'AdmissionReview';
  request?: AdmissionRequest;
  response?: AdmissionResponse;
}

/** One RFC 6902 operation. */
export type JsonPatchOperation =
  { op: 'add' | 'replace'; path: string; value: unknown } | { op: 'remove'; path: string };

/**
 * What an admission handler decides, before it is wrapped into a response: allow (optionally
 * with a patch and warnings), or deny with an HTTP-like code, a message and per-field causes.
 */
export type AdmissionDecision =
  | { allowed: true; patch?: JsonPatchOperation[]; warnings?: string[] }
  | { allowed: false; code: number; reason: string; message: string; causes?: StatusCause[] };

/** A pure admission handler: request in, decision out. Throwing means "internal error" (500). */
export type AdmissionHandler = (request: AdmissionRequest) => AdmissionDecision | Promise<AdmissionDecision>;
