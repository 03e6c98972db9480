/**
 * Host lists of a sandbox's network (`net: ["api.github.com", "*.example.com:443"]`): the grammar, the
 * match, and which addresses count as internal. Same grammar as plugin grants: `host` or `host:port`, a
 * host without a port covering every port; IPv6 literals in brackets (`[::1]:8080`). `*.example.com`
 * covers every name below example.com (`a.example.com`, `a.b.example.com`), not example.com itself.
 * Which addresses are internal is ip_address.ts's to say.
 */
import { ValidationError } from "../core/errors.ts";
import { isIP, sameAddress } from "./ip_address.ts";

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

/** True when `rule` names `address` itself (an IP literal grant), the only way to reach an internal address. */
export function namesAddress(rule: HostRule, address: string): boolean {
  return !rule.wildcard && isIP(rule.host) !== 0 && sameAddress(rule.host, address);
}
