/**
 * Host lists of a sandbox's network (`net: ["api.github.com", "*.example.com:443"]`): the grammar, the
 * match, and which addresses count as internal. Same grammar as plugin grants: `host` or `host:port`, a
 * host without a port covering every port; IPv6 literals in brackets (`[::1]:8080`). `*.example.com`
 * covers every name below example.com (`a.example.com`, `a.b.example.com`), not example.com itself.
 */
import { ValidationError } from "../core/errors.ts";

const LABEL = "[A-Za-z0-9_](?:[A-Za-z0-9_-]*[A-Za-z0-9_])?";

/** The grammar as a pattern (for the job schema); `parseHostRule` also checks ports and wildcards. */
export const HOST_RULE_PATTERN = new RegExp(
  `^(?:(?:\\*\\.)?${LABEL}(?:\\.${LABEL})*\\.?|\\[[0-9A-Fa-f:.]+\\])(?::\\d{1,5})?$`,
);
export const HOST_RULE_EXPECTED =
  'expected host or host:port ("api.github.com", "*.example.com:443", "[::1]:8080")';

export interface HostRule {
  /** Lower case, without brackets; for a wildcard the suffix after `*.` (`example.com`). */
  host: string;
  wildcard: boolean;
  /** null: every port. */
  port: number | null;
  /** The rule as written, for messages. */
  text: string;
}

export function parseHostRule(text: string): HostRule {
  const bad = (why: string): never => {
    throw new ValidationError(`Cannot use "${text}" as a network host: ${why} (expected host or host:port)`);
  };
  let host = text.trim().toLowerCase();
  let port: number | null = null;
  const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(host);
  if (bracketed) {
    host = bracketed[1]!;
    if (isIP(host) !== 6) bad("brackets hold an IPv6 address");
    if (bracketed[2] !== undefined) port = Number(bracketed[2]);
  } else if (isIP(host) !== 6) {
    const colon = host.lastIndexOf(":");
    if (colon >= 0) {
      const digits = host.slice(colon + 1);
      if (!/^\d+$/.test(digits)) bad(`the port "${digits}" is not a number`);
      port = Number(digits);
      host = host.slice(0, colon);
    }
  }
  if (port !== null && (port < 1 || port > 65535)) bad("the port is outside 1–65535");
  const wildcard = host.startsWith("*.");
  if (wildcard) host = host.slice(2);
  if (host === "") bad("the host is empty");
  if (
    isIP(host) === 0 &&
    !/^[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?(\.[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?)*\.?$/.test(host)
  ) {
    bad(host.includes("*") ? "only a leading *. is a wildcard" : "it is not a host name or IP address");
  }
  if (wildcard && isIP(host) !== 0) bad("a wildcard covers names, not addresses");
  return { host: host.replace(/\.$/, ""), wildcard, port, text };
}

export function parseHostList(list: readonly string[]): HostRule[] {
  return list.map(parseHostRule);
}

/** The rule that lets `host:port` through, or null. `host` as it came in the request (any case, brackets). */
export function matchHost(rules: readonly HostRule[], host: string, port: number): HostRule | null {
  const name = host.toLowerCase().replace(/^\[(.*)\]$/, "$1").replace(/\.$/, "");
  return rules.find((rule) =>
    (rule.port === null || rule.port === port) &&
    (rule.wildcard ? name.endsWith(`.${rule.host}`) : name === rule.host)
  ) ?? null;
}

/**
 * Addresses inside the host or its networks: loopback, link-local, private, shared (CGNAT), unspecified,
 * multicast and IPv4-mapped/compatible forms of them. A name that resolves to one is refused unless the rule
 * names that address itself (DNS of a granted name is not a grant of the local network).
 */
export function isInternalAddress(address: string): boolean {
  if (isIP(address) === 4) {
    const [a, b] = address.split(".").map(Number) as [number, number];
    return a === 0 || a === 10 || a === 127 || a >= 224 ||
      (a === 100 && b >= 64 && b < 128) || (a === 169 && b === 254) ||
      (a === 172 && b >= 16 && b < 32) || (a === 192 && b === 168);
  }
  const v6 = address.toLowerCase();
  const mapped = /^::(?:ffff:)?(\d+\.\d+\.\d+\.\d+)$/.exec(v6);
  if (mapped) return isInternalAddress(mapped[1]!);
  if (v6 === "::" || v6 === "::1") return true;
  // fe80::/10 link-local, fc00::/7 unique local, ff00::/8 multicast, ::ffff:0:0/96 in hex form.
  return /^(fe[89ab]|f[cd]|ff)/.test(v6) || v6.startsWith("::ffff:");
}

/** True when `rule` names `address` itself (an IP literal grant), the only way to reach an internal address. */
export function namesAddress(rule: HostRule, address: string): boolean {
  return !rule.wildcard && isIP(rule.host) !== 0 && sameAddress(rule.host, address);
}

function sameAddress(a: string, b: string): boolean {
  const plain = (address: string) => address.toLowerCase().replace(/^::ffff:(\d+\.\d+\.\d+\.\d+)$/, "$1");
  return plain(a) === plain(b);
}

/** 4 for an IPv4 address, 6 for an IPv6 one (without brackets), else 0 (node:net's isIP, without loading node:net). */
export function isIP(text: string): 0 | 4 | 6 {
  const v4 = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(text);
  if (v4) return v4.slice(1).every((part) => Number(part) <= 255 && !/^0\d/.test(part)) ? 4 : 0;
  if (!text.includes(":") || !/^[0-9A-Fa-f:.]+$/.test(text)) return 0;
  try {
    new URL(`http://[${text}]/`);
    return 6;
  } catch {
    return 0;
  }
}
