/**
 * How a trust policy's patterns match a job's values: on parsed values, never on the text. A string
 * pattern match lets `https://*.openai.azure.com/*` admit `https://ATTACKER/.openai.azure.com/` (the
 * host is ATTACKER) and `*.example.com` admit `127.0.0.1#.example.com`; so URLs are split into scheme,
 * host, port and path, hosts into labels, and each part is compared on its own.
 *
 * - URL patterns (models.base_urls, mcp.urls, approval.urls): `scheme://host[:port]/path`. In the host `*`
 *   stands for exactly one label (`*.openai.azure.com` admits `x.openai.azure.com`, not `a.b.openai.azure.com`
 *   nor `openai.azure.com`); without a port the scheme's default port; `:*` any port; in the path `*` covers
 *   anything (`/*` every path). A pattern `*` alone admits every URL.
 * - Host patterns (network.hosts) are host rules in the sandbox grammar (net_hosts.ts), the meaning the proxy
 *   and http_fetch enforce: `*.example.com` covers the names below example.com, a rule without a port every
 *   port. A job's host rule is admitted when a pattern covers everything it grants. `*` alone admits every
 *   rule.
 * - Name patterns (api_key_envs, env, commands): `*` covers any run of characters.
 */
import { HOST_RULE_PATTERN, type HostRule, parseHostRule } from "../sandbox/net_hosts.ts";
import { isIP } from "../sandbox/ip_address.ts";

/** `*` covers any run of characters (names: variables, programs). */
export function nameMatchesAny(value: string, patterns: readonly string[]): boolean {
  return patterns.some((pattern) => globRegExp(pattern, ".*").test(value));
}

/** True when a URL pattern admits `value` (see the module comment). */
export function urlMatchesAny(value: string, patterns: readonly string[]): boolean {
  const url = parseUrl(value);
  return url !== null && patterns.some((pattern) => pattern.trim() === "*" || urlMatches(url, pattern));
}

/** True when a host pattern covers every host and port the job's host rule `value` grants. */
export function hostCoveredByAny(value: string, patterns: readonly string[]): boolean {
  if (value.trim() === "*") return patterns.some((pattern) => pattern.trim() === "*");
  const rule = tryHostRule(value);
  if (rule === null) return false;
  return patterns.some((pattern) => {
    if (pattern.trim() === "*") return true;
    const allowed = tryHostRule(pattern);
    return allowed !== null && covers(allowed, rule);
  });
}

/** The grammar of a URL pattern (`*` alone, or scheme://host[:port][/path]), for the policy schema. */
export const URL_PATTERN =
  /^([A-Za-z*][A-Za-z0-9+.*-]*):\/\/(\[[0-9A-Fa-f:.]+\]|[^/?#:@\[\]\s]+)(?::(\d{1,5}|\*))?([/?][^#\s]*)?$|^\*$/;
export const URL_PATTERN_EXPECTED =
  "expected a URL pattern: scheme://host[:port]/path, * for one host label or any path (or * alone: every URL)";
/** The grammar of a host pattern: a sandbox host rule or `*` alone. */
export const HOST_PATTERN = new RegExp(`${HOST_RULE_PATTERN.source}|^\\*$`);
export const HOST_PATTERN_EXPECTED =
  'expected host or host:port ("api.github.com", "*.example.com:443", "[::1]:8080") or * alone';

interface ParsedUrl {
  scheme: string;
  host: string;
  port: string;
  path: string;
}

const DEFAULT_PORTS: Record<string, string> = { http: "80", https: "443", ws: "80", wss: "443" };

function parseUrl(value: string): ParsedUrl | null {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return null;
  }
  const scheme = url.protocol.replace(/:$/, "");
  // Credentials in the URL are not part of any pattern: a URL carrying them is never admitted.
  if (url.username !== "" || url.password !== "" || url.hostname === "") return null;
  return {
    scheme,
    host: url.hostname.replace(/\.$/, ""),
    port: url.port || DEFAULT_PORTS[scheme] || "",
    path: url.pathname + url.search,
  };
}

interface UrlPattern {
  scheme: string;
  /** Lower-case labels; `*` in a label stays a wildcard within that label. */
  labels: string[];
  /** null: the scheme's default port; "*": any. */
  port: string | null;
  path: string;
}

function splitUrlPattern(pattern: string): UrlPattern | null {
  const match = URL_PATTERN.exec(pattern.trim());
  if (!match || match[1] === undefined) return null;
  const [, scheme, host, port, path] = match;
  let labels: string[];
  if (host!.startsWith("[") || !host!.includes("*")) {
    // A literal host, normalised as URLs normalise theirs (case, IPv4 forms, IPv6 brackets, IDN).
    try {
      labels = new URL(`http://${host}/`).hostname.replace(/\.$/, "").split(".");
    } catch {
      return null;
    }
    if (host!.startsWith("[")) labels = [new URL(`http://${host}/`).hostname];
  } else {
    labels = host!.toLowerCase().replace(/\.$/, "").split(".");
    if (labels.some((label) => !/^[a-z0-9_*-]+$/.test(label))) return null;
  }
  return { scheme: scheme!.toLowerCase(), labels, port: port ?? null, path: path ?? "/" };
}

function urlMatches(url: ParsedUrl, text: string): boolean {
  const pattern = splitUrlPattern(text);
  if (pattern === null) return false;
  if (!globRegExp(pattern.scheme, ".*").test(url.scheme)) return false;
  const port = pattern.port === null ? DEFAULT_PORTS[url.scheme] ?? "" : pattern.port;
  if (port !== "*" && port !== url.port) return false;
  if (!hostMatches(url.host, pattern.labels)) return false;
  return globRegExp(pattern.path, ".*").test(url.path);
}

function hostMatches(host: string, labels: readonly string[]): boolean {
  if (isIP(host.replace(/^\[(.*)\]$/, "$1")) === 6 || labels.length === 1 && labels[0]!.startsWith("[")) {
    return labels.length === 1 && labels[0] === host;
  }
  const parts = host.split(".");
  return parts.length === labels.length &&
    labels.every((label, i) => parts[i] !== "" && globRegExp(label, "[^.]*").test(parts[i]!));
}

function tryHostRule(text: string): HostRule | null {
  try {
    return parseHostRule(text);
  } catch {
    return null;
  }
}

/** Does `allowed` grant every host and port `rule` grants? */
function covers(allowed: HostRule, rule: HostRule): boolean {
  if (allowed.port !== null && allowed.port !== rule.port) return false;
  const host = canonicalHost(rule.host);
  const base = canonicalHost(allowed.host);
  if (allowed.wildcard) return host.endsWith(`.${base}`) || (rule.wildcard && host === base);
  return !rule.wildcard && host === base;
}

function canonicalHost(host: string): string {
  try {
    return new URL(`http://${isIP(host) === 6 ? `[${host}]` : host}/`).hostname.replace(/^\[(.*)\]$/, "$1");
  } catch {
    return host;
  }
}

function globRegExp(pattern: string, star: string): RegExp {
  const source = pattern.split("*").map((part) => part.replace(/[\\^$.+?()[\]{}|/-]/g, "\\$&")).join(star);
  return new RegExp(`^${source}$`, "s");
}
