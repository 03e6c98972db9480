/**
 * `http_fetch {url}`: an HTTP(S) GET to a host in `tools.http_fetch.hosts`.
 *
 * Host entries follow the sandbox host grammar (net_hosts.ts): `host`, `host:port`, `*.domain` or
 * `*.domain:port` (IPv6 as `[::1]`), and `*` alone for every host name. An entry without a port matches
 * the host on any port; `*.example.com` matches names below example.com at any depth but not example.com
 * itself. With no `hosts` list nothing is allowed. Redirects are followed by hand (at most 5), each hop
 * checked against the list.
 *
 * Every request goes through a filtering proxy of this process (net_proxy.ts, on loopback, with a secret
 * Proxy-Authorization): it resolves the name, refuses internal addresses (ip_address.ts: loopback,
 * private, link-local, this host's own, …) unless the entry names that address itself, and connects to the
 * address it checked, so DNS cannot swap in another one between check and connect. The body is capped at
 * `max_output` (default 256KiB) and the call at `timeout` (default 30s). The result is
 * `HTTP <status>\n<body>`; status "error" for 4xx/5xx.
 */
import {
  ALLOWED,
  type CallNeeds,
  denied,
  type Tool,
  type ToolContext,
  type ToolOutcome,
  type ToolScope,
} from "./tool.ts";
import { CappedBytes, readCapped } from "./_capped.ts";
import { formatDuration } from "../core/duration.ts";
import { ValidationError } from "../core/errors.ts";
import { type HostRule, matchHost, parseHostRule } from "../sandbox/net_hosts.ts";
import { type Refusal, startLoopbackProxy } from "../sandbox/net_proxy.ts";

export interface HttpFetchOptions {
  hosts: readonly string[];
  timeoutMs: number;
  maxOutput: number;
  fetch: typeof fetch;
}

/** The parsed host list; `any`: a `*` entry (every name, no internal address). */
type HostList = NonNullable<ToolScope["hosts"]>;

const MAX_REDIRECTS = 5;
/** Every host name (no internal address): what decides whether a URL could be allowed at all. */
const ANY_HOST: HostList = { rules: [], any: true };
const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);

export function httpFetchTool(options: HttpFetchOptions): Tool {
  const entries = parseHostEntries(options.hosts);
  return {
    spec: {
      name: "http_fetch",
      description: `HTTP GET a URL and return "HTTP <status>" and the body. Allowed hosts: ${
        options.hosts.join(", ") || "none"
      }.`,
      parameters: {
        type: "object",
        properties: { url: { type: "string", description: "An http:// or https:// URL" } },
        required: ["url"],
        additionalProperties: false,
      },
    },
    needs(args): CallNeeds {
      const granted = { hosts: entries };
      if (typeof args.url !== "string" || args.url === "") return { verdict: ALLOWED, scope: granted };
      const reason = checkUrl(args.url, entries);
      if (reason === null) return { verdict: ALLOWED, scope: granted };
      // Outside the host list (not an invalid or non-http URL): an approver may allow it, for this call's
      // own host (an address it names included) and, by redirect, any other name.
      const askable = checkUrl(args.url, ANY_HOST) === null;
      return {
        verdict: {
          allowed: false,
          reason,
          rule: askable ? `tools.http_fetch.hosts: ["${new URL(args.url).host}"]` : null,
        },
        scope: { hosts: askable ? hostsOf(args.url) : { rules: [], any: false } },
      };
    },
    run: (args, context, scope) =>
      scope.hosts === undefined
        ? Promise.resolve(denied("the call was granted no hosts"))
        : fetchAllowed(args.url, scope.hosts, options, context),
  };
}

