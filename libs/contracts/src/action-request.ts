import { z } from 'zod';
import { ActionClass, Reversibility } from './action-class.js';
import { safeParseContract, parseContract, type ParseResult } from './contract-error.js';
import { Id, Name, Timestamp } from './ids.js';
import { JsonValue, withinJsonBounds } from './json.js';
import { LIMITS } from './limits.js';
import { field, isPresent, withRules } from './rules.js';
import { FilePath, HttpUrl, LongText, ResourceName, Text, Title, boundedRecord } from './text.js';
import { Brief } from './task-claims/brief.js';
import { MemoryWriteParams } from './knowledge/memory-write.js';

/** A new task proposed together with its first action (instead of `task_id`). */
export const TaskSpec = z
  .strictObject({
    title: Title,
    goal: LongText,
    policy_profile: Name.describe('The requested policy profile, e.g. "local_edit_allowed"; policy may refuse it.'),
    files_owned: z.array(FilePath).max(LIMITS.listItems).describe('Path patterns the task will own (its write scope).'),
    sacred_exceptions: z
      .array(FilePath)
      .max(LIMITS.listItems)
      .optional()
      .describe('Sacred Scope paths (path patterns) this task explicitly needs to write; honoured only where the policy profile allows the same exception.'),
    brief: Brief.optional().describe(
      'brief.json the task is created from (seed 003): stored in task.created, its spec.scope.files_owned must equal files_owned, and the task then closes only on an accepted done claim (docs/task-claims.md).',
    ),
  })
  .describe('Creates a task for this action. Exactly one of task_id and task is present.');
export type TaskSpec = z.infer<typeof TaskSpec>;

/** The logical step the action belongs to; the orchestrator creates it or matches it to an open one. */
export const StepSpec = z.strictObject({
  kind: Name.describe('plan, search, inspect, edit, run_tests, publish_result, rollback, ...'),
  title: Title,
});
export type StepSpec = z.infer<typeof StepSpec>;

/** HTTP methods a network action may use. */
export const HttpMethod = z.enum(['GET', 'HEAD', 'OPTIONS', 'POST', 'PUT', 'PATCH', 'DELETE']);
export type HttpMethod = z.infer<typeof HttpMethod>;

/** Methods with no intended side effect: the only ones a `network_read` may use. */
export const SAFE_HTTP_METHODS: readonly HttpMethod[] = Object.freeze(['GET', 'HEAD', 'OPTIONS'] as const);

const HeaderName = z
  .string()
  .min(1)
  .max(LIMITS.title)
  .regex(/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/, 'must be an HTTP header name');

/**
 * Parameters of an action. Known keys are typed; any other key is allowed and
 * carries a bounded JSON value. Depth and size of the whole object are bounded.
 * Secrets never travel here: refer to secret handles, which the executor
 * resolves at execution time.
 */
export const ActionParams = withinJsonBounds(
  z
    .object({
      argv: z
        .array(z.string().max(LIMITS.arg))
        .min(1)
        .max(LIMITS.argvItems)
        .optional()
        .describe('Command and arguments, executed without a shell. Required for execute_command.'),
      cwd: FilePath.optional().describe('Working directory of a command, inside the cell home.'),
      path: FilePath.optional().describe('The file or directory acted on. Required for read_local, write_local, delete_local.'),
      content: z.string().max(LIMITS.inlineContent).optional().describe('Inline content to write; larger content goes through an artifact.'),
      encoding: z.enum(['utf8', 'base64']).optional().describe('Encoding of content and body; utf8 when absent.'),
      url: HttpUrl.optional().describe('Absolute http(s) URL. Required for network_read and network_write.'),
      method: HttpMethod.optional().describe('HTTP method; network_read allows only GET, HEAD and OPTIONS.'),
      headers: boundedRecord(HeaderName, z.string().max(LIMITS.headerValue), LIMITS.headers).optional(),
      body: z.string().max(LIMITS.inlineContent).optional().describe('Request body of a network action.'),
      timeout_ms: z.int().min(1).max(86_400_000).optional(),
    })
    .catchall(JsonValue),
);
export type ActionParams = z.infer<typeof ActionParams>;

const PATH_ACTIONS: readonly ActionClass[] = ['read_local', 'write_local', 'delete_local'];
const URL_ACTIONS: readonly ActionClass[] = ['network_read', 'network_write'];

/**
 * A typed execution proposal from an agent or other principal (Hermit 11.3):
 * the public wire contract of `writ.ingress.action.<principal_id>` and
 * `POST /v1/actions`. Unknown top-level keys are rejected so typos never pass.
 */
