/**
 * Whether a bearer credential is shaped as a JWT (three base64url parts joined by dots) rather
 * than an API key (`pds_` and base64url, no dot): the two are told apart by shape alone, before
 * anything is verified or looked up.
 */
const JWT_SHAPE = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/;

export function isJwtShaped(credential: string): boolean {
  return JWT_SHAPE.test(credential);
}
