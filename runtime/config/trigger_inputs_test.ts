import assert from "node:assert/strict";
import { renderTriggerInputs, triggerTemplateProblem } from "./trigger_inputs.ts";

const body = {
  action: "opened",
  issue: { number: 42, draft: false, labels: [{ name: "bug" }], assignee: null },
  repository: { full_name: "acme/api" },
};

Deno.test("trigger inputs: paths into the body, array indexes and the event render as --input strings", () => {
  assert.deepEqual(
    renderTriggerInputs({
      repo: "{{ trigger.body.repository.full_name }}",
      ref: "{{trigger.body.repository.full_name}}#{{ trigger.body.issue.number }}",
      draft: "{{ trigger.body.issue.draft }}",
      label: "{{ trigger.body.issue.labels.0.name }}",
      kind: "{{ trigger.event }}/{{ trigger.body.action }}",
    }, { body, event: "issues" }),
    { repo: "acme/api", ref: "acme/api#42", draft: "false", label: "bug", kind: "issues/opened" },
  );
});

Deno.test("trigger inputs: a missing path, an object, an array, null or a prototype key is an error naming the input", () => {
  const render = (template: string) => () => renderTriggerInputs({ x: template }, { body, event: "issues" });
  assert.throws(render("{{ trigger.body.issue.title }}"), /input "x" .*no such value/);
  assert.throws(render("{{ trigger.body.issue }}"), /it is an object, not a value/);
  assert.throws(render("{{ trigger.body.issue.labels }}"), /it is an array, not a value/);
  assert.throws(render("{{ trigger.body.issue.assignee }}"), /it is null, not a value/);
  assert.throws(render("{{ trigger.body.constructor }}"), /no such value/);
  assert.throws(render("{{ trigger.body.action.length }}"), /no such value/);
});

Deno.test("trigger inputs: only trigger.body.PATH and trigger.event are references", () => {
  assert.equal(triggerTemplateProblem("{{ trigger.body.a.b }} and {{ trigger.event }}"), null);
  assert.equal(triggerTemplateProblem("plain text"), null);
  assert.match(triggerTemplateProblem("{{ trigger.headers.x }}")!, /unknown template reference/);
  assert.match(triggerTemplateProblem("{{ trigger.body }}")!, /unknown template reference/);
  assert.match(triggerTemplateProblem("{{ env.SECRET }}")!, /unknown template reference/);
});
