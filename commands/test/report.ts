/**
 * What `hermes test` prints: a summary table (`text`), JUnit XML, JSON or TAP; and, under GitHub Actions,
 * an `::error` annotation on the case file's line for each failed expectation and a step summary. Every
 * value from a case (names, the model's text in failures) is escaped for the format it goes into.
 */
import { escapeData, escapeProperty } from "../../runtime/core/workflow_commands.ts";
import type { LoadedCase } from "./case_file.ts";
import type { Failure } from "./expect.ts";
import type { CaseOutcome } from "./run_case.ts";

export const REPORTERS = ["text", "junit", "json", "tap"] as const;
export type Reporter = typeof REPORTERS[number];

export interface CaseReport {
  case: LoadedCase;
  /** Each run of the case (one, or `--repeat N`). */
  runs: CaseOutcome[];
  /** Whether the case passed: its one run did, or its pass rate reached `pass_rate`. */
  passed: boolean;
  /** With --repeat: the share of runs that passed, and the share required. */
  rate?: { passed: number; required: number };
}

/** The outcome shown for a case: its first failed run, else its first. */
function shown(report: CaseReport): CaseOutcome {
  return report.runs.find((run) => !run.passed) ?? report.runs[0]!;
}

function seconds(ms: number): string {
  return (ms / 1000).toFixed(3);
}

function totalMs(report: CaseReport): number {
  return report.runs.reduce((sum, run) => sum + run.duration_ms, 0);
}

/** One line for a failed expectation: its key path and line, expected, actual, where. */
export function failureLine(testCase: LoadedCase, failure: Failure): string {
  return `${keyPath(failure.path)} (${testCase.file}:${
    testCase.lineOf(failure.path)
  }): expected ${failure.expected}; ` +
    `got ${failure.actual}; at ${failure.where}`;
}

function keyPath(path: readonly (string | number)[]): string {
  return path.map((part, i) => typeof part === "number" ? `[${part}]` : i === 0 ? part : `.${part}`).join("");
}

export function render(
  reporter: Reporter,
  reports: readonly CaseReport[],
  options: { tty: boolean },
): string {
  switch (reporter) {
    case "junit":
      return junit(reports);
    case "json":
      return JSON.stringify(json(reports), null, 2) + "\n";
    case "tap":
      return tap(reports);
    default:
      return text(reports, options.tty);
  }
}

export function summaryLine(reports: readonly CaseReport[]): string {
  const failed = reports.filter((r) => !r.passed).length;
  return `${reports.length - failed} passed, ${failed} failed`;
}

function text(reports: readonly CaseReport[], tty: boolean): string {
  const rows = reports.map((report) => [
    report.passed ? (tty ? "✓ pass" : "PASS") : (tty ? "✗ FAIL" : "FAIL"),
    report.case.name,
    report.case.file,
    `${seconds(totalMs(report))}s`,
    report.rate
      ? `${Math.round(report.rate.passed * 100)}% of ${report.runs.length} (needs ${
        Math.round(report.rate.required * 100)
      }%)`
      : reason(report),
  ]);
  const header = ["", "case", "file", "time", ""];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => [...row[i]!].length)));
  const line = (row: string[]) => row.map((cell, i) => cell.padEnd(widths[i]!)).join("  ").trimEnd();
  const out = [line(header), ...rows.map(line)];
  for (const report of reports.filter((r) => !r.passed)) {
    out.push("", `${report.case.name} (${report.case.file}):`);
    for (const failure of shown(report).failures) out.push(`  ${failureLine(report.case, failure)}`);
  }
  out.push("", summaryLine(reports));
  return out.join("\n") + "\n";
}

function reason(report: CaseReport): string {
  const result = shown(report).result;
  return result ? `${result.status} (${result.terminal_reason}), ${result.turns} steps` : "did not start";
}

// XML 1.0 allows tab, newline and carriage return among the control characters; anything else below 0x20
// (and the non-characters) cannot appear even escaped.
// deno-lint-ignore no-control-regex
const NOT_XML = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]/g;

function xml(text: string): string {
  return text.replace(NOT_XML, "\uFFFD").replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(
    ">",
    "&gt;",
  )
    .replaceAll('"', "&quot;").replaceAll("'", "&apos;");
}

