/**
 * `http_fetch {url}`: an HTTP(S) GET to a host in `tools.http_fetch.hosts`.
 *
 * Host entries are `host`, `host:port`, `*.domain` or `*.domain:port` (IPv6 as `[::1]`). An entry
 * without a port matches the host on any port; `*.example.com` matches subdomains of example.com at
 * any depth but not example.com itself; `*` matches every host. With no `hosts` list nothing is
 * allowed. Redirects are followed by hand (at most 5), each hop checked against the list. The body is
 * capped at `max_output` (default 256KiB) and the call at `timeout` (default 30s). The result is
 * `HTTP <status>\n<body>`; status "error" for 4xx/5xx.
 */
import { ALLOWED, denied, type RuleVerdict, type Tool, type ToolContext, type ToolOutcome } from "./tool.ts";
import { CappedBytes, readCapped } from "./_capped.ts";
import { formatDuration } from "../core/duration.ts";
import { ValidationError } from "../core/errors.ts";

export interface HttpFetchOptions {
  hosts: readonly string[];
  timeoutMs: number;
  maxOutput: number;
  fetch: typeof fetch;
}

interface HostEntry {
  /** Hostname as URL normalises it; for `*.domain` the `.domain` suffix. */
  host: string;
  wildcard: boolean;
  port: string | null;
}

const MAX_REDIRECTS = 5;
/** The host list of a call the approver allowed: it and its redirects go to any host. */
const ANY_HOST: HostEntry[] = [{ host: "", wildcard: true, port: null }];
const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);

export function httpFetchTool(options: HttpFetchOptions): Tool {
  const entries = options.hosts.map(parseHostEntry);
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
    check(args): RuleVerdict {
      if (typeof args.url !== "string" || args.url === "") return ALLOWED;
      const reason = checkUrl(args.url, entries);
      if (reason === null) return ALLOWED;
      // Outside the host list (not an invalid or non-http URL): the approver may allow it.
      const askable = checkUrl(args.url, ANY_HOST) === null;
      return {
        allowed: false,
        reason,
        rule: askable ? `tools.http_fetch.hosts: ["${new URL(args.url).host}"]` : null,
      };
    },
    run: (args, context) => fetchAllowed(args.url, context.approved ? ANY_HOST : entries, options, context),
  };
}

async function fetchAllowed(
  url: unknown,
  entries: HostEntry[],
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
  try {
    let current = url;
    for (let hop = 0;; hop++) {
      const reason = checkUrl(current, entries);
      if (reason) return denied(hop === 0 ? reason : `redirect to ${reason}`);
      const response = await fetchUrl(current, { redirect: "manual", signal });
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
    return error(`Cannot fetch "${url}": ${cause instanceof Error ? cause.message : String(cause)}`);
  } finally {
    clearTimeout(timer);
  }
}

/** Why `url` may not be fetched, or null. */
function checkUrl(url: string, entries: HostEntry[]): string | null {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return `"${url}" is not a valid URL`;
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") return `"${url}" is not an http(s) URL`;
  const port = parsed.port || (parsed.protocol === "https:" ? "443" : "80");
  const host = parsed.hostname;
  const allowed = entries.some((e) =>
    (e.port === null || e.port === port) &&
    (e.wildcard ? host.endsWith(e.host) : e.host === host)
  );
  return allowed ? null : `"${url}" is not in tools.http_fetch.hosts (host ${host}:${port})`;
}

function parseHostEntry(entry: string): HostEntry {
  const match = /^(\*\.|\*$)?(\[[0-9a-fA-F:.]+\]|[^:[\]/]*)(?::(\d{1,5}))?$/.exec(entry.trim());
  const invalid = () =>
    new ValidationError(`tools.http_fetch.hosts: "${entry}" is not a host, host:port or *.domain entry`);
  if (!match) throw invalid();
  const [, star, name, port] = match;
  if (star === "*") return { host: "", wildcard: true, port: null };
  let host: string;
  try {
    host = new URL(`http://${name}`).hostname;
  } catch {
    throw invalid();
  }
  if (name === "") throw invalid();
  return { host: star ? `.${host}` : host, wildcard: star !== undefined, port: port ?? null };
}

function error(message: string): ToolOutcome {
  return { status: "error", content: `error: ${message}` };
}
