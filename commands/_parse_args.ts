/**
 * `parseArgs` of `node:util` in strict mode with positionals allowed: the same tokens, values and error
 * messages (_parse_args_test.ts checks them against `node:util` on a corpus of argument lists). Written out
 * here because importing `node:util` initialises about 40 internal modules of Deno's Node layer (~25 ms of
 * CPU), more than `hermes sessions list` spends on everything else.
 */

export interface ParseOption {
  type: "string" | "boolean";
  multiple?: boolean;
  short?: string;
}

/** The value of one option: a string or true, a list of them when the option may be repeated. */
type ValueOf<O extends ParseOption> = O extends { multiple: true }
  ? (O extends { type: "string" } ? string[] : boolean[])
  : O extends { type: "string" } ? string
  : boolean;

export interface Parsed<T extends Record<string, ParseOption>> {
  values: { [K in keyof T]?: ValueOf<T[K]> };
  positionals: string[];
}

interface OptionToken {
  name: string;
  rawName: string;
  value: string | undefined;
  inlineValue: boolean;
}

export function parseArgs<T extends Record<string, ParseOption>>(args: string[], options: T): Parsed<T> {
  const values: Record<string, string | boolean | (string | boolean)[]> = Object.create(null);
  const positionals: string[] = [];
  for (const token of tokens(args, options, positionals)) {
    check(token, options);
    const value = token.value ?? true;
    if (token.name === "__proto__") continue;
    if (options[token.name]!.multiple) {
      const list = values[token.name];
      values[token.name] = Array.isArray(list) ? [...list, value] : [value];
    } else {
      values[token.name] = value;
    }
  }
  return { values: values as Parsed<T>["values"], positionals };
}

function tokens(args: string[], options: Record<string, ParseOption>, positionals: string[]): OptionToken[] {
  const found: OptionToken[] = [];
  const remaining = [...args];
  const typeOf = (name: string) => Object.hasOwn(options, name) ? options[name]!.type : undefined;
  const longFor = (short: string) =>
    Object.keys(options).find((name) => options[name]!.short === short) ?? short;
  /** The next argument as this option's value, when the option takes one and there is a next argument. */
  const takeValue = (name: string) => typeOf(name) === "string" && remaining.length > 0;
  while (remaining.length > 0) {
    const arg = remaining.shift()!;
    if (arg === "--") {
      positionals.push(...remaining);
      break;
    }
    const shortForm = arg.length >= 2 && arg[0] === "-" && arg[1] !== "-";
    if (shortForm && arg.length === 2) {
      const name = longFor(arg[1]!);
      const value = takeValue(name) ? remaining.shift() : undefined;
      found.push({ name, rawName: arg, value, inlineValue: false });
    } else if (shortForm && typeOf(longFor(arg[1]!)) !== "string") {
      // A group of short switches (-ab); a string option inside it takes the rest of the group as its value.
      const expanded: string[] = [];
      for (let i = 1; i < arg.length; i++) {
        if (typeOf(longFor(arg[i]!)) !== "string" || i === arg.length - 1) {
          expanded.push(`-${arg[i]}`);
        } else {
          expanded.push(`-${arg[i]}${arg.slice(i + 1)}`);
          break;
        }
      }
      remaining.unshift(...expanded);
    } else if (shortForm) {
      found.push({ name: longFor(arg[1]!), rawName: `-${arg[1]}`, value: arg.slice(2), inlineValue: true });
    } else if (arg.length > 2 && arg.startsWith("--") && !arg.includes("=", 3)) {
      const name = arg.slice(2);
      const value = takeValue(name) ? remaining.shift() : undefined;
      found.push({ name, rawName: arg, value, inlineValue: false });
    } else if (arg.length > 2 && arg.startsWith("--")) {
      const at = arg.indexOf("=");
      const name = arg.slice(2, at);
      found.push({ name, rawName: `--${name}`, value: arg.slice(at + 1), inlineValue: true });
    } else {
      positionals.push(arg);
    }
  }
  return found;
}

function check(token: OptionToken, options: Record<string, ParseOption>): void {
  if (!Object.hasOwn(options, token.name)) {
    throw new TypeError(
      `Unknown option '${token.rawName}'. To specify a positional argument starting with a '-', place it at ` +
        `the end of the command after '--', as in '-- ${JSON.stringify(token.rawName)}`,
    );
  }
  const { type, short } = options[token.name]!;
  const shortAndLong = `${short ? `-${short}, ` : ""}--${token.name}`;
  if (type === "string" && typeof token.value !== "string") {
    throw new TypeError(`Option '${shortAndLong} <value>' argument missing`);
  }
  if (type === "boolean" && token.value !== undefined) {
    throw new TypeError(`Option '${shortAndLong}' does not take an argument`);
  }
  if (!token.inlineValue && token.value !== undefined && token.value.length > 1 && token.value[0] === "-") {
    const example = token.rawName.startsWith("--")
      ? `'${token.rawName}=-XYZ'`
      : `'--${token.name}=-XYZ' or '${token.rawName}-XYZ'`;
    throw new TypeError(
      `Option '${token.rawName}' argument is ambiguous.\nDid you forget to specify the option argument for ` +
        `'${token.rawName}'?\nTo specify an option argument starting with a dash use ${example}.`,
    );
  }
}
