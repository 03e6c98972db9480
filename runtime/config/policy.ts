/**
 * Holding a job file to the host's trust policies (policy_schema.ts). The job's own values are judged —
 * config.yaml, the environment and CLI flags are the host's — and what the job leaves to a default that
 * grants something (read_file's job directory, http_fetch without hosts, a plugin's `true` grants) is judged
 * as what it grants. Every refusal is one line naming the job key (file:line:col), the policy and its rule;
 * the run exits 2 before any model call.
 */
import { resolve, sep } from "../core/path.ts";
import type { JobFile, PluginEntry } from "./job_schema.ts";
import { keyPath } from "../core/key_path.ts";
import type { Policy, PolicyConfig } from "./policy_schema.ts";
import { defaultCeilings, limitProblems } from "./policy_limits.ts";
import { hostCoveredByAny, nameMatchesAny, urlMatchesAny } from "./policy_match.ts";
import { argumentPaths } from "../sandbox/policy.ts";
import { jobSetEnvNames, steersPrograms } from "./steering_env.ts";
import { settingFiles } from "../providers/registry.ts";

type Path = (string | number)[];

export interface PolicyContext {
  /** The job directory (its relative paths resolve against it). */
  dir: string;
  /** `file:line:col` of a key path of the job. */
  locate: (path: Path) => string;
}

/** The strict built-in policy of `hermes run --untrusted`, for a job in `dir`. */
export function untrustedPolicy(dir: string): Policy {
  return {
    source: "--untrusted",
    dir,
    rules: {
      models: { base_urls: [], api_key_envs: [] },
      env: [],
      steering_env: [],
      protect_job: true,
      sandbox_off: false,
      read: [dir],
      write: [dir],
      network: { sandbox: false, hosts: [] },
      plugins: [],
      mcp: { commands: [], urls: [] },
      approval: { commands: [], urls: [] },
      notify: { commands: [], urls: [] },
      // As a job gets them by default: a job may lower them, not raise them.
      sandbox_limits: defaultCeilings(),
    },
  };
}

