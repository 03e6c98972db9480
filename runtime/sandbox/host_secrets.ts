/**
 * Paths every sandbox hides even where it shows the host read-only: credentials below $HOME and the host's
 * own secrets. One list for the shell tool and plugins, so a grant of "read everything" never includes them.
 */
import { resolve } from "../core/path.ts";

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