export const ActionRequest = withRules(
  z.strictObject({
    action_request_id: Id.describe('Chosen by the proposer; also its idempotency handle.'),
    task_id: Id.optional().describe('An existing task to act in. Exactly one of task_id and task is present.'),
    task: TaskSpec.optional(),
    step: StepSpec.optional(),
    action_class: ActionClass,
    target_resources: z
      .array(ResourceName)
      .min(1)
      .max(LIMITS.targetResources)
      .describe('Every resource the action touches: paths, URLs, repo:<name>@<ref>, memory:<scope>.'),
    params: ActionParams,
    expected_effects: z.array(Text).max(LIMITS.shortListItems).describe('What the proposer expects to change.'),
    reversibility_hint: Reversibility,
    reason: Text.describe('Why the action is needed; shown to approvers.'),
    proposed_by: Id.describe('principal_id of the proposer; must match the signing key.'),
    proposed_at: Timestamp,
    supersedes: Id.optional().describe(
      'action_request_id of an earlier request of the same task (same proposer) that this one replaces before it executes: its pending approval is invalidated and its attempt superseded (Hermit 11.5, 16.7). Requires task_id.',
    ),
  }),
  (request, report) => {
    const hasTaskId = isPresent(request.task_id);
    const hasTask = isPresent(request.task);
    if (!hasTaskId && !hasTask) report(['task_id'], 'either task_id or task is required');
    if (hasTaskId && hasTask) report(['task'], 'must be absent when task_id is given');
    const task = request.task;
    const brief = field(task, 'brief');
    if (isPresent(brief)) {
      const owned = field(task, 'files_owned');
      const briefOwned = field(field(field(brief, 'spec'), 'scope'), 'files_owned');
      if (Array.isArray(owned) && Array.isArray(briefOwned) && !sameSet(owned, briefOwned)) {
        report(['task', 'files_owned'], "must equal the brief's spec.scope.files_owned: a brief's scope is the task's");
      }
    }

    const actionClass = request.action_class as ActionClass;
    const params = request.params;
    if (typeof params !== 'object' || params === null) return;
    if (actionClass === 'execute_command' && !isPresent(field(params, 'argv'))) report(['params', 'argv'], 'is required for execute_command');
    if (PATH_ACTIONS.includes(actionClass) && !isPresent(field(params, 'path'))) report(['params', 'path'], `is required for ${actionClass}`);
    if (URL_ACTIONS.includes(actionClass) && !isPresent(field(params, 'url'))) report(['params', 'url'], `is required for ${actionClass}`);
    if (actionClass === 'memory_write') {
      // Typed by MemoryWriteParams (knowledge/memory-write.ts) rather than declared beside argv and path:
      // it is a discriminated union, which the proto mirror cannot express, so it travels among the extra keys and is checked here.
      const memory = field(params, 'memory');
      if (!isPresent(memory)) report(['params', 'memory'], 'is required for memory_write');
      else {
        const parsed = MemoryWriteParams.safeParse(memory);
        if (!parsed.success) for (const issue of parsed.error.issues) report(['params', 'memory', ...issue.path.map(String)], issue.message);
      }
      const targets = request.target_resources;
      if (Array.isArray(targets) && !targets.some((target) => typeof target === 'string' && target.startsWith('memory:'))) {
        report(['target_resources'], 'must name the memory written (memory:<scope>) for memory_write');
      }
    }
    const method = field(params, 'method');
    if (actionClass === 'network_read' && typeof method === 'string' && !(SAFE_HTTP_METHODS as readonly string[]).includes(method)) {
      report(['params', 'method'], 'network_read allows only GET, HEAD or OPTIONS');
    }
  },
).meta({ title: 'ActionRequest', description: 'A typed execution proposal: the public contract agents publish (Hermit 11.3).' });
export type ActionRequest = z.infer<typeof ActionRequest>;

function sameSet(a: readonly unknown[], b: readonly unknown[]): boolean {
  const left = new Set(a);
  const right = new Set(b);
  return left.size === right.size && [...left].every((item) => right.has(item));
}

/** Parses an ActionRequest, throwing a `ContractError` (CONTRACT_INVALID) that lists every offending path. */
export function parseActionRequest(input: unknown): ActionRequest {
  return parseContract('ActionRequest', ActionRequest, input);
}

/** Parses an ActionRequest without throwing. */
export function safeParseActionRequest(input: unknown): ParseResult<ActionRequest> {
  return safeParseContract('ActionRequest', ActionRequest, input);
}
