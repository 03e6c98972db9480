/**
 * Store URLs in libpq's URI form, `postgres[ql]://[user[:password]@][host][:port][/dbname][?param=value&…]`,
 * turned into client options. Parsed here rather than by the client because libpq's Unix socket form
 * (`postgres://user@/db?host=/run/postgresql`) has an empty host, which the WHATWG URL parser refuses.
 */
import { ValidationError } from "../../core/errors.ts";
import type { CredentialEnv } from "../../core/redact.ts";

/** The variable a store URL (and its password) may come from. */
export const STORE_CREDENTIAL_ENV: readonly CredentialEnv[] = [
  { name: "HERMES_DATABASE_URL", form: "url_password" },
];

export interface ConnectionTarget {
  /** A host name, an IP address, or an absolute directory holding the server's Unix socket. */
  host?: string;
  port?: number;
  user?: string;
  password?: string;
  database?: string;
  ssl?: "require" | "allow" | "prefer" | "verify-full" | false;
  application_name?: string;
  connect_timeout?: number;
}

/** The query parameters understood, as libpq names them. */
const PARAMETERS = [
  "host",
  "port",
  "user",
  "password",
  "dbname",
  "sslmode",
  "application_name",
  "connect_timeout",
] as const;

const SSL_MODES: Record<string, ConnectionTarget["ssl"]> = {
  disable: false,
  allow: "allow",
  prefer: "prefer",
  require: "require",
  "verify-full": "verify-full",
};

const URI = /^postgres(?:ql)?:\/\/(?:([^@/?#]*)@)?([^/?#]*)(?:\/([^?#]*))?(?:\?([^#]*))?$/;

/** `url` with its password (in the user part or a `password=` parameter) replaced by `***`. */
export function redactUrl(url: string): string {
  return url
    .replace(/^(postgres(?:ql)?:\/\/[^:@/?#]*:)[^@/?#]*@/, "$1***@")
    .replace(/([?&]password=)[^&#]*/g, "$1***");
}

export function isPostgresUrl(url: string): boolean {
  return /^postgres(?:ql)?:\/\//.test(url);
}

export function parsePostgresUrl(url: string): ConnectionTarget {
  const fail = (why: string): never => {
    throw new ValidationError(`Cannot use the store URL ${redactUrl(url)}: ${why}`);
  };
  const match = URI.exec(url);
  if (!match) {
    return fail("expected postgres://[user[:password]@][host][:port][/dbname][?host=…&port=…]");
  }
  const [, userinfo, hostport = "", path, query] = match;
  const target: ConnectionTarget = {};
  const decode = (text: string, what: string) => {
    try {
      return decodeURIComponent(text);
    } catch {
      return fail(`the ${what} is not valid percent-encoding`);
    }
  };
  if (userinfo !== undefined) {
    const colon = userinfo.indexOf(":");
    const user = decode(colon < 0 ? userinfo : userinfo.slice(0, colon), "user name");
    if (user) target.user = user;
    if (colon >= 0) target.password = decode(userinfo.slice(colon + 1), "password");
  }
  if (hostport.includes(",")) fail("several hosts are not supported; name one");
  const hostMatch = /^(\[[^\]]*\]|[^:]*)(?::(.*))?$/.exec(hostport)!;
  const host = decode(hostMatch[1]!.replace(/^\[(.*)\]$/, "$1"), "host");
  if (host) target.host = host;
  if (hostMatch[2] !== undefined) target.port = port(hostMatch[2], fail);
  if (path) target.database = decode(path, "database name");
  for (const [key, value] of new URLSearchParams(query ?? "")) {
    switch (key as typeof PARAMETERS[number]) {
      case "host":
        target.host = value;
        break;
      case "port":
        target.port = port(value, fail);
        break;
      case "user":
        target.user = value;
        break;
      case "password":
        target.password = value;
        break;
      case "dbname":
        target.database = value;
        break;
      case "sslmode": {
        if (!(value in SSL_MODES)) {
          fail(`sslmode "${value}" is not one of ${Object.keys(SSL_MODES).join(", ")}`);
        }
        target.ssl = SSL_MODES[value]!;
        break;
      }
      case "application_name":
        target.application_name = value;
        break;
      case "connect_timeout": {
        const seconds = Number(value);
        if (!Number.isInteger(seconds) || seconds <= 0) {
          fail(`connect_timeout "${value}" is not a number of seconds`);
        }
        target.connect_timeout = seconds;
        break;
      }
      default:
        fail(`unknown parameter "${key}" (known: ${PARAMETERS.join(", ")})`);
    }
  }
  return target;
}

function port(text: string, fail: (why: string) => never): number {
  const value = Number(text);
  if (!/^\d+$/.test(text) || value < 1 || value > 65_535) fail(`port "${text}" is not a port number`);
  return value;
}

/** The client's connection options for `target` (without pool and session settings). */
export function clientOptions(target: ConnectionTarget): Omit<ConnectionTarget, "application_name"> & {
  path?: string;
} {
  const { host, port, application_name: _, ...rest } = target;
  if (host?.startsWith("/")) return { ...rest, host, path: `${host}/.s.PGSQL.${port ?? 5432}` };
  if (host === undefined) return port === undefined ? rest : { ...rest, port };
  // As one-element lists (which the client takes, though its types say otherwise): it splits a host string
  // at ':', which would cut an IPv6 address.
  return { ...rest, host: [host] as unknown as string, port: [port ?? 5432] as unknown as number };
}
