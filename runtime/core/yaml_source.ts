/**
 * YAML files users write (job files, config.yaml, scripted replies): parsed with positions, so every error —
 * a syntax error, an unresolved alias, an alias bomb — is one `file:line:col: …` ValidationError (exit 2).
 */
import { type Document, isAlias, LineCounter, parseDocument, visit } from "./yaml.ts";
import { ValidationError } from "./errors.ts";

export interface YamlSource {
  value: unknown;
  doc: Document;
  lines: LineCounter;
}

/** More alias expansions than this is refused as a resource-exhaustion attack ("billion laughs"). */
const MAX_ALIAS_COUNT = 100;

export function parseYamlSource(file: string, text: string): YamlSource {
  const lines = new LineCounter();
  // prettyErrors is off (it would put a code frame in the message), so positions come from `pos`.
  const doc = parseDocument(text, { lineCounter: lines, prettyErrors: false, uniqueKeys: true });
  const error = doc.errors[0];
  if (error) {
    throw new ValidationError(
      `${file}:${at(lines, error.pos[0])}: invalid YAML: ${error.message.split("\n")[0]}`,
    );
  }
  try {
    return { value: doc.toJS({ maxAliasCount: MAX_ALIAS_COUNT }), doc, lines };
  } catch (caught) {
    throw aliasError(file, doc, lines, caught);
  }
}

function at(lines: LineCounter, offset: number): string {
  const { line, col } = lines.linePos(offset);
  return `${line}:${col}`;
}

/** toJS fails only on aliases: name the unresolved one, or the first alias of an over-expanding document. */
function aliasError(file: string, doc: Document, lines: LineCounter, caught: unknown): ValidationError {
  const message = caught instanceof Error ? caught.message : String(caught);
  let unresolved: { source: string; offset: number } | undefined;
  let first: number | undefined;
  visit(doc, {
    Alias(_key, node) {
      if (!isAlias(node)) return;
      const offset = node.range?.[0] ?? 0;
      first ??= offset;
      if (!unresolved && node.resolve(doc) === undefined) unresolved = { source: node.source, offset };
    },
  });
  if (unresolved) {
    return new ValidationError(
      `${file}:${
        at(lines, unresolved.offset)
      }: invalid YAML: alias *${unresolved.source} has no anchor &${unresolved.source} before it`,
    );
  }
  if (/excessive alias/i.test(message)) {
    return new ValidationError(
      `${file}:${
        at(lines, first ?? 0)
      }: invalid YAML: aliases expand to more than ${MAX_ALIAS_COUNT} nodes (refused as a resource-exhaustion attack)`,
    );
  }
  return new ValidationError(`${file}:${at(lines, first ?? 0)}: invalid YAML: ${message.split("\n")[0]}`);
}
