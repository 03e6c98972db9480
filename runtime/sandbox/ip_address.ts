/**
 * Which IP addresses are inside the host or its networks: the one classifier every door that connects on a
 * job's behalf asks (the sandbox's proxy, `http_fetch`). An address is compared as bytes, so every spelling
 * of it (`0:0:0:0:0:0:0:1`, `::ffff:127.0.0.1`, `::ffff:7f00:1`) is the same address.
 *
 * Internal: loopback, unspecified, private, shared (CGNAT), link-local, site-local, unique local, multicast,
 * the IETF protocol block (192.0.0.0/24), the benchmarking block (198.18.0.0/15), `0.0.0.0/8`, the reserved
 * `240.0.0.0/4`, every IPv6 form that carries an IPv4 address (mapped, compatible, translated, 6to4) when that
 * address is internal, every NAT64 address (64:ff9b::/96 and 64:ff9b:1::/48 reach IPv4 hosts through the
 * network's own translator, so which host they reach is the network's to say) and this host's own addresses,
 * which a service bound to "all interfaces" answers on whatever network they are in.
 */

/** 4 for an IPv4 address, 6 for an IPv6 one (without brackets or zone), else 0. */
export function isIP(text: string): 0 | 4 | 6 {
  const bytes = addressBytes(text);
  return bytes === null ? 0 : bytes.length === 4 ? 4 : 6;
}

/** The address as 4 or 16 bytes, or null when `text` is not one (dotted quad, or IPv6 text form). */
export function addressBytes(text: string): Uint8Array | null {
  return ipv4Bytes(text) ?? ipv6Bytes(text);
}

function ipv4Bytes(text: string): Uint8Array | null {
  const parts = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(text);
  if (!parts) return null;
  const numbers = parts.slice(1);
  if (numbers.some((part) => Number(part) > 255 || /^0\d/.test(part))) return null;
  return Uint8Array.from(numbers.map(Number));
}

function ipv6Bytes(text: string): Uint8Array | null {
  if (!text.includes(":") || !/^[0-9A-Fa-f:.]+$/.test(text)) return null;
  const halves = text.split("::");
  if (halves.length > 2) return null;
  const groups = (half: string): number[] | null => {
    if (half === "") return [];
    const words: number[] = [];
    const pieces = half.split(":");
    for (const [index, piece] of pieces.entries()) {
      if (piece.includes(".")) {
        // A trailing dotted quad is the last two words.
        const v4 = index === pieces.length - 1 ? ipv4Bytes(piece) : null;
        if (v4 === null) return null;
        words.push((v4[0]! << 8) | v4[1]!, (v4[2]! << 8) | v4[3]!);
      } else if (/^[0-9A-Fa-f]{1,4}$/.test(piece)) words.push(parseInt(piece, 16));
      else return null;
    }
    return words;
  };
  const head = groups(halves[0]!);
  const tail = halves.length === 2 ? groups(halves[1]!) : [];
  if (head === null || tail === null) return null;
  // A dotted quad ends the address: none before `::`.
  if (halves.length === 2 && halves[0]!.includes(".")) return null;
  const missing = 8 - head.length - tail.length;
  if (halves.length === 2 ? missing < 1 : missing !== 0) return null;
  const words = [...head, ...new Array<number>(missing).fill(0), ...tail];
  const bytes = new Uint8Array(16);
  words.forEach((word, i) => {
    bytes[2 * i] = word >> 8;
    bytes[2 * i + 1] = word & 0xff;
  });
  return bytes;
}

/**
 * One spelling per address: IPv4 as a dotted quad (also for an IPv4-mapped IPv6 address), IPv6 as eight
 * lower-case hex words. For comparing addresses, not for showing them.
 */
