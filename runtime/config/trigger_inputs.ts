/**
 * A webhook trigger's `inputs:` templates: `{{ trigger.body.PATH }}` (a value in the delivery's JSON body) and
 * `{{ trigger.event }}`. Checked when the job loads (an unknown reference or undeclared input is the job's
 * problem) and rendered per delivery (a path the body lacks is the delivery's problem).
 */
import { ValidationError } from "../core/errors.ts";

const TEMPLATE = /\{\{\s*([^}]*?)\s*\}\}/g;
const REFERENCE = /^trigger\.(event|body((?:\.[^.\s]+)+))$/;

/** What is wrong with one template (an unknown reference), or null. */
export function triggerTemplateProblem(template: string): string | null {
  for (const [, expression] of template.matchAll(TEMPLATE)) {
    if (!REFERENCE.test(expression!)) {
      return `unknown template reference "{{ ${expression} }}": expected trigger.body.PATH or trigger.event`;
    }
  }
  return null;
}

export interface TriggerScope {
  /** The delivery's parsed JSON body. */
  body: unknown;
  /** Its event name ("" when the sender named none). */
  event: string;
}

/**
 * The inputs `templates` give for one delivery, as `--input` strings. A path the body lacks, or that leads to
 * an object, an array or null, is a ValidationError naming the input and the path.
 */
export function renderTriggerInputs(
  templates: Record<string, string>,
  scope: TriggerScope,
): Record<string, string> {
  const inputs: Record<string, string> = {};
  for (const [name, template] of Object.entries(templates)) {
    inputs[name] = template.replace(TEMPLATE, (_all, expression: string) => {
      const match = REFERENCE.exec(expression);
      if (!match) {
        throw new ValidationError(`inputs.${name}: unknown template reference "{{ ${expression} }}"`);
      }
      if (match[1] === "event") return scope.event;
      let value: unknown = scope.body;
      for (const key of match[2]!.slice(1).split(".")) {
        value = value !== null && typeof value === "object" && Object.hasOwn(value, key)
          ? (value as Record<string, unknown>)[key]
          : undefined;
      }
      if (typeof value === "string" || typeof value === "number" || typeof value === "boolean") {
        return String(value);
      }
      const what = value === undefined ? "the body has no such value" : `it is ${kind(value)}, not a value`;
      throw new ValidationError(`Cannot set input "${name}" from {{ ${expression} }}: ${what}`);
    });
  }
  return inputs;
}

function kind(value: unknown): string {
  if (value === null) return "null";
  return Array.isArray(value) ? "an array" : "an object";
}
