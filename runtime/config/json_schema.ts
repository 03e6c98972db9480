/**
 * `output.schema` compiled with ajv: JSON Schema draft 2020-12 in full (`if`/`then`/`else`, `not`,
 * `dependentRequired`, `unevaluatedProperties`, `$defs`/`$ref`, …) with the formats of ajv-formats. Importing
 * this module loads ajv: import it lazily, only for a job that has an `output.schema`.
 */
import { Ajv2020, type ErrorObject } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";

/** Null when `value` matches, else `path: what was expected`. */
export type JsonSchemaCheck = (value: unknown) => string | null;

/** A schema ajv refuses: `at` is the key path inside the schema that is wrong (empty: the schema). */
export class JsonSchemaError extends Error {
  readonly at: (string | number)[];
  constructor(message: string, at: (string | number)[]) {
    super(message);
    this.at = at;
  }
}

/**
 * Compiles `schema`, or throws a JsonSchemaError naming what is wrong. Unknown keywords and formats are
 * errors (a misspelt `requried` would otherwise check nothing); keywords without a `type` beside them are
 * allowed, as the specification allows them.
 */
export function compileJsonSchema(schema: Record<string, unknown>): JsonSchemaCheck {
  const ajv = new Ajv2020({
    strictSchema: true,
    strictNumbers: true,
    strictTypes: false,
    strictTuples: false,
    strictRequired: false,
    allowUnionTypes: true,
    logger: false,
  });
  addFormats.default(ajv);
  if (!ajv.validateSchema(schema)) {
    const error = ajv.errors![0]!;
    throw new JsonSchemaError(describe(error), pointerPath(error.instancePath));
  }
  let validate: ReturnType<typeof ajv.compile>;
  try {
    validate = ajv.compile(schema);
  } catch (error) {
    const message = (error as Error).message;
    // ajv names where an unknown format is; the error points there.
    const format = /^unknown format "(.*)" ignored in schema at path "#(.*)"$/.exec(message);
    if (format) {
      throw new JsonSchemaError(
        `unknown format "${format[1]}" (known: the formats of ajv-formats, e.g. date-time, email, uri, uuid)`,
        [...pointerPath(format[2]!), "format"],
      );
    }
    throw new JsonSchemaError(message.replace(/^strict mode: /, ""), []);
  }
  return (value) => {
    if (validate(value)) return null;
    const error = validate.errors![0]!;
    return `${pointerPath(error.instancePath).join(".") || "(root)"}: ${describe(error)}`;
  };
}

/** ajv's message, with the name or the values it refers to where the message alone does not say. */
function describe(error: ErrorObject): string {
  const params = error.params as Record<string, unknown>;
  const name = params.additionalProperty ?? params.unevaluatedProperty;
  if (typeof name === "string") return `${error.message} ("${name}")`;
  if (Array.isArray(params.allowedValues)) {
    return `${error.message} (${params.allowedValues.map((v) => JSON.stringify(v)).join(", ")})`;
  }
  return error.message ?? error.keyword;
}

/** `/properties/a~1b/0` → `["properties", "a/b", 0]`. */
function pointerPath(pointer: string): (string | number)[] {
  if (pointer === "") return [];
  return pointer.slice(1).split("/").map((part) => {
    const key = part.replaceAll("~1", "/").replaceAll("~0", "~");
    return /^\d+$/.test(key) ? Number(key) : key;
  });
}
