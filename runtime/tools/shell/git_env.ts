/**
 * The git settings every shell command runs with, so that configuration a command could plant — a
 * `.gitconfig` under a `HOME` or `XDG_CONFIG_HOME` it points elsewhere, a repository's `.git/config` or
 * hooks written inside a write root — cannot make an allowed `git status` run a program the deny rules
 * never saw:
 *
 * - global configuration is the host user's own file only (`GIT_CONFIG_GLOBAL`), or none when that file
 *   lies in a write root; system configuration is off (`GIT_CONFIG_NOSYSTEM`); no credential prompts;
 * - command-line settings (`GIT_CONFIG_COUNT`, which git ranks above every file) turn off what runs a
 *   program under a fixed key: fsmonitor, hooks, ssh, askpass, editors, alternate-refs commands, signing
 *   programs and credential helpers; the `ext::` transport is refused, and a bare repository is only used
 *   when named (`--git-dir`), so one planted in a write root is not picked up by discovery.
 *
 * What keys with a name of the repository's choosing run (`filter.X.clean`, `diff.X.textconv`,
 * `merge.X.driver`, `remote.X.uploadpack`, `diff.external`, aliases) cannot be switched off this way:
 * the sandbox (no network, writes only in write roots) is what bounds them.
 */
import { resolve, sep } from "../../core/path.ts";

/** Command-line settings for every git a shell command starts (git ranks them above every config file). */
export const SAFE_GIT_SETTINGS: readonly (readonly [string, string])[] = [
  ["core.fsmonitor", "false"],
  ["core.hooksPath", "/dev/null"],
  ["core.sshCommand", "ssh"],
  ["core.askPass", ""],
  ["core.editor", "false"],
  ["sequence.editor", "false"],
  ["core.alternateRefsCommand", "true"],
  ["gpg.program", "gpg"],
  ["gpg.openpgp.program", "gpg"],
  ["gpg.x509.program", "gpgsm"],
  ["gpg.ssh.program", "ssh-keygen"],
  ["gpg.ssh.defaultKeyCommand", ""],
  // An empty helper empties the list, so helpers from any config file are dropped.
  ["credential.helper", ""],
  ["protocol.ext.allow", "never"],
  ["safe.bareRepository", "explicit"],
];

export interface GitEnvironmentOptions {
  /** Absolute write roots of the command: a global config file inside one is not used. */
  writeRoots: readonly string[];
  /** A file's real path (symlinks followed), or null when it does not exist. */
  realPath: (path: string) => string | null;
}

/** `env` with the settings above added (a job's own `GIT_CONFIG_COUNT` settings are kept, before ours). */
export function gitEnvironment(
  env: Readonly<Record<string, string>>,
  options: GitEnvironmentOptions,
): Record<string, string> {
  const out: Record<string, string> = { ...env };
  out.GIT_CONFIG_GLOBAL = env.GIT_CONFIG_GLOBAL ?? globalConfig(env, options);
  out.GIT_CONFIG_NOSYSTEM = "1";
  out.GIT_TERMINAL_PROMPT = "0";
  const own = /^\d+$/.test(env.GIT_CONFIG_COUNT ?? "") ? Number(env.GIT_CONFIG_COUNT) : 0;
  SAFE_GIT_SETTINGS.forEach(([key, value], i) => {
    out[`GIT_CONFIG_KEY_${own + i}`] = key;
    out[`GIT_CONFIG_VALUE_${own + i}`] = value;
  });
  out.GIT_CONFIG_COUNT = String(own + SAFE_GIT_SETTINGS.length);
  return out;
}

/** The file git would read as the user's global config, from the host's HOME; /dev/null for none. */
function globalConfig(env: Readonly<Record<string, string>>, options: GitEnvironmentOptions): string {
  const home = env.HOME;
  const xdg = env.XDG_CONFIG_HOME || (home ? `${home}/.config` : undefined);
  const candidates = [home ? `${home}/.gitconfig` : undefined, xdg ? `${xdg}/git/config` : undefined];
  for (const candidate of candidates) {
    const path = candidate?.startsWith("/") ? options.realPath(candidate) : null;
    if (path === null) continue;
    const writable = options.writeRoots.some((root) => {
      const real = resolve(options.realPath(root) ?? root);
      return path === real || path.startsWith(real + sep);
    });
    return writable ? "/dev/null" : path;
  }
  return "/dev/null";
}
