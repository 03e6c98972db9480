import assert from "node:assert/strict";
import { compileSchedule } from "./cron_slots.ts";

const at = (iso: string) => new Date(iso).getTime();
const iso = (ms: number | null) => ms === null ? null : new Date(ms).toISOString();

Deno.test("5-field cron in a time zone: next and latest slots", () => {
  const slots = compileSchedule(
    { cron: "0 9 * * 1-5", timezone: "Europe/Paris" },
    (key) => `j.yaml: schedule.${key}`,
  );
  // 2026-01-05 is a Monday; 09:00 in Paris is 08:00 UTC in winter.
  assert.equal(iso(slots.nextAfter(at("2026-01-05T07:00:00Z"))), "2026-01-05T08:00:00.000Z");
  assert.equal(
    iso(slots.nextAfter(at("2026-01-05T08:00:00Z"))),
    "2026-01-06T08:00:00.000Z",
    "strictly after",
  );
  assert.equal(
    iso(slots.latestAtOrBefore(at("2026-01-05T08:00:00Z"))),
    "2026-01-05T08:00:00.000Z",
    "inclusive",
  );
  assert.equal(iso(slots.latestAtOrBefore(at("2026-01-05T07:59:59.999Z"))), "2026-01-02T08:00:00.000Z");
});

Deno.test("6-field cron has seconds first", () => {
  const slots = compileSchedule({ cron: "*/2 * * * * *" }, (key) => `j.yaml: schedule.${key}`);
  assert.equal(iso(slots.nextAfter(at("2026-01-01T00:00:04.000Z"))), "2026-01-01T00:00:06.000Z");
  assert.equal(iso(slots.latestAtOrBefore(at("2026-01-01T00:00:05.999Z"))), "2026-01-01T00:00:04.000Z");
});

Deno.test("bad cron and time zones are ValidationErrors naming the file and key", () => {
  assert.throws(() => compileSchedule({ cron: "0 9 * *" }, (key) => `j.yaml:3:9: schedule.${key}`), {
    name: "ValidationError",
    message:
      /^j\.yaml:3:9: schedule\.cron: invalid cron "0 9 \* \*": .*expected 5 fields, or 6 with seconds first/,
  });
  assert.throws(() => compileSchedule({ cron: "99 * * * *" }, (key) => `j.yaml: schedule.${key}`), {
    name: "ValidationError",
    message: /Invalid value for minute: 99/,
  });
  assert.throws(
    () =>
      compileSchedule({ cron: "0 9 * * *", timezone: "Mars/Olympus" }, (key) => `j.yaml: schedule.${key}`),
    {
      name: "ValidationError",
      message:
        'j.yaml: schedule.timezone: unknown time zone "Mars/Olympus" (expected an IANA name like Europe/Paris)',
    },
  );
});
