/**
 * The console's pages, in navigation order: a new page is one module exporting a `ConsolePage`, added here.
 * `/` goes to the first page.
 */
import type { ConsolePage } from "./page.ts";
import { runsPage } from "./runs.tsx";
import { runPage } from "./run.tsx";
import { approvalsPage } from "./approvals.tsx";
import { schedulesPage } from "./schedules.tsx";
import { costPage } from "./cost.tsx";

export const PAGES: readonly ConsolePage[] = [runsPage, runPage, approvalsPage, schedulesPage, costPage];
