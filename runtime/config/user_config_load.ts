/**
 * Loading config.yaml and trust policy files (docs/job-file.md, docs/sandbox.md): YAML with positions → validation
 * (passed in, as for job files: job_load.ts) → paths anchored at the file's directory, each error naming
 * file:line:col (exit 2). `hermes run` imports it only when there is a config.yaml or a policy file to read.
 */
import { dirname, resolve } from "../core/path.ts";
import { ValidationError } from "../core/errors.ts";
import type { UserConfig } from "./job_schema.ts";
import type { Policy } from "./policy_schema.ts";
import type { ProviderRegistry } from "../providers/registry.ts";
import { offsetOf, position } from "../core/yaml_positions.ts";
import { entryRelativeTo } from "./plugin_entry.ts";
import { parseYamlSource } from "../core/yaml_source.ts";
import { type ConfigValidators, readText } from "./job_load.ts";

export interface UserConfigOptions {
  /** A policy file (`--policy`, `HERMES_POLICY`): it replaces config.yaml's `policy:`. */
  policy?: string | undefined;
  /** The provider registry whose `model` keys config.yaml may set (default: the built-in one). */
  providers?: ProviderRegistry;
}

/**
 * Loads config.yaml (undefined when there is none and no policy file), with the trust policy in force
 * attached as `policies`.
 */
export function loadUserConfig(
  path: string,
  options: UserConfigOptions,
  validators: ConfigValidators,
): UserConfig | undefined {
  const policy = options.policy !== undefined ? loadPolicy(options.policy, validators) : undefined;
  let text: string;
  try {
    text = Deno.readTextFileSync(path);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return policy ? { policies: [policy] } : undefined;
    throw new ValidationError(`Cannot read config "${path}": ${(error as Error).message}`);
  }
  const parsed = parseYamlSource(path, text);
  const config: UserConfig = validators.userConfig(path, parsed);
  if (policy) config.policies = [policy];
  else if (config.policy) {
    config.policies = [{
      rules: config.policy,
      source: `the policy of ${path}`,
      dir: dirname(resolve(path)),
      locate: (rule) =>
        `${path}:${position(parsed.lines, offsetOf(parsed.doc, ["policy", ...rule.split(".")]))}`,
    }];
  }
  // Global plugins live beside config.yaml: their paths and path grants resolve against its directory.
  const dir = dirname(resolve(path));
  if (config.plugins) config.plugins = config.plugins.map((entry) => entryRelativeTo(entry, dir));
  // So do global MCP servers' cwd and sandbox paths (a job's resolve against the job's directory).
  for (const [name, entry] of Object.entries(config.mcp_servers ?? {})) {
    const sandbox = entry.sandbox === "off" || entry.sandbox === undefined ? entry.sandbox : {
      ...entry.sandbox,
      ...(entry.sandbox.read ? { read: entry.sandbox.read.map((path) => resolve(dir, path)) } : {}),
      ...(entry.sandbox.write ? { write: entry.sandbox.write.map((path) => resolve(dir, path)) } : {}),
    };
    config.mcp_servers![name] = {
      ...entry,
      ...(entry.command !== undefined ? { cwd: resolve(dir, entry.cwd ?? ".") } : {}),
      ...(sandbox !== undefined ? { sandbox } : {}),
    };
  }
  return config;
}

/** Loads a trust policy file (policy_schema.ts); relative roots resolve against its directory. */
export function loadPolicy(path: string, validators: ConfigValidators): Policy {
  const parsed = parseYamlSource(path, readText(path, "policy file"));
  const rules = validators.policy(path, parsed);
  return {
    rules,
    source: `policy ${path}`,
    dir: dirname(resolve(path)),
    locate: (rule) => `${path}:${position(parsed.lines, offsetOf(parsed.doc, rule.split(".")))}`,
  };
}