export function canonicalAddress(text: string): string | null {
  const bytes = addressBytes(text.replace(/^\[(.*)\]$/, "$1").replace(/%.*$/, ""));
  if (bytes === null) return null;
  if (bytes.length === 4) return bytes.join(".");
  if (startsWith(bytes, MAPPED)) return [...bytes.subarray(12)].join(".");
  const words: string[] = [];
  for (let i = 0; i < 16; i += 2) words.push(((bytes[i]! << 8) | bytes[i + 1]!).toString(16));
  return words.join(":");
}

/** True when `a` and `b` spell the same address. */
export function sameAddress(a: string, b: string): boolean {
  const [x, y] = [canonicalAddress(a), canonicalAddress(b)];
  return x !== null && x === y;
}

const MAPPED = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff];
const TRANSLATED = [0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0, 0];
const COMPATIBLE = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0];
const NAT64 = [0, 0x64, 0xff, 0x9b, 0, 0, 0, 0, 0, 0, 0, 0];
const NAT64_LOCAL = [0, 0x64, 0xff, 0x9b, 0, 1];
const SIX_TO_FOUR = [0x20, 0x02];

function startsWith(bytes: Uint8Array, prefix: readonly number[]): boolean {
  return prefix.every((byte, i) => bytes[i] === byte);
}

export interface InternalOptions {
  /**
   * This host's own addresses (`ownAddresses()`), canonical. Without them only the fixed ranges count: a
   * host's public address is then external.
   */
  own?: ReadonlySet<string>;
}

/**
 * True for an address inside the host or its networks (see the module comment). Text that is not an address
 * counts as internal: a caller that cannot tell must not connect.
 */
export function isInternalAddress(address: string, options: InternalOptions = {}): boolean {
  const text = address.replace(/^\[(.*)\]$/, "$1");
  // A zone (`fe80::1%eth0`) only exists on link-local addresses.
  if (text.includes("%")) return true;
  const bytes = addressBytes(text);
  if (bytes === null) return true;
  if (options.own?.has(canonicalAddress(text)!)) return true;
  return bytes.length === 4 ? internalV4(bytes) : internalV6(bytes, options);
}

function internalV4(bytes: Uint8Array): boolean {
  const [a, b, c] = bytes as unknown as [number, number, number];
  return a === 0 || a === 10 || a === 127 || a >= 224 ||
    (a === 100 && b >= 64 && b < 128) || (a === 169 && b === 254) ||
    (a === 172 && b >= 16 && b < 32) || (a === 192 && b === 168) ||
    (a === 192 && b === 0 && c === 0) || (a === 198 && (b === 18 || b === 19));
}

function internalV6(bytes: Uint8Array, options: InternalOptions): boolean {
  const embedded = (from: number) =>
    isInternalAddress([...bytes.subarray(from, from + 4)].join("."), options);
  if (startsWith(bytes, MAPPED) || startsWith(bytes, TRANSLATED)) return embedded(12);
  // ::/96 holds :: and ::1 and the deprecated IPv4-compatible form.
  if (startsWith(bytes, COMPATIBLE)) return true;
  if (startsWith(bytes, NAT64) || startsWith(bytes, NAT64_LOCAL)) return true;
  if (startsWith(bytes, SIX_TO_FOUR)) return embedded(2);
  const [a, b] = bytes as unknown as [number, number];
  // fc00::/7 unique local, fe80::/10 link-local, fec0::/10 site-local, ff00::/8 multicast.
  return (a & 0xfe) === 0xfc || (a === 0xfe && (b & 0xc0) >= 0x80) || a === 0xff;
}

/** This host's addresses on every interface, canonical (`Deno.networkInterfaces()`; empty if it fails). */
export function ownAddresses(): Set<string> {
  const own = new Set<string>();
  try {
    for (const entry of Deno.networkInterfaces()) {
      const canonical = canonicalAddress(entry.address);
      if (canonical !== null) own.add(canonical);
    }
  } catch {
    // no permission to list interfaces: only the fixed ranges count
  }
  return own;
}
