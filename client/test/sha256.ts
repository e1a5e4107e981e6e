// The client's incremental SHA-256 against node:crypto's, fed the same bytes in random pieces.
import assert from 'node:assert/strict';
import { createHash, randomBytes, randomInt } from 'node:crypto';
import { Sha256 } from '../src/sha256';

function agrees(data: Uint8Array): void {
  const ours = new Sha256();
  for (let offset = 0; offset < data.length;) {
    const end = Math.min(data.length, offset + randomInt(0, 150));
    ours.update(data.subarray(offset, end));
    offset = end;
  }
  assert.equal(ours.hex(), createHash('sha256').update(data).digest('hex'), `${data.length} bytes`);
}

/** Every length across the padding's edges (55, 56, 63, 64, 119, 120 bytes), and a large input. */
export function sha256Agrees(): void {
  for (let length = 0; length <= 300; length += 1) agrees(randomBytes(length));
  agrees(randomBytes(3 * 1024 * 1024 + 17));
  assert.equal(
    new Sha256().update(new TextEncoder().encode('abc')).hex(),
    'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad',
  );
}
