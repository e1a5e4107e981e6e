/** A 24-digit hex ObjectId as used in ids of the API (mongoose's isValidObjectId also accepts any 12-char string). */
export function isObjectIdHex(value: string): boolean {
  return /^[0-9a-f]{24}$/i.test(value);
}
