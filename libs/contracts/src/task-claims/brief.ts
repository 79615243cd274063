import { z } from 'zod';
import { Id, Name, Ref } from '../ids.js';
import { LIMITS } from '../limits.js';
import { FilePath, HttpUrl, Text } from '../text.js';

/** Longest mission a brief may state (seed 003: longer means the dispatcher failed to decompose). */
export const BRIEF_MISSION_MAX = 200;

/**
 * The error of a schema that is one of the brief's sections: an absent section
 * is named as such (seed 003: "empty sections are allowed; missing sections are
 * a contract violation"); any other problem keeps zod's own message.
 */
const section = {
  error: (issue: { readonly input?: unknown }) => (issue.input === undefined ? 'required section is missing (it may be empty, never absent)' : undefined),
} as const;

/** A free-text section: may be empty, never absent. */
const SectionText = (max: number) => z.string(section).max(max);

/** A list section: may be empty, never absent. */
const SectionList = <T extends z.ZodType>(item: T, max: number = LIMITS.listItems) => z.array(item, section).max(max);

/** One argv element of the verify command. */
const Arg = z.string().max(LIMITS.arg);

/**
 * The command that proves the done criteria, as argv (Writ runs commands
 * without a shell: a sequence is a script that exits 0 on success). The
 * orchestrator runs it itself, as a governed action in the task's cell, before
 * it accepts a `done_clean` claim.
 */
export const VerifyCommand = z
  .array(Arg, section)
  .min(1, 'must name a command')
  .max(LIMITS.argvItems)
  .refine((argv) => (argv[0] ?? '').length > 0, 'the command (argv[0]) must not be empty')
  .describe('argv of the verify command; executed without a shell.');
export type VerifyCommand = z.infer<typeof VerifyCommand>;

/** Where the receiver works: project root, deployed URL, stack, prior runs (all optional: the section may be empty). */
export const BriefContext = z.strictObject(
  {
    project_root: FilePath.optional(),
    deployed_url: HttpUrl.optional(),
    stack: z.string().max(LIMITS.title).optional(),
    prior_runs: z.array(Ref).max(LIMITS.listItems).optional().describe('References to earlier done.json claims (`claim:<id>`) or their paths.'),
  },
  section,
);
export type BriefContext = z.infer<typeof BriefContext>;

/** `spec.scope`: the receiver's hard write boundary and the seed's explicit opt-ins. */
export const BriefScope = z.strictObject(
  {
    files_owned: SectionList(FilePath).describe('The only paths the receiver may write (anchored globs inside the workspace); becomes the task files_owned.'),
    allow_billing: z.boolean().optional().describe('Seed 003 opt-in for billing modules; recorded with the brief. Writ writes a Sacred Scope only through TaskSpec.sacred_exceptions and the profile.'),
    allow_dependency_change: z.boolean().optional().describe('Seed 003 opt-in for dependency manifests; recorded with the brief (see allow_billing).'),
    destructive: z.array(Text).max(LIMITS.shortListItems).optional().describe('Destructive operations the brief authorises (seed 003 pre-flight step 4); recorded with the brief.'),
  },
  section,
);
export type BriefScope = z.infer<typeof BriefScope>;

/**
 * `brief.json` (seed 003, prompt-protocols): the dispatch contract a task can
 * be created from. Every section is required; free-text and list sections may
 * be empty, but the mission, the done criteria and the verify command may not.
 * A brief is immutable: the task stores it in `task.created`.
 */
export const Brief = z
  .strictObject({
    id: Id.describe('The brief id (seed: a uuid-v4).'),
    mission: z.string(section).min(1, 'must state the mission').max(BRIEF_MISSION_MAX, `must be at most ${BRIEF_MISSION_MAX} characters: decompose the mission`),
    purpose: SectionText(LIMITS.text).describe('Why this matters to the human intent.'),
    context: BriefContext,
    whats_done: SectionList(Text, LIMITS.shortListItems).describe('Completed work of this mission so far.'),
    current_task: SectionText(LIMITS.longText).describe('Files, line numbers, exact changes: the surgical scope.'),
    done_criteria: z.string(section).min(1, 'must state a measurable predicate').max(LIMITS.text),
    verify_command: VerifyCommand,
    key_decisions: SectionList(Text, LIMITS.shortListItems).describe('Excerpts of the decisions log relevant to this task.'),
    spec: z.strictObject({ scope: BriefScope }, section),
    relevant_memories: SectionList(z.string().min(1).max(LIMITS.ref), LIMITS.shortListItems).describe('Pre-selected lesson ids, not a dump.'),
    ship: z.boolean(section).describe('True only when the dispatcher asked for a ship/deploy/push.'),
    audit_gates: SectionList(Name, LIMITS.shortListItems).describe('Audits that must pass before `done_clean` (names such as codeaudit, secaudit).'),
    lifecycle: z.enum(['ephemeral', 'persistent'], section).describe('ephemeral: the receiver closes on done_clean; persistent: it stays for follow-up.'),
  })
  .meta({ title: 'Brief', description: 'brief.json: the dispatch contract a task is created from (seed 003).' });
export type Brief = z.infer<typeof Brief>;

/** Top-level sections of a brief, in the seed's order. */
export const BRIEF_SECTIONS = Object.freeze(Object.keys(Brief.shape) as (keyof Brief)[]);
