/**
 * Paths every sandbox hides even where it shows the host read-only: credentials below $HOME, the host's own
 * secrets and a CI runner's. One list for the shell tool and plugins, so a grant of "read everything" never
 * includes them. Config files that are only partly secret (git's global config, other checkouts' configs)
 * are not hidden but listed for a copy without their credentials (sandbox.ts, git_repo.ts).
 */
import { basename, dirname, join, resolve } from "../core/path.ts";

/** Below $HOME: credentials, keys, tokens and shell histories. Hidden in every sandbox. */
export const HIDDEN_IN_HOME = [
  // keys and agents
  ".ssh",
  ".gnupg",
  ".password-store",
  ".local/share/keyrings",
  ".keychain",
  // cloud and cluster credentials
  ".aws",
  ".azure",
  ".config/gcloud",
  ".oci",
  ".kube",
  ".docker",
  ".config/containers/auth.json",
  ".config/doctl",
  ".config/rclone",
  ".s3cfg",
  ".boto",
  ".terraform.d",
  ".terraformrc",
  ".vault-token",
  ".pulumi",
  ".databrickscfg",
  ".snowsql",
  ".cloudflared",
  ".wrangler",
  ".config/op",
  ".config/sops",
  // forges and package registries
  ".config/gh",
  ".config/glab-cli",
  ".config/hub",
  ".config/git/credentials",
  ".git-credentials",
  ".netrc",
  ".npmrc",
  ".yarnrc.yml",
  ".pypirc",
  ".cargo/credentials",
  ".cargo/credentials.toml",
  ".gem/credentials",
  ".m2/settings.xml",
  ".gradle/gradle.properties",
  ".nuget/NuGet/NuGet.Config",
  ".composer/auth.json",
  ".config/configstore",
  // databases
  ".pgpass",
  ".my.cnf",
  ".mylogin.cnf",
  ".dbt",
  // AI tools and model hubs
  ".claude",
  ".claude.json",
  ".codex",
  ".gemini",
  ".config/github-copilot",
  ".cache/huggingface/token",
  ".huggingface",
  ".ollama",
  ".hermes",
  // shell and client histories
  ".bash_history",
  ".zsh_history",
  ".python_history",
  ".psql_history",
  ".mysql_history",
  ".node_repl_history",
  ".lesshst",
  ".viminfo",
] as const;
const HIDDEN_ON_HOST = ["/etc/shadow", "/etc/gshadow"] as const;

/** The credential paths below `home`. */
export function homeSecrets(home: string): string[] {
  return HIDDEN_IN_HOME.map((name) => resolve(home, name));
}

/** /etc/shadow and friends, and the SSH host keys (their public halves stay visible). */
export function hostSecrets(): string[] {
  const keys: string[] = [];
  try {
    for (const entry of Deno.readDirSync("/etc/ssh")) {
      if (/^ssh_host_.*_key$/.test(entry.name)) keys.push(`/etc/ssh/${entry.name}`);
    }
  } catch {
    // no /etc/ssh
  }
  return [...HIDDEN_ON_HOST, ...keys];
}

/** What a CI runner keeps next to the job: hidden paths, and git configs to show without credentials. */
export interface RunnerSecrets {
  hide: string[];
  /** Git config files that may hold a checkout's token (`http.<url>.extraheader`, a URL with a password). */
  gitConfigs: string[];
}

/** A self-hosted GitHub runner's registration: its OAuth credentials, RSA key and settings. */
const RUNNER_FILES = [".credentials", ".credentials_rsaparams", ".runner"];

export interface RunnerSecretsOptions {
  /** The runner's root, when known otherwise (the directory of `bin/Runner.Worker`); default: found from env. */
  root?: string | null;
}

/**
 * A GitHub Actions runner's secrets, from the variables every step has (`RUNNER_TEMP`, `RUNNER_WORKSPACE`)
 * and the runner process Hermes runs under: the runner's registration files (in its root, above `_work`),
 * `_runner_file_commands` (the GITHUB_ENV, GITHUB_OUTPUT, … files earlier steps wrote, secrets included) and
 * the `.git/config` of each checkout in the work directory (`_work/<repo>/<repo>`, `_work/<repo>/<repo>/<path>`),
 * where actions/checkout persists its token. Empty outside a runner.
 */
export function runnerSecrets(
  env: Readonly<Record<string, string>>,
  options: RunnerSecretsOptions = {},
): RunnerSecrets {
  const temp = env.RUNNER_TEMP?.startsWith("/") ? resolve(env.RUNNER_TEMP) : null;
  const workspace = env.RUNNER_WORKSPACE?.startsWith("/") ? resolve(env.RUNNER_WORKSPACE) : null;
  if (temp === null && workspace === null) return { hide: [], gitConfigs: [] };
  // RUNNER_WORKSPACE is <work>/<repo>, RUNNER_TEMP <work>/_temp; the work directory's parent is the root
  // unless the runner was configured with a work directory elsewhere (then the runner process tells).
  const work = workspace ? dirname(workspace) : dirname(temp!);
  const roots = new Set([dirname(work), ...(options.root ? [options.root] : runnerRoots())]);
  const hide = [
    ...[...roots].flatMap((root) => RUNNER_FILES.map((name) => join(root, name))),
    ...(temp ? [join(temp, "_runner_file_commands")] : []),
    join(work, "_temp", "_runner_file_commands"),
  ];
  return { hide: [...new Set(hide)], gitConfigs: checkoutConfigs(work) };
}

/** The roots of the runner processes Hermes runs under (`<root>/bin/Runner.Worker`), from /proc. */
function runnerRoots(): string[] {
  const roots: string[] = [];
  let pid = readParent("self");
  for (let depth = 0; pid !== null && pid > 1 && depth < 16; depth++) {
    try {
      const exe = Deno.readLinkSync(`/proc/${pid}/exe`);
      if (/^Runner\.(Worker|Listener)$/.test(basename(exe))) roots.push(dirname(dirname(exe)));
    } catch {
      // another user's process, or gone
    }
    pid = readParent(String(pid));
  }
  return roots;
}

function readParent(pid: string): number | null {
  try {
    // The command name (field 2) is in parentheses and may hold spaces: the parent comes after the last ")".
    const stat = Deno.readTextFileSync(`/proc/${pid}/stat`);
    const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
    return Number.isInteger(ppid) ? ppid : null;
  } catch {
    return null;
  }
}

/** `.git/config` of the checkouts two and three levels below the work directory (bounded: no deep walk). */
function checkoutConfigs(work: string): string[] {
  const configs: string[] = [];
  const dirs = (dir: string) => {
    try {
      return [...Deno.readDirSync(dir)].filter((e) => e.isDirectory && !e.name.startsWith(".")).map((e) =>
        join(dir, e.name)
      );
    } catch {
      return [];
    }
  };
  for (const repo of dirs(work)) {
    for (const checkout of dirs(repo)) {
      for (const dir of [checkout, ...dirs(checkout)]) {
        const config = join(dir, ".git", "config");
        try {
          if (Deno.statSync(config).isFile) configs.push(config);
        } catch {
          // not a checkout
        }
      }
    }
  }
  return configs;
}

/** The user's global git configs below `home` (and `XDG_CONFIG_HOME`): `insteadOf` URLs often carry a token. */
export function globalGitConfigs(home: string | undefined, xdgConfigHome: string | undefined): string[] {
  const xdg = xdgConfigHome?.startsWith("/") ? xdgConfigHome : home ? join(home, ".config") : undefined;
  return [...(home ? [join(home, ".gitconfig")] : []), ...(xdg ? [join(xdg, "git", "config")] : [])];
}