/** Every way `spec` asks for more than `policy` allows, one line each (empty: within the policy). */
export function policyProblems(spec: JobFile, policy: Policy, context: PolicyContext): string[] {
  const problems: string[] = [];
  const rules = policy.rules;
  const refuse = (path: Path, rule: string, why: string) => {
    const at = policy.locate ? ` at ${policy.locate(rule)}` : "";
    problems.push(
      `${context.locate(path)}: ${keyPath(path)}: refused by ${policy.source} (${rule}${at}): ${why}`,
    );
  };
  const inJob = (path: string) => realPath(resolve(context.dir, path));
  const roots = (list: readonly string[]) => list.map((root) => realPath(resolve(policy.dir, root)));
  const under = (path: string, list: readonly string[]) =>
    roots(list).some((root) => path === root || path.startsWith(root.endsWith(sep) ? root : root + sep));
  const describe = (list: readonly string[]) => list.length ? list.join(", ") : "nothing";

  // Endpoints and keys.
  const model = spec.model;
  if (model?.base_url !== undefined && rules.models?.base_urls) {
    if (!urlMatchesAny(model.base_url, rules.models.base_urls)) {
      refuse(
        ["model", "base_url"],
        "models.base_urls",
        `${model.base_url} is not allowed (allowed: ${describe(rules.models.base_urls)})`,
      );
    }
  }
  if (model?.api_key_env !== undefined && rules.models?.api_key_envs) {
    if (!nameMatchesAny(model.api_key_env, rules.models.api_key_envs)) {
      refuse(
        ["model", "api_key_env"],
        "models.api_key_envs",
        `${model.api_key_env} is not allowed (allowed: ${describe(rules.models.api_key_envs)})`,
      );
    }
  }

  // The environment a job reads.
  const envRule = rules.env;
  if (envRule) {
    for (const { path, name } of envTemplates(spec)) {
      if (!nameMatchesAny(name, envRule)) {
        refuse(
          path,
          "env",
          `{{ env.${name} }} reads a variable that is not allowed (allowed: ${describe(envRule)})`,
        );
      }
    }
    for (const [server, entry] of Object.entries(spec.mcp_servers ?? {})) {
      if (!Array.isArray(entry.env)) continue;
      entry.env.forEach((name, i) => {
        if (!nameMatchesAny(name, envRule)) {
          refuse(
            ["mcp_servers", server, "env", i],
            "env",
            `passes ${name}, which is not allowed (allowed: ${describe(envRule)})`,
          );
        }
      });
    }
    spec.plugins?.forEach((plugin, i) =>
      grantProblems(
        plugin.permissions?.env,
        ["plugins", i, "permissions", "env"],
        envRule,
        "env",
        refuse,
        nameMatchesAny,
      )
    );
  }

  // Variables that steer programs, set by the job: refused under every policy unless it names them.
  const steering = rules.steering_env ?? [];
  for (const { path, name } of jobSetEnvNames(spec)) {
    if (steersPrograms(name) && !nameMatchesAny(name, steering)) {
      refuse(
        path,
        "steering_env",
        `${name} steers the programs the job's commands run (allowed: ${describe(steering)})`,
      );
    }
  }

  // Sandboxes turned off (a protected job's files are held by the sandbox's read-only binds).
  if (rules.sandbox_off === false || rules.protect_job === true) {
    const why = rules.sandbox_off === false
      ? "this policy does not let a job turn the OS sandbox off"
      : "this policy protects the job's .git and own files, which only the OS sandbox can hold";
    const rule = rules.sandbox_off === false ? "sandbox_off" : "protect_job";
    if (spec.tools?.shell?.sandbox === "off") refuse(["tools", "shell", "sandbox"], rule, why);
    spec.plugins?.forEach((plugin, i) => {
      if (plugin.sandbox === "off") refuse(["plugins", i, "sandbox"], rule, why);
      if (plugin.isolation === "worker") {
        refuse(["plugins", i, "isolation"], rule, "isolation: worker is not a sandbox; " + why);
      }
    });
    for (const [server, entry] of Object.entries(spec.mcp_servers ?? {})) {
      if (entry.sandbox === "off") refuse(["mcp_servers", server, "sandbox"], rule, why);
    }
  }

  // Read and write roots.
  for (const [kind, list] of [["read", rules.read], ["write", rules.write]] as const) {
    if (!list) continue;
    for (const { path, value } of grantedPaths(spec, kind, context.dir)) {
      const absolute = inJob(value);
      if (!under(absolute, list)) {
        refuse(path, kind, `${absolute} is not under an allowed root (allowed: ${describe(roots(list))})`);
      }
    }
    spec.plugins?.forEach((plugin, i) => {
      const grant = plugin.permissions?.[kind];
      const path: Path = ["plugins", i, "permissions", kind];
      if (grant === true) {
        refuse(path, kind, `true grants every path; list paths under ${describe(roots(list))}`);
      } else if (Array.isArray(grant)) {
        grant.forEach((value, j) => {
          const absolute = inJob(value);
          if (!under(absolute, list)) {
            refuse(
              [...path, j],
              kind,
              `${absolute} is not under an allowed root (allowed: ${describe(roots(list))})`,
            );
          }
        });
      }
    });
  }

  // Network.
  const network = rules.network;
  if (network?.sandbox === false) {
    const why = "this policy does not let a job give a sandbox the host's network";
    const sandbox = spec.tools?.shell?.sandbox;
    if (sandbox !== undefined && sandbox !== "off" && sandbox.net === true) {
      refuse(["tools", "shell", "sandbox", "net"], "network.sandbox", why);
    }
    for (const [server, entry] of Object.entries(spec.mcp_servers ?? {})) {
      if (entry.sandbox !== undefined && entry.sandbox !== "off" && entry.sandbox.net === true) {
        refuse(["mcp_servers", server, "sandbox", "net"], "network.sandbox", why);
      }
    }
  }
  if (network?.hosts) {
    const hosts = network.hosts;
    const fetch = spec.tools?.http_fetch;
    if (fetch && !fetch.hosts) {
      refuse(
        ["tools", "http_fetch"],
        "network.hosts",
        `http_fetch without hosts reaches any host; list hosts among ${describe(hosts)}`,
      );
    }
    fetch?.hosts?.forEach((host, i) => {
      if (!hostCoveredByAny(host, hosts)) {
        refuse(
          ["tools", "http_fetch", "hosts", i],
          "network.hosts",
          `${host} is not allowed (allowed: ${describe(hosts)})`,
        );
      }
    });
    // A sandbox's host list (held by its proxy) names hosts like a plugin grant does.
    const shellSandbox = spec.tools?.shell?.sandbox;
    if (shellSandbox !== undefined && shellSandbox !== "off" && Array.isArray(shellSandbox.net)) {
      grantProblems(
        shellSandbox.net,
        ["tools", "shell", "sandbox", "net"],
        hosts,
        "network.hosts",
        refuse,
        hostCoveredByAny,
      );
    }
    for (const [server, entry] of Object.entries(spec.mcp_servers ?? {})) {
      if (entry.sandbox !== undefined && entry.sandbox !== "off" && Array.isArray(entry.sandbox.net)) {
        grantProblems(
          entry.sandbox.net,
          ["mcp_servers", server, "sandbox", "net"],
          hosts,
          "network.hosts",
          refuse,
          hostCoveredByAny,
        );
      }
    }
    spec.plugins?.forEach((plugin, i) =>
      grantProblems(
        plugin.permissions?.net,
        ["plugins", i, "permissions", "net"],
        hosts,
        "network.hosts",
        refuse,
        hostCoveredByAny,
      )
    );
  }

  // Plugins.
  if (rules.plugins) {
    spec.plugins?.forEach((plugin: PluginEntry, i) => {
      const absolute = inJob(plugin.path);
      if (!under(absolute, rules.plugins!)) {
        refuse(
          ["plugins", i, "path"],
          "plugins",
          `${absolute} is not under an allowed root (allowed: ${describe(roots(rules.plugins!))})`,
        );
      }
    });
  }

  // MCP servers.
  const mcp = rules.mcp;
  for (const [server, entry] of Object.entries(spec.mcp_servers ?? {})) {
    if (entry.command !== undefined && mcp?.commands && !nameMatchesAny(entry.command, mcp.commands)) {
      refuse(
        ["mcp_servers", server, "command"],
        "mcp.commands",
        `${entry.command} is not allowed (allowed: ${describe(mcp.commands)})`,
      );
    }
    if (entry.url !== undefined && mcp?.urls && !urlMatchesAny(entry.url, mcp.urls)) {
      refuse(
        ["mcp_servers", server, "url"],
        "mcp.urls",
        `${entry.url} is not allowed (allowed: ${describe(mcp.urls)})`,
      );
    }
  }

  // Completion notifications: a URL the run record is posted to, or a program run on the worker's host.
  const notify = rules.notify;
  (spec.notify ?? []).forEach((entry, i) => {
    if (entry.url !== undefined && notify?.urls && !urlMatchesAny(entry.url, notify.urls)) {
      refuse(
        ["notify", i, "url"],
        "notify.urls",
        `${entry.url} is not allowed (allowed: ${describe(notify.urls)})`,
      );
    }
    const program = entry.command?.[0];
    if (program !== undefined && notify?.commands && !nameMatchesAny(program, notify.commands)) {
      refuse(
        ["notify", i, "command"],
        "notify.commands",
        `${program} is not allowed (allowed: ${describe(notify.commands)})`,
      );
    }
  });

  // The approver: a program run on the host, or a URL every call outside the rules is posted to.
  const approver = spec.approval;
  const approval = rules.approval;
  const program = approver?.command?.[0];
  if (program !== undefined && approval?.commands && !nameMatchesAny(program, approval.commands)) {
    refuse(
      ["approval", "command", 0],
      "approval.commands",
      `${program} is not allowed (allowed: ${describe(approval.commands)})`,
    );
  }
  if (approver?.url !== undefined && approval?.urls && !urlMatchesAny(approver.url, approval.urls)) {
    refuse(
      ["approval", "url"],
      "approval.urls",
      `${approver.url} is not allowed (allowed: ${describe(approval.urls)})`,
    );
  }

  limitProblems(spec, rules, refuse);
  return problems;
}

