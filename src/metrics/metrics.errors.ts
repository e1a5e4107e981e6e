import { UnauthenticatedError } from '../common/errors';

/** The errors of the metrics module; each fixes one code of the catalog. */

/** METRICS_TOKEN is set and the scrape did not present it. */
export class MetricsTokenRequiredError extends UnauthenticatedError {
  constructor() {
    super('Send the metrics token (METRICS_TOKEN) as Authorization: Bearer <token>.');
  }
}