function junit(reports: readonly CaseReport[]): string {
  const failed = reports.filter((r) => !r.passed).length;
  const time = seconds(reports.reduce((sum, r) => sum + totalMs(r), 0));
  const cases = reports.map((report) => {
    const attrs =
      `name="${xml(report.case.name)}" classname="${xml(report.case.file)}" file="${
        xml(report.case.file)
      }" ` +
      `line="${report.case.lineOf(["job"])}" time="${seconds(totalMs(report))}"`;
    if (report.passed) return `    <testcase ${attrs}/>`;
    const outcome = shown(report);
    const lines = outcome.failures.map((f) => failureLine(report.case, f));
    if (report.rate) lines.unshift(`pass rate ${report.rate.passed} below ${report.rate.required}`);
    const log = outcome.log.length ? `\n      <system-err>${xml(outcome.log.join("\n"))}</system-err>` : "";
    return `    <testcase ${attrs}>\n      <failure message="${
      xml(lines[0] ?? "failed")
    }" type="expectation">` +
      `${xml(lines.join("\n"))}</failure>${log}\n    </testcase>`;
  });
  return `<?xml version="1.0" encoding="UTF-8"?>\n` +
    `<testsuites name="hermes test" tests="${reports.length}" failures="${failed}" errors="0" time="${time}">\n` +
    `  <testsuite name="hermes test" tests="${reports.length}" failures="${failed}" errors="0" skipped="0" ` +
    `time="${time}">\n${cases.join("\n")}\n  </testsuite>\n</testsuites>\n`;
}

function json(reports: readonly CaseReport[]) {
  const failed = reports.filter((r) => !r.passed).length;
  return {
    passed: reports.length - failed,
    failed,
    cases: reports.map((report) => {
      const outcome = shown(report);
      return {
        name: report.case.name,
        file: report.case.file,
        passed: report.passed,
        duration_ms: totalMs(report),
        ...(report.rate
          ? { runs: report.runs.length, pass_rate: report.rate.passed, required: report.rate.required }
          : {}),
        failures: outcome.failures.map((f) => ({
          expectation: keyPath(f.path),
          line: report.case.lineOf(f.path),
          expected: f.expected,
          actual: f.actual,
          where: f.where,
        })),
        result: outcome.result,
      };
    }),
  };
}

function tap(reports: readonly CaseReport[]): string {
  const out = ["TAP version 13", `1..${reports.length}`];
  reports.forEach((report, i) => {
    // A description may not hold `#` (a directive) or a newline.
    const name = `${report.case.name} (${report.case.file})`.replace(/[#\r\n]/g, " ");
    out.push(`${report.passed ? "ok" : "not ok"} ${i + 1} - ${name}`);
    if (!report.passed) {
      out.push("  ---");
      for (const failure of shown(report).failures) {
        out.push(`  - ${JSON.stringify(failureLine(report.case, failure))}`);
      }
      out.push("  ...");
    }
  });
  return out.join("\n") + "\n";
}

/** `::error file=…,line=…,title=…::message` for each failed expectation (the case file's line). */
export function githubAnnotations(reports: readonly CaseReport[]): string[] {
  return reports.filter((r) => !r.passed).flatMap((report) => {
    const title = `title=${escapeProperty(`hermes test: ${report.case.name}`)}`;
    const failures = shown(report).failures;
    const items = failures.length
      ? failures.map((f) => ({ line: report.case.lineOf(f.path), text: failureLine(report.case, f) }))
      : [{
        line: report.case.lineOf(["pass_rate"]),
        text: `pass rate ${report.rate?.passed} below ${report.rate?.required}`,
      }];
    return items.map(({ line, text }) =>
      `::error file=${escapeProperty(report.case.file)},line=${line},${title}::${escapeData(text)}`
    );
  });
}

/** The step summary: a Markdown table of the cases, then each failure. */
export function githubSummary(reports: readonly CaseReport[]): string {
  const cell = (text: string) =>
    text.replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;").replaceAll("|", "\\|")
      .replace(/\r?\n/g, " ");
  const rows = reports.map((r) =>
    `| ${r.passed ? "✅" : "❌"} | ${cell(r.case.name)} | \`${cell(r.case.file)}\` | ${
      seconds(totalMs(r))
    }s |`
  );
  const failures = reports.filter((r) => !r.passed).flatMap((r) =>
    shown(r).failures.map((f) => `- **${cell(r.case.name)}**: ${cell(failureLine(r.case, f))}`)
  );
  return `### hermes test: ${summaryLine(reports)}\n\n| | case | file | time |\n|---|---|---|---|\n` +
    rows.join("\n") + "\n" + (failures.length ? `\n${failures.join("\n")}\n` : "") + "\n";
}
