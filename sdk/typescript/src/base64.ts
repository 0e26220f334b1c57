// Base64 both ways (fs/read's dataBase64, fs/write's): neither Buffer nor atob exists in the
// sandbox, so the SDK has its own.

const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
const values = new Map<string, number>([...alphabet].map((c, i) => [c, i]));

export function toBase64(bytes: Uint8Array): string {
  let out = '';
  for (let i = 0; i < bytes.length; i += 3) {
    const a = bytes[i]!;
    const b = i + 1 < bytes.length ? bytes[i + 1]! : 0;
    const c = i + 2 < bytes.length ? bytes[i + 2]! : 0;
    const n = (a << 16) | (b << 8) | c;
    out += alphabet[(n >> 18) & 63]! + alphabet[(n >> 12) & 63]!;
    out += i + 1 < bytes.length ? alphabet[(n >> 6) & 63]! : '=';
    out += i + 2 < bytes.length ? alphabet[n & 63]! : '=';
  }
  return out;
}

/** The bytes of `text`; throws a TypeError naming the first character that is not base64. */
export function fromBase64(text: string): Uint8Array {
  const clean = text.replace(/[\s=]+$/u, '').replace(/\s+/gu, '');
  const out = new Uint8Array(Math.floor((clean.length * 3) / 4));
  let bits = 0;
  let count = 0;
  let n = 0;
  for (let i = 0; i < clean.length; ++i) {
    const v = values.get(clean[i]!);
    if (v === undefined) throw new TypeError(`not base64: "${clean[i]}" at ${i}`);
    bits = (bits << 6) | v;
    count += 6;
    if (count >= 8) {
      count -= 8;
      out[n++] = (bits >> count) & 0xff;
    }
  }
  return out.subarray(0, n);
}
