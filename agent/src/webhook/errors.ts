/**
 * Errors of the admission webhook and its certificates. Each carries a stable code so logs and
 * callers can tell failures apart without parsing messages, and keeps the underlying failure as
 * `cause`.
 */
export const WebhookErrorCodes = {
  WEBHOOK_ERR_BAD_REVIEW: 'the request body is not an AdmissionReview v1',
  WEBHOOK_ERR_BODY_TOO_LARGE: 'the request body exceeds the size limit',
  WEBHOOK_ERR_HANDLER: 'an admission handler failed',
  WEBHOOK_ERR_LISTEN: 'the webhook server cannot listen',
  WEBHOOK_ERR_NO_CERT: 'no serving certificate is loaded yet',
  WEBHOOK_ERR_CERT_ISSUE: 'issuing a certificate failed',
  WEBHOOK_ERR_CERT_STORE: 'reading or writing the certificate Secret failed',
  WEBHOOK_ERR_CERT_PARSE: 'a stored certificate or key cannot be read',
  WEBHOOK_ERR_CONFIGURATION: 'applying a webhook configuration failed',
  WEBHOOK_ERR_THREAD: 'the admission thread is not running or did not answer',
} as const;

export type WebhookErrorCode = keyof typeof WebhookErrorCodes;

export class WebhookError extends Error {
  override readonly name = 'WebhookError';
  readonly code: WebhookErrorCode;

  constructor(code: WebhookErrorCode, message: string, options?: ErrorOptions) {
    super(message, options);
    this.code = code;
  }
}
