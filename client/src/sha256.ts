/**
 * SHA-256 (FIPS 180-4) fed piece by piece, so that an export's end line can be checked as its
 * lines stream by. Web Crypto digests only a whole buffer, and node:crypto is not there in a
 * browser (nor should a bundler meet it in this client): this runs in both.
 */
export class Sha256 {
  // The state as signed 32-bit integers from the start (`| 0`): V8 then keeps the fields unboxed,
  // about three times faster than when they begin as the larger doubles.
  private h0 = 0x6a09e667 | 0;
  private h1 = 0xbb67ae85 | 0;
  private h2 = 0x3c6ef372 | 0;
  private h3 = 0xa54ff53a | 0;
  private h4 = 0x510e527f | 0;
  private h5 = 0x9b05688c | 0;
  private h6 = 0x1f83d9ab | 0;
  private h7 = 0x5be0cd19 | 0;
  /** The bytes of an unfinished 64-byte block. */
  private readonly block = new Uint8Array(64);
  private readonly blockView = new DataView(this.block.buffer);
  private filled = 0;
  private length = 0;

  update(data: Uint8Array): this {
    this.length += data.length;
    let offset = 0;
    if (this.filled > 0) {
      offset = Math.min(64 - this.filled, data.length);
      this.block.set(data.subarray(0, offset), this.filled);
      this.filled += offset;
      if (this.filled < 64) return this;
      this.compress(this.blockView, 0);
      this.filled = 0;
    }
    const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
    for (; offset + 64 <= data.length; offset += 64) this.compress(view, offset);
    this.block.set(data.subarray(offset), 0);
    this.filled = data.length - offset;
    return this;
  }

  /** The digest as 64 lowercase hex digits. Call it once: it pads what was fed. */
  hex(): string {
    const bits = this.length * 8;
    const padding = new Uint8Array((this.filled < 56 ? 64 : 128) - this.filled);
    padding[0] = 0x80;
    const view = new DataView(padding.buffer);
    view.setUint32(padding.length - 8, Math.floor(bits / 2 ** 32));
    view.setUint32(padding.length - 4, bits >>> 0);
    this.update(padding);
    return [this.h0, this.h1, this.h2, this.h3, this.h4, this.h5, this.h6, this.h7]
      .map((word) => (word >>> 0).toString(16).padStart(8, '0'))
      .join('');
  }

  private compress(input: DataView, offset: number): void {
    // Indexes stay within 0..63: `?? 0` is there for noUncheckedIndexedAccess only.
    for (let i = 0; i < 16; i += 1) W[i] = input.getInt32(offset + i * 4);
    for (let i = 16; i < 64; i += 1) {
      const w15 = W[i - 15] ?? 0;
      const w2 = W[i - 2] ?? 0;
      const s0 = rotr(w15, 7) ^ rotr(w15, 18) ^ (w15 >>> 3);
      const s1 = rotr(w2, 17) ^ rotr(w2, 19) ^ (w2 >>> 10);
      W[i] = (W[i - 16] ?? 0) + s0 + (W[i - 7] ?? 0) + s1;
    }
    let a = this.h0;
    let b = this.h1;
    let c = this.h2;
    let d = this.h3;
    let e = this.h4;
    let f = this.h5;
    let g = this.h6;
    let h = this.h7;
    for (let i = 0; i < 64; i += 1) {
      const s1 = rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25);
      const t1 = (h + s1 + ((e & f) ^ (~e & g)) + (K[i] ?? 0) + (W[i] ?? 0)) | 0;
      const t2 = ((rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c))) | 0;
      h = g;
      g = f;
      f = e;
      e = (d + t1) | 0;
      d = c;
      c = b;
      b = a;
      a = (t1 + t2) | 0;
    }
    this.h0 = (this.h0 + a) | 0;
    this.h1 = (this.h1 + b) | 0;
    this.h2 = (this.h2 + c) | 0;
    this.h3 = (this.h3 + d) | 0;
    this.h4 = (this.h4 + e) | 0;
    this.h5 = (this.h5 + f) | 0;
    this.h6 = (this.h6 + g) | 0;
    this.h7 = (this.h7 + h) | 0;
  }
}

/** The message schedule, shared: a block is compressed in one synchronous call. */
const W = new Int32Array(64);

function rotr(x: number, n: number): number {
  return (x >>> n) | (x << (32 - n));
}

/** The round constants: the first 32 bits of the fractional parts of the first 64 primes' cube roots. */
const K = Uint32Array.of(
  0x428a2f98,
  0x71374491,
  0xb5c0fbcf,
  0xe9b5dba5,
  0x3956c25b,
  0x59f111f1,
  0x923f82a4,
  0xab1c5ed5,
  0xd807aa98,
  0x12835b01,
  0x243185be,
  0x550c7dc3,
  0x72be5d74,
  0x80deb1fe,
  0x9bdc06a7,
  0xc19bf174,
  0xe49b69c1,
  0xefbe4786,
  0x0fc19dc6,
  0x240ca1cc,
  0x2de92c6f,
  0x4a7484aa,
  0x5cb0a9dc,
  0x76f988da,
  0x983e5152,
  0xa831c66d,
  0xb00327c8,
  0xbf597fc7,
  0xc6e00bf3,
  0xd5a79147,
  0x06ca6351,
  0x14292967,
  0x27b70a85,
  0x2e1b2138,
  0x4d2c6dfc,
  0x53380d13,
  0x650a7354,
  0x766a0abb,
  0x81c2c92e,
  0x92722c85,
  0xa2bfe8a1,
  0xa81a664b,
  0xc24b8b70,
  0xc76c51a3,
  0xd192e819,
  0xd6990624,
  0xf40e3585,
  0x106aa070,
  0x19a4c116,
  0x1e376c08,
  0x2748774c,
  0x34b0bcb5,
  0x391c0cb3,
  0x4ed8aa4a,
  0x5b9cca4f,
  0x682e6ff3,
  0x748f82ee,
  0x78a5636f,
  0x84c87814,
  0x8cc70208,
  0x90befffa,
  0xa4506ceb,
  0xbef9a3f7,
  0xc67178f2,
);
