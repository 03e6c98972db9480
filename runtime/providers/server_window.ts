/**
 * The real window of an OpenAI-compatible server, where the server tells. Local servers often run a smaller
 * context than the job says (Ollama's default `num_ctx`, llama.cpp's `-c`) and silently cut the prompt to it,
 * so compaction, counting against the job's `context_window`, never triggers. Three ways to learn it:
 *
 * - llama.cpp: `GET /props` → `default_generation_settings.n_ctx` (or `n_ctx`);
 * - Ollama: `POST /api/show {model}` → `parameters` line `num_ctx N`, else `model_info["<arch>.context_length"]`;
 * - any server: an OpenAI-style "context length exceeded" error that names the limit
 *   ({@linkcode limitInMessage}).
 *
 * The probe is for local endpoints only ({@linkcode isLocalEndpoint}): loopback, private networks, `.local`
 * and single-label host names (a container called `ollama`). Hosted APIs (OpenAI, OpenRouter) are never
 * probed, so `hermes run -p` against them pays nothing; their windows are learnt from their errors.
 */

import type { ServerWindow } from "./provider.ts";

export interface ProbeOptions {
  /** The model name, for Ollama's /api/show. */
  model: string;
  fetch?: typeof fetch;
  /** Per request; default 1 s (a local server answers in a millisecond, or is not one of these). */
  timeoutMs?: number;
  signal?: AbortSignal;
}

/** The server's window from llama.cpp's /props or Ollama's /api/show; null when neither answers with one. */
export async function probeServerWindow(
  baseURL: string,
  options: ProbeOptions,
): Promise<ServerWindow | null> {
  const root = baseURL.replace(/\/+$/, "").replace(/\/v1$/, "");
  const doFetch = options.fetch ?? globalThis.fetch;
  const timeout = AbortSignal.timeout(options.timeoutMs ?? 1000);
  const signal = options.signal ? AbortSignal.any([options.signal, timeout]) : timeout;
  const json = async (path: string, init: RequestInit = {}): Promise<unknown> => {
    try {
      const response = await doFetch(`${root}${path}`, { ...init, signal });
      if (!response.ok) {
        await response.body?.cancel();
        return null;
      }
      return await response.json();
    } catch {
      return null;
    }
  };
  const [props, show] = await Promise.all([
    json("/props"),
    json("/api/show", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: options.model, name: options.model }),
    }),
  ]);
  return llamaCppWindow(props) ?? ollamaWindow(show);
}

export function llamaCppWindow(props: unknown): ServerWindow | null {
  const body = props as { n_ctx?: unknown; default_generation_settings?: { n_ctx?: unknown } } | null;
  const nested = positive(body?.default_generation_settings?.n_ctx);
  if (nested) return { tokens: nested, source: "llama.cpp /props default_generation_settings.n_ctx" };
  const top = positive(body?.n_ctx);
  return top ? { tokens: top, source: "llama.cpp /props n_ctx" } : null;
}

export function ollamaWindow(show: unknown): ServerWindow | null {
  const body = show as { parameters?: unknown; model_info?: Record<string, unknown> } | null;
  if (typeof body?.parameters === "string") {
    const match = /^\s*num_ctx\s+(\d+)\s*$/m.exec(body.parameters);
    const tokens = positive(Number(match?.[1]));
    if (tokens) return { tokens, source: "Ollama /api/show parameters num_ctx" };
  }
  for (const [key, value] of Object.entries(body?.model_info ?? {})) {
    const tokens = key.endsWith(".context_length") ? positive(value) : null;
    if (tokens) return { tokens, source: `Ollama /api/show model_info ${key}` };
  }
  return null;
}

const LIMIT_PATTERNS: readonly RegExp[] = [
  // OpenAI, vLLM, LiteLLM: "This model's maximum context length is 8192 tokens. However, …"
  /maximum context length is (\d+)/i,
  // llama.cpp: "the request exceeds the available context size (4096 tokens)", "n_ctx: 4096"
  /context size[^\d]{0,20}(\d+)/i,
  /n_ctx[^\d]{0,5}(\d+)/i,
  // Others: "context window of 32768 tokens", "context length of 4096", "limit of 16000 tokens"
  /context (?:window|length) (?:of|is) (\d+)/i,
  /(?:token )?limit (?:of|is) (\d+) tokens/i,
];

/** The context limit a "context length exceeded" message names, or null. */
export function limitInMessage(message: string): number | null {
  for (const pattern of LIMIT_PATTERNS) {
    const tokens = positive(Number(pattern.exec(message)?.[1]));
    if (tokens) return tokens;
  }
  return null;
}

/** Whether `baseURL` points at this machine, a private network or a single-label (container) host. */
export function isLocalEndpoint(baseURL: string): boolean {
  let host: string;
  try {
    host = new URL(baseURL).hostname.toLowerCase().replace(/^\[|\]$/g, "");
  } catch {
    return false;
  }
  if (host === "localhost" || host.endsWith(".localhost") || host.endsWith(".local")) return true;
  if (host.includes(":")) return host === "::1" || /^(fc|fd|fe80:)/.test(host);
  const ip = /^(\d+)\.(\d+)\.\d+\.\d+$/.exec(host);
  if (ip) {
    const [a, b] = [Number(ip[1]), Number(ip[2])];
    return a === 127 || a === 10 || a === 0 || (a === 192 && b === 168) ||
      (a === 172 && b >= 16 && b <= 31) ||
      (a === 169 && b === 254);
  }
  return !host.includes(".");
}

function positive(value: unknown): number | null {
  return typeof value === "number" && Number.isInteger(value) && value > 0 ? value : null;
}
