/**
 * Paths every sandbox hides even where it shows the host read-only: credentials below $HOME and the host's
 * own secrets. One list for the shell tool and plugins, so a grant of "read everything" never includes them.
 */
import { resolve } from "node:path";

/** Below $HOME: credentials, keys, tokens and shell histories. Hidden in every sandbox. */
export const HIDDEN_IN_HOME = [
  ".ssh",
  ".gnupg",
  ".aws",
  ".azure",
  ".config/gcloud",
  ".config/gh",
  ".config/hub",
  ".config/git/credentials",
  ".config/op",
  ".docker",
  ".kube",
  ".netrc",
  ".git-credentials",
  ".npmrc",
  ".pypirc",
  ".cargo/credentials",
  ".cargo/credentials.toml",
  ".gem/credentials",
  ".m2/settings.xml",
  ".gradle/gradle.properties",
  ".terraform.d",
  ".vault-token",
  ".password-store",
  ".local/share/keyrings",
  ".hermes",
  ".bash_history",
  ".zsh_history",
  ".python_history",
  ".psql_history",
  ".mysql_history",
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
