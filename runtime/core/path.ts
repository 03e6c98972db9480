/**
 * POSIX path operations, the subset of `node:path` Hermes uses, with the same results (path_test.ts checks
 * them against `node:path`). Written out here because importing `node:path` initialises Deno's Node error and
 * inspection machinery (about 20 internal modules) before the first line of a command runs; every command
 * pays for it, `hermes --version` included. Hermes runs on POSIX only (bubblewrap, /proc), so there is no
 * Windows variant.
 */

const SLASH = 47;
const DOT = 46;

export const sep = "/";
export const delimiter = ":";

export function isAbsolute(path: string): boolean {
  return path.charCodeAt(0) === SLASH;
}

/** `path` with `.` and `..` segments resolved and repeated slashes collapsed; a trailing slash is kept. */
export function normalize(path: string): string {
  if (path.length === 0) return ".";
  const absolute = isAbsolute(path);
  const trailing = path.charCodeAt(path.length - 1) === SLASH;
  let normal = segments(path, !absolute);
  if (normal.length === 0) {
    if (absolute) return "/";
    return trailing ? "./" : ".";
  }
  if (trailing) normal += "/";
  return absolute ? `/${normal}` : normal;
}

export function join(...paths: string[]): string {
  const joined = paths.filter((path) => path.length > 0).join("/");
  return joined.length === 0 ? "." : normalize(joined);
}

/** The absolute path of `paths` applied right to left, from the current directory. */
export function resolve(...paths: string[]): string {
  let resolved = "";
  let absolute = false;
  for (let i = paths.length - 1; i >= -1 && !absolute; i--) {
    const path = i >= 0 ? paths[i]! : Deno.cwd();
    if (path.length === 0) continue;
    resolved = `${path}/${resolved}`;
    absolute = isAbsolute(path);
  }
  resolved = segments(resolved, !absolute);
  if (absolute) return `/${resolved}`;
  return resolved.length > 0 ? resolved : ".";
}

/** The path from `from` to `to`, both resolved first; "" when they are the same. */
export function relative(from: string, to: string): string {
  if (from === to) return "";
  from = resolve(from);
  to = resolve(to);
  if (from === to) return "";
  // Both start with "/": compare what follows it.
  const fromLength = from.length - 1;
  const toLength = to.length - 1;
  const length = Math.min(fromLength, toLength);
  let lastCommonSlash = -1;
  let i = 0;
  for (; i < length; i++) {
    const code = from.charCodeAt(1 + i);
    if (code !== to.charCodeAt(1 + i)) break;
    if (code === SLASH) lastCommonSlash = i;
  }
  if (i === length) {
    if (toLength > length) {
      // `from` is a prefix of `to`: /a/b → /a/b/c, or / → /a.
      if (to.charCodeAt(1 + i) === SLASH) return to.slice(2 + i);
      if (i === 0) return to.slice(1 + i);
    } else if (fromLength > length) {
      // `to` is a prefix of `from`: /a/b/c → /a/b, or /a → /.
      if (from.charCodeAt(1 + i) === SLASH) lastCommonSlash = i;
      else if (i === 0) lastCommonSlash = 0;
    }
  }
  let up = "";
  for (i = 2 + lastCommonSlash; i <= from.length; i++) {
    if (i === from.length || from.charCodeAt(i) === SLASH) up += up.length === 0 ? ".." : "/..";
  }
  return `${up}${to.slice(1 + lastCommonSlash)}`;
}

export function dirname(path: string): string {
  if (path.length === 0) return ".";
  const rooted = isAbsolute(path);
  let end = -1;
  let trailingSlashes = true;
  for (let i = path.length - 1; i >= 1; i--) {
    if (path.charCodeAt(i) === SLASH) {
      if (!trailingSlashes) {
        end = i;
        break;
      }
    } else {
      trailingSlashes = false;
    }
  }
  if (end === -1) return rooted ? "/" : ".";
  if (rooted && end === 1) return "//";
  return path.slice(0, end);
}

/** The last segment of `path`, trailing slashes ignored. */
export function basename(path: string): string {
  let start = 0;
  let end = -1;
  for (let i = path.length - 1; i >= 0; i--) {
    if (path.charCodeAt(i) === SLASH) {
      if (end !== -1) {
        start = i + 1;
        break;
      }
    } else if (end === -1) {
      end = i + 1;
    }
  }
  return end === -1 ? "" : path.slice(start, end);
}

/** The segments of `path` without `.`, empty ones and the `..` that can be resolved, joined by "/". */
function segments(path: string, keepLeadingUp: boolean): string {
  let out = "";
  let lastLength = 0;
  let lastSlash = -1;
  let dots = 0;
  let code = 0;
  for (let i = 0; i <= path.length; i++) {
    if (i < path.length) code = path.charCodeAt(i);
    else if (code === SLASH) break;
    else code = SLASH;
    if (code === SLASH) {
      if (lastSlash === i - 1 || dots === 1) {
        // An empty or "." segment.
      } else if (dots === 2) {
        const outEndsInUp = out.length >= 2 && lastLength === 2 && out.endsWith("..");
        if (!outEndsInUp) {
          if (out.length > 2) {
            const at = out.lastIndexOf("/");
            out = at === -1 ? "" : out.slice(0, at);
            lastLength = at === -1 ? 0 : out.length - 1 - out.lastIndexOf("/");
            lastSlash = i;
            dots = 0;
            continue;
          }
          if (out.length !== 0) {
            out = "";
            lastLength = 0;
            lastSlash = i;
            dots = 0;
            continue;
          }
        }
        if (keepLeadingUp) {
          out += out.length > 0 ? "/.." : "..";
          lastLength = 2;
        }
      } else {
        const segment = path.slice(lastSlash + 1, i);
        out += out.length > 0 ? `/${segment}` : segment;
        lastLength = i - lastSlash - 1;
      }
      lastSlash = i;
      dots = 0;
    } else if (code === DOT && dots !== -1) {
      dots++;
    } else {
      dots = -1;
    }
  }
  return out;
}