async function fetchAllowed(
  url: unknown,
  entries: HostList,
  options: HttpFetchOptions,
  context: ToolContext,
): Promise<ToolOutcome> {
  if (typeof url !== "string" || url === "") {
    return {
      status: "error",
      content: `error: invalid arguments for http_fetch: "url" must be a non-empty string`,
    };
  }
  const fetchUrl = options.fetch;
  const timeout = new AbortController();
  const timer = setTimeout(() => timeout.abort(), options.timeoutMs);
  const signal = AbortSignal.any([context.signal, timeout.signal]);
  const token = crypto.randomUUID();
  let refusal: Refusal | null = null;
  const proxy = startLoopbackProxy({
    match: (host, port) => ruleFor(entries, host, port),
    onRefusal: (found) => refusal = found,
    authorization: `Basic ${btoa(`hermes:${token}`)}`,
  });
  const client = Deno.createHttpClient({
    proxy: { url: `http://127.0.0.1:${proxy.port}`, basicAuth: { username: "hermes", password: token } },
  });
  const refused = (hop: number, at: string): ToolOutcome | null => {
    if (refusal === null) return null;
    const found: Refusal = refusal;
    return denied(`${hop === 0 ? "" : "redirect to "}"${at}" ${found.reason}`);
  };
  let hop = 0;
  let current = url;
  try {
    for (;; hop++) {
      const reason = checkUrl(current, entries);
      if (reason) return denied(hop === 0 ? reason : `redirect to ${reason}`);
      const response = await fetchUrl(current, { redirect: "manual", signal, client });
      const stopped = refused(hop, current);
      if (stopped) {
        await response.body?.cancel();
        return stopped;
      }
      const location = response.headers.get("location");
      if (REDIRECT_STATUSES.has(response.status) && location !== null) {
        await response.body?.cancel();
        if (hop === MAX_REDIRECTS) {
          return error(`Cannot fetch "${url}": more than ${MAX_REDIRECTS} redirects`);
        }
        current = new URL(location, current).href;
        continue;
      }
      const body = new CappedBytes(options.maxOutput);
      if (response.body) await readCapped(response.body, body, { stopWhenFull: true });
      return {
        status: response.status >= 400 ? "error" : "ok",
        content: `HTTP ${response.status}\n${body.text()}`,
      };
    }
  } catch (cause) {
    if (timeout.signal.aborted) {
      return error(`Cannot fetch "${url}": timed out after ${formatDuration(options.timeoutMs)}`);
    }
    if (context.signal.aborted) return error("cancelled");
    const stopped = refused(hop, current);
    if (stopped) return stopped;
    return error(`Cannot fetch "${url}": ${cause instanceof Error ? cause.message : String(cause)}`);
  } finally {
    clearTimeout(timer);
    client.close();
    proxy.close();
  }
}

/**
 * The rule the proxy applies to a connection: the entry that admits it. Only a literal entry names an
 * address (net_hosts.ts namesAddress); a `*` entry admits every name and no internal address.
 */
function ruleFor(entries: HostList, host: string, port: number): HostRule | null {
  const rule = matchHost(entries.rules, host, port);
  if (rule !== null) return rule;
  return entries.any ? { host: "", wildcard: true, port: null, text: "*" } : null;
}

/** The URL's own host (an address it names included) and every other name. */
function hostsOf(url: string): HostList {
  try {
    return { rules: [parseHostRule(new URL(url).hostname)], any: true };
  } catch {
    return ANY_HOST;
  }
}

/** Why `url` may not be fetched, or null. */
function checkUrl(url: string, entries: HostList): string | null {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return `"${url}" is not a valid URL`;
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") return `"${url}" is not an http(s) URL`;
  const port = Number(parsed.port || (parsed.protocol === "https:" ? "443" : "80"));
  const host = parsed.hostname;
  const allowed = entries.any || matchHost(entries.rules, host, port) !== null;
  return allowed ? null : `"${url}" is not in tools.http_fetch.hosts (host ${host}:${port})`;
}

function parseHostEntries(list: readonly string[]): HostList {
  const rules: HostRule[] = [];
  let any = false;
  for (const entry of list) {
    if (entry.trim() === "*") {
      any = true;
      continue;
    }
    try {
      // As URLs write hosts (an IPv4 address in its dotted form, a name in lower case and punycode).
      const rule = parseHostRule(entry);
      rules.push({ ...rule, host: canonical(rule) });
    } catch {
      throw new ValidationError(
        `tools.http_fetch.hosts: "${entry}" is not a host, host:port, *.domain or [v6]:port entry`,
      );
    }
  }
  return { rules, any };
}

function canonical(rule: HostRule): string {
  const host = rule.host.includes(":") ? `[${rule.host}]` : rule.host;
  return new URL(`http://${host}/`).hostname.replace(/^\[(.*)\]$/, "$1");
}

function error(message: string): ToolOutcome {
  return { status: "error", content: `error: ${message}` };
}
