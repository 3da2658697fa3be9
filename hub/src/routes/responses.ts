/** Error responses routes declare for OpenAPI; every body is an ErrorResponse. */
import { ErrorResponse } from '@flotilla/api';

/** What any authenticated route may answer: bad input, no or a weak token, unknown target, a limit. */
export const errorResponses = {
  400: ErrorResponse,
  401: ErrorResponse,
  403: ErrorResponse,
  404: ErrorResponse,
  429: ErrorResponse,
};

/** Routes that change state may also conflict with it. */
export const changeErrorResponses = { ...errorResponses, 409: ErrorResponse };
