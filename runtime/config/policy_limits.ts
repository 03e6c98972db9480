/**
 * The ceilings a trust policy puts on a job's limits: its run limits (`limits:` — max_turns, timeout,
 * max_tokens) and the resource limits of its sandboxes (`sandbox_limits:` — processes, memory, file_size and
 * tmp of the shell sandbox and of each MCP server's; memory also bounds a plugin's max_memory). A job asking
 * for more is refused; a limit it leaves unset gets the ceiling (a sandbox limit: where the ceiling is below
 * the default), so the ceiling holds either way.
 */
import { parseDuration, parseSize } from "../core/duration.ts";
import type { JobFile } from "./job_schema.ts";
import type { Policy, PolicyConfig } from "./policy_schema.ts";
import { DEFAULT_LIMITS, DEFAULT_SCRATCH_BYTES } from "../sandbox/policy.ts";

type Path = (string | number)[];
type Refuse = (path: Path, rule: string, why: string) => void;
type SandboxLimits = NonNullable<NonNullable<PolicyConfig["sandbox_limits"]>>;
/** The resource limits of a sandbox (max_output bounds tool settings, max_session_output the session). */
type SandboxKey = Exclude<keyof SandboxLimits, "max_output" | "max_session_output">;

/** A job's `sandbox.limits`, or a policy's ceilings of them. */
type LimitValues = { [K in SandboxKey]?: string | number | undefined };

const SANDBOX_KEYS = ["processes", "memory", "file_size", "tmp"] as const;

/** What each sandbox limit is where a job sets none (runtime/sandbox/policy.ts). */
const SANDBOX_DEFAULTS: Record<SandboxKey, number> = {
  processes: DEFAULT_LIMITS.processes,
  memory: DEFAULT_LIMITS.memory,
  file_size: DEFAULT_LIMITS.file_size,
  tmp: DEFAULT_SCRATCH_BYTES,
};

/**
 * The tool output settings `sandbox_limits.max_output` bounds, and their defaults (runtime/tools/builtin.ts):
 * each is what Hermes holds in memory and stores for one call, so a job must not lift it past the ceiling.
 */
const OUTPUT_SETTINGS = [
  { tool: "shell", key: "max_output", default: 64 * 1024 },
  { tool: "read_file", key: "max_bytes", default: 256 * 1024 },
  { tool: "http_fetch", key: "max_output", default: 256 * 1024 },
] as const;

/** `--untrusted`'s ceiling of a tool result: the largest default, so a job keeps every default. */
const UNTRUSTED_MAX_OUTPUT = "256KiB";

/** `--untrusted`'s ceiling of a session's stored tool results: 64 results of the largest size. */
const UNTRUSTED_MAX_SESSION_OUTPUT = "16MiB";

/** The defaults as ceilings (`--untrusted`), sizes written as a job writes them (`4GiB`) for messages. */
export function defaultCeilings(): SandboxLimits {
  const size = (bytes: number) => {
    const [unit, factor] = bytes % 1024 ** 3 === 0 ? ["GiB", 1024 ** 3] : ["MiB", 1024 ** 2];
    return bytes % factor === 0 ? `${bytes / factor}${unit}` : bytes;
  };
  return {
    processes: SANDBOX_DEFAULTS.processes,
    memory: size(SANDBOX_DEFAULTS.memory),
    file_size: size(SANDBOX_DEFAULTS.file_size),
    tmp: size(SANDBOX_DEFAULTS.tmp),
    max_output: UNTRUSTED_MAX_OUTPUT,
    max_session_output: UNTRUSTED_MAX_SESSION_OUTPUT,
  };
}

/**
 * The bytes of tool results a session may store under `policies` (the smallest `max_session_output`), or
 * undefined when none sets one. Not a job setting: nothing in a job file can lift it.
 */
export function sessionOutputCeiling(policies: readonly Policy[]): number | undefined {
  const ceilings = policies.flatMap((policy) => {
    const value = policy.rules.sandbox_limits?.max_session_output;
    return value === undefined ? [] : [parseSize(value)];
  });
  return ceilings.length === 0 ? undefined : Math.min(...ceilings);
}

/** A job's tool output settings, each with its key path and its value (absent when unset). */
function outputSettings(spec: JobFile): { path: Path; value: string | number | undefined }[] {
  return OUTPUT_SETTINGS.flatMap(({ tool, key }) => {
    const config = spec.tools?.[tool] as Record<string, string | number | undefined> | undefined;
    return config ? [{ path: ["tools", tool, key], value: config[key] }] : [];
  });
}

const amount = (key: SandboxKey, value: string | number) =>
  key === "processes" ? Number(value) : parseSize(value);

/** Every way `spec`'s limits pass `rules`' ceilings, through `refuse`. */
export function limitProblems(spec: JobFile, rules: PolicyConfig, refuse: Refuse): void {
  const ceilings = rules.limits ?? {};
  const limits = spec.limits ?? {};
  for (const key of ["max_turns", "max_tokens"] as const) {
    const ceiling = ceilings[key];
    const value = limits[key];
    if (ceiling !== undefined && value !== undefined && value > ceiling) {
      refuse(["limits", key], `limits.${key}`, `${value} is above the ceiling ${ceiling}`);
    }
  }
  if (ceilings.timeout !== undefined && limits.timeout !== undefined) {
    if (parseDuration(limits.timeout) > parseDuration(ceilings.timeout)) {
      refuse(
        ["limits", "timeout"],
        "limits.timeout",
        `${limits.timeout} is above the ceiling ${ceilings.timeout}`,
      );
    }
  }
  const sandbox = rules.sandbox_limits;
  if (sandbox) sandboxLimitProblems(spec, sandbox, rules.sandbox_off === false, refuse);
}