/** A plugin grant (`true` or a list) against a list of patterns. */
function grantProblems(
  grant: boolean | string[] | undefined,
  path: Path,
  allowed: readonly string[],
  rule: string,
  refuse: (path: Path, rule: string, why: string) => void,
  matches: (item: string, allowed: readonly string[]) => boolean,
): void {
  const list = allowed.length ? allowed.join(", ") : "nothing";
  if (grant === true) refuse(path, rule, `true grants everything (allowed: ${list})`);
  else if (Array.isArray(grant)) {
    grant.forEach((item, i) => {
      if (!matches(item, allowed)) {
        refuse([...path, i], rule, `${item} is not allowed (allowed: ${list})`);
      }
    });
  }
}

/** The paths a job's tools and servers are granted, with their key paths (defaults included). */
function grantedPaths(spec: JobFile, kind: "read" | "write", dir: string): { path: Path; value: string }[] {
  const found: { path: Path; value: string }[] = [];
  const list = (values: readonly string[] | undefined, path: Path) =>
    values?.forEach((value, i) => found.push({ path: [...path, i], value }));
  const tools = spec.tools ?? {};
  const shell = tools.shell?.sandbox;
  if (kind === "read") {
    for (const tool of ["read_file", "list_dir"] as const) {
      const config = tools[tool];
      if (!config) continue;
      // Without paths the tool reads the job directory.
      if (config.paths) list(config.paths, ["tools", tool, "paths"]);
      else found.push({ path: ["tools", tool], value: "." });
    }
    if (shell && shell !== "off") list(shell.read, ["tools", "shell", "sandbox", "read"]);
    if (tools.shell?.cwd !== undefined) {
      found.push({ path: ["tools", "shell", "cwd"], value: tools.shell.cwd });
    }
    // Files Hermes itself reads for the job: a provider's (the scripted replies), plugin modules.
    for (const { key, value } of settingFiles(spec.model)) found.push({ path: ["model", key], value });
    spec.plugins?.forEach((plugin, i) => found.push({ path: ["plugins", i, "path"], value: plugin.path }));
    list(spec.skills, ["skills"]);
  } else {
    list(tools.write_file?.paths, ["tools", "write_file", "paths"]);
    if (shell && shell !== "off") list(shell.write, ["tools", "shell", "sandbox", "write"]);
    if (spec.output?.file !== undefined) {
      // A template (`out/{{ inputs.name }}.md`) may become any file of the job directory at run time (the
      // run's own check holds it there): judged as the job directory.
      const templated = /\{\{/.test(spec.output.file);
      found.push({ path: ["output", "file"], value: templated ? "." : spec.output.file });
    }
  }
  for (const [server, entry] of Object.entries(spec.mcp_servers ?? {})) {
    const sandbox = entry.sandbox;
    if (sandbox && sandbox !== "off") list(sandbox[kind], ["mcp_servers", server, "sandbox", kind]);
    if (kind === "read" && entry.cwd !== undefined) {
      found.push({ path: ["mcp_servers", server, "cwd"], value: entry.cwd });
    }
    // The paths a stdio server's args name are shown in its sandbox (mcp/launch.ts): read grants too.
    if (kind === "read" && entry.command !== undefined && entry.args) {
      const cwd = resolve(dir, entry.cwd ?? ".");
      for (const { index, path } of argumentPaths(entry.args, cwd)) {
        found.push({ path: ["mcp_servers", server, "args", index], value: path });
      }
    }
  }
  return found;
}

/** Every `{{ env.NAME }}` in the job's strings, with its key path. */
function envTemplates(spec: JobFile): { path: Path; name: string }[] {
  const found: { path: Path; name: string }[] = [];
  const walk = (value: unknown, path: Path) => {
    if (typeof value === "string") {
      for (const match of value.matchAll(/\{\{\s*env\.([A-Za-z_][\w-]*)\s*\}\}/g)) {
        found.push({ path, name: match[1]! });
      }
    } else if (Array.isArray(value)) value.forEach((item, i) => walk(item, [...path, i]));
    else if (value !== null && typeof value === "object") {
      for (const [key, item] of Object.entries(value)) walk(item, [...path, key]);
    }
  };
  walk(spec, []);
  return found;
}

/** The real path of `path`, or of its nearest existing parent with the rest appended. */
function realPath(path: string): string {
  let head = path;
  let tail = "";
  for (;;) {
    try {
      return Deno.realPathSync(head) + tail;
    } catch {
      const at = head.lastIndexOf(sep);
      if (at <= 0) return path;
      tail = head.slice(at) + tail;
      head = head.slice(0, at);
    }
  }
}

export type { Policy, PolicyConfig };
