import { clockContract } from "../../tests/contracts/clock.ts";
import { systemClock } from "./clock.ts";
import { ManualClock } from "./_testing.ts";

clockContract(
  "systemClock",
  () => ({ clock: systemClock, drive: (ms) => new Promise((r) => setTimeout(r, ms)) }),
);
clockContract("ManualClock", () => {
  const clock = new ManualClock();
  return { clock, drive: (ms) => clock.advance(ms) };
});
