import { z } from 'zod';
import { Name, Ref, Timestamp } from '../ids.js';
import { LIMITS } from '../limits.js';
import { withRules } from '../rules.js';
import { HttpUrl, Text, Title } from '../text.js';

/** Bytes of captured verify output a claim may carry (larger output belongs in an artefact). */
export const CLAIM_OUTPUT_MAX = 65_536;

/** Terminal statuses a receiver may report (seed 003, done.json). */
export const DoneClaimStatus = z.enum(['done_clean', 'pending', 'failed']);
export type DoneClaimStatus = z.infer<typeof DoneClaimStatus>;

/** What the receiver says its verify run showed. Writ never accepts `done_clean` on this alone: it runs the command itself. */
export const DoneEvidence = z.strictObject({
  verify_command: z.array(z.string().max(LIMITS.arg)).min(1).max(LIMITS.argvItems).describe('argv the receiver ran; must be the brief verify_command.'),
  verify_exit_code: z.int().nullable().describe('null: the command did not run to an exit.'),
  verify_stdout: z.string().max(CLAIM_OUTPUT_MAX),
  verify_stderr: z.string().max(CLAIM_OUTPUT_MAX),
  artefacts: z.array(Ref).max(LIMITS.listItems).describe('Paths or refs of screenshots, logs, reports.'),
});
export type DoneEvidence = z.infer<typeof DoneEvidence>;

/** The audit gates as the receiver reports them. */
export const DoneAudit = z.strictObject({
  gates_required: z.array(Name).max(LIMITS.shortListItems),
  gates_passed: z.array(Name).max(LIMITS.shortListItems),
  scores: z
    .record(Name, z.number().min(0).max(100))
    .refine((scores) => Object.keys(scores).length <= LIMITS.shortListItems, `must have at most ${LIMITS.shortListItems} entries`)
    .meta({ maxProperties: LIMITS.shortListItems }),
  verdict: z.enum(['satisfied', 'partial', 'unsatisfied']),
});
export type DoneAudit = z.infer<typeof DoneAudit>;

/** A ship (commit, deploy) the receiver ran. `failed` and `frozen` forbid `done_clean`. */
export const DoneShip = z.strictObject({
  requested: z.boolean(),
  result: z.enum(['ok', 'failed', 'skipped', 'frozen']),
  commit: z.string().min(1).max(LIMITS.title).nullable(),
  deploy_url: HttpUrl.nullable(),
  deploy_status: z.enum(['READY', 'ERROR', 'TIMEOUT']).nullable(),
});
export type DoneShip = z.infer<typeof DoneShip>;

/**
 * `done.json` (seed 003): the receiver's one terminal claim. The orchestrator
 * judges it against the brief and what the log shows (kernel
 * `judgeDoneClaim`); a refused claim reopens the task, and only one claim
 * can stand per task (a later fix is a `Correction`).
 */
export const DoneClaim = withRules(
  z.strictObject({
    agent: Title.describe('Who claims: the worker or oracle name.'),
    project: Title.optional(),
    status: DoneClaimStatus,
    started_at: Timestamp,
    finished_at: Timestamp,
    duration_sec: z.number().nonnegative().optional(),
    mission: Text.describe('A copy of brief.mission.'),
    evidence: DoneEvidence,
    audit: DoneAudit.optional().describe('Present when the brief names audit gates.'),
    regressions: z.array(Text).max(LIMITS.listItems).describe('Anything that passed before and fails now; `done_clean` requires none.'),
    pending_actions: z.array(Text).max(LIMITS.listItems).describe('The next slices; `pending` requires at least one.'),
    ship: DoneShip.optional().describe('Present when a ship was requested or run.'),
    report_path: Ref.nullable().optional(),
  }),
  (claim, report) => {
    const started = typeof claim.started_at === 'string' ? Date.parse(claim.started_at) : Number.NaN;
    const finished = typeof claim.finished_at === 'string' ? Date.parse(claim.finished_at) : Number.NaN;
    if (Number.isFinite(started) && Number.isFinite(finished) && finished < started) report(['finished_at'], 'must not be before started_at');
  },
).meta({ title: 'DoneClaim', description: 'done.json: the terminal claim a task receiver makes (seed 003).' });
export type DoneClaim = z.infer<typeof DoneClaim>;