function sandboxLimitProblems(spec: JobFile, ceilings: SandboxLimits, offRefused: boolean, refuse: Refuse) {
  if (ceilings.max_output !== undefined) {
    for (const { path, value } of outputSettings(spec)) {
      if (value !== undefined && parseSize(value) > parseSize(ceilings.max_output)) {
        refuse(path, "sandbox_limits.max_output", `${value} is above the ceiling ${ceilings.max_output}`);
      }
    }
  }
  const judge = (limits: LimitValues | undefined, at: Path) => {
    for (const key of SANDBOX_KEYS) {
      const [ceiling, value] = [ceilings[key], limits?.[key]];
      if (ceiling === undefined || value === undefined || amount(key, value) <= amount(key, ceiling)) {
        continue;
      }
      refuse([...at, "limits", key], `sandbox_limits.${key}`, `${value} is above the ceiling ${ceiling}`);
    }
  };
  // Without the sandbox there are no limits to hold; said once, where sandbox_off does not refuse it already.
  const off = (at: Path) => {
    if (!offRefused) {
      refuse(at, "sandbox_limits", "turning the OS sandbox off lifts the resource limits this policy bounds");
    }
  };
  const shell = spec.tools?.shell;
  if (shell?.sandbox === "off") off(["tools", "shell", "sandbox"]);
  else if (shell) judge(shell.sandbox?.limits, ["tools", "shell", "sandbox"]);
  for (const [server, entry] of Object.entries(spec.mcp_servers ?? {})) {
    if (entry.command === undefined) continue; // HTTP: no process of ours
    if (entry.sandbox === "off") off(["mcp_servers", server, "sandbox"]);
    else judge(entry.sandbox?.limits, ["mcp_servers", server, "sandbox"]);
  }
  spec.plugins?.forEach((plugin, i) => {
    if (plugin.sandbox === "off") off(["plugins", i, "sandbox"]);
    else if (plugin.isolation === "worker") off(["plugins", i, "isolation"]);
    const ceiling = ceilings.memory;
    if (ceiling !== undefined && plugin.max_memory !== undefined) {
      if (parseSize(plugin.max_memory) > parseSize(ceiling)) {
        refuse(
          ["plugins", i, "max_memory"],
          "sandbox_limits.memory",
          `${plugin.max_memory} is above the ceiling ${ceiling}`,
        );
      }
    }
  });
}

/** The limits of a resolved job with every policy ceiling applied (an unset limit becomes the ceiling). */
export function boundedLimits(limits: JobFile["limits"], policies: readonly Policy[]): JobFile["limits"] {
  let out = limits;
  for (const { rules } of policies) {
    const ceilings = rules.limits;
    if (!ceilings) continue;
    const next = { ...out };
    for (const key of ["max_turns", "max_tokens"] as const) {
      const ceiling = ceilings[key];
      if (ceiling !== undefined && (next[key] === undefined || next[key]! > ceiling)) next[key] = ceiling;
    }
    const timeout = ceilings.timeout;
    if (timeout !== undefined) {
      if (next.timeout === undefined || parseDuration(next.timeout) > parseDuration(timeout)) {
        next.timeout = timeout;
      }
    }
    out = next;
  }
  return out;
}

/**
 * The sandbox limits of the shell and of each stdio MCP server with every policy ceiling applied: a limit
 * above it or unset with a default above it becomes the ceiling (config.yaml's values too, which the
 * policy does not refuse).
 */
export function boundedSandboxes(spec: JobFile, policies: readonly Policy[]): JobFile {
  const ceilings = policies.map((policy) => policy.rules.sandbox_limits).filter((c) => c !== undefined);
  if (ceilings.length === 0) return spec;
  /** The sandbox with its limits bounded; the same object when nothing changes. */
  const bound = <S extends { limits?: LimitValues | undefined }>(sandbox: S | undefined): S | undefined => {
    const limits: LimitValues = { ...sandbox?.limits };
    let changed = false;
    for (const key of SANDBOX_KEYS) {
      for (const ceiling of ceilings) {
        const value = ceiling[key];
        if (value === undefined || amount(key, limits[key] ?? SANDBOX_DEFAULTS[key]) <= amount(key, value)) {
          continue;
        }
        limits[key] = amount(key, value);
        changed = true;
      }
    }
    return changed ? { ...sandbox, limits } as S : sandbox;
  };
  let out = spec;
  for (const { tool, key, default: fallback } of OUTPUT_SETTINGS) {
    const config = out.tools?.[tool] as Record<string, string | number | undefined> | undefined;
    if (!config) continue;
    const value = parseSize(config[key] ?? fallback);
    const ceiling = Math.min(
      value,
      ...ceilings.map((c) => c.max_output).filter((c) => c !== undefined).map((c) => parseSize(c)),
    );
    if (ceiling < value) out = { ...out, tools: { ...out.tools, [tool]: { ...config, [key]: ceiling } } };
  }
  const shell = out.tools?.shell;
  if (shell && shell.sandbox !== "off") {
    const sandbox = bound(shell.sandbox);
    if (sandbox !== shell.sandbox) out = { ...out, tools: { ...out.tools, shell: { ...shell, sandbox } } };
  }
  for (const [name, entry] of Object.entries(spec.mcp_servers ?? {})) {
    if (entry.command === undefined || entry.sandbox === "off") continue;
    const sandbox = bound(entry.sandbox);
    if (sandbox !== entry.sandbox) {
      out = { ...out, mcp_servers: { ...out.mcp_servers, [name]: { ...entry, sandbox } } };
    }
  }
  return out;
}
