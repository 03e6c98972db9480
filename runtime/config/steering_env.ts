/**
 * Environment variables that steer programs rather than give them data: the dynamic loader's, shells'
 * start-up files and exported functions, interpreters' start-up options and module paths, git's
 * configuration and the programs it runs, the search PATH, Hermes's and Deno's own. A job's `env:` (and an
 * MCP server's `env:` values) reaches the commands it runs and the launcher of their sandbox on the host;
 * one of these makes an allowed command run something else, or the host's launcher load the job's code.
 * Under any trust policy they are refused unless the policy names them (`steering_env`); `--untrusted`
 * names none. Matched without regard to case (npm reads `npm_config_*` in either).
 */

/** Glob patterns (`*`: anything), upper case. docs/sandbox.md lists them for users. */
export const STEERING_ENV: readonly string[] = [
  // Hermes and Deno: which deno, bwrap, home, policy and store Hermes uses; Deno's cache, certificates, flags.
  "HERMES_*",
  "DENO_*",
  // The dynamic loader (glibc, musl, macOS) and glibc's module and tunable loading.
  "LD_*",
  "DYLD_*",
  "GCONV_PATH",
  "GLIBC_TUNABLES",
  "MALLOC_*",
  // Where programs are found. (HOME stays allowed: `env: {HOME: /tmp}` is how tools get a writable one.)
  "PATH",
  "SHELL",
  // Shells: start-up files, exported functions, options, prompt and trace hooks.
  "BASH_ENV",
  "ENV",
  "BASH_FUNC_*",
  "SHELLOPTS",
  "BASHOPTS",
  "PS4",
  "PROMPT_COMMAND",
  "IFS",
  "CDPATH",
  // Interpreters and runtimes: options that load code, module search paths.
  "NODE_OPTIONS",
  "NODE_PATH",
  "NPM_CONFIG_*",
  // Python's that load or run code (PYTHONUNBUFFERED and the like stay allowed).
  "PYTHONSTARTUP",
  "PYTHONPATH",
  "PYTHONHOME",
  "PYTHONINSPECT",
  "PYTHONUSERBASE",
  "PYTHONWARNINGS",
  "PYTHONEXECUTABLE",
  "PYTHONPLATLIBDIR",
  "PYTHONBREAKPOINT",
  "PYTHONPYCACHEPREFIX",
  "PERL5LIB",
  "PERL5OPT",
  "PERL5DB",
  "PERLLIB",
  "RUBYOPT",
  "RUBYLIB",
  "JAVA_TOOL_OPTIONS",
  "_JAVA_OPTIONS",
  "JDK_JAVA_OPTIONS",
  "CLASSPATH",
  "DOTNET_STARTUP_HOOKS",
  "PHPRC",
  "PHP_INI_SCAN_DIR",
  "LUA_INIT*",
  "LUA_PATH*",
  "LUA_CPATH*",
  "GOFLAGS",
  "GOTOOLCHAIN",
  "RUSTC_WRAPPER",
  "RUSTC_WORKSPACE_WRAPPER",
  "OPENSSL_CONF",
  "OPENSSL_ENGINES",
  "OPENSSL_MODULES",
  // git: configuration injected by variables, and the programs git runs (a pager runs only on a terminal,
  // which commands never have: GIT_PAGER: cat stays allowed).
  "GIT_CONFIG*",
  "GIT_EXEC_PATH",
  "GIT_SSH",
  "GIT_SSH_COMMAND",
  "GIT_ASKPASS",
  "SSH_ASKPASS",
  "GIT_EDITOR",
  "GIT_SEQUENCE_EDITOR",
  "EDITOR",
  "VISUAL",
  "GIT_EXTERNAL_DIFF",
  "GIT_PROXY_COMMAND",
  "GIT_TEMPLATE_DIR",
  "GIT_DIR",
  "GIT_WORK_TREE",
  "GIT_COMMON_DIR",
];

const STEERING = new RegExp(
  `^(?:${
    STEERING_ENV.map((p) => p.split("*").map((s) => s.replace(/[\\^$.+?()[\]{}|]/g, "\\$&")).join(".*")).join(
      "|",
    )
  })$`,
);

/** Does setting `name` steer what programs run or load (STEERING_ENV)? */
export function steersPrograms(name: string): boolean {
  return STEERING.test(name.toUpperCase());
}

type Path = (string | number)[];

/** The variable names a job sets for what it runs: `env:` and MCP servers' `env:` mappings. */
export function jobSetEnvNames(
  spec: {
    env?: Record<string, unknown> | undefined;
    mcp_servers?:
      | Record<string, { env?: readonly string[] | Record<string, string> | undefined }>
      | undefined;
  },
): { path: Path; name: string }[] {
  const found: { path: Path; name: string }[] = [];
  for (const name of Object.keys(spec.env ?? {})) found.push({ path: ["env", name], name });
  for (const [server, entry] of Object.entries(spec.mcp_servers ?? {})) {
    // A list passes Hermes's own values through (judged by the policy's env rule); a mapping sets values.
    if (entry.env === undefined || Array.isArray(entry.env)) continue;
    for (const name of Object.keys(entry.env)) {
      found.push({ path: ["mcp_servers", server, "env", name], name });
    }
  }
  return found;
}
