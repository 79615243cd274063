import { Command, CommanderError, Option } from 'commander';
import { PrincipalRole, PrincipalType, ProjectionView, hasErrorCode } from '@writ/contracts';
import { CliError } from './cli-errors.js';
import { connectionFrom, processIo, type CliIo } from './cli-io.js';
import { RESOLVED_OUTCOMES, actionResolve } from './commands/action-resolve.js';
import { actionShow } from './commands/action-show.js';
import { cellList } from './commands/cell-list.js';
import { cellRenew } from './commands/cell-renew.js';
import { cellResurrect } from './commands/cell-resurrect.js';
import { cellShow } from './commands/cell-show.js';
import { actionSubmit } from './commands/action-submit.js';
import { approvalResolve, type ApprovalDecision } from './commands/approval-resolve.js';
import { APPROVAL_STATUS_FILTERS, approvalsList } from './commands/approvals-list.js';
import { approvalsShow } from './commands/approvals-show.js';
import { doctor } from './commands/doctor.js';
import { streamsEnsure } from './commands/streams-ensure.js';
import { streamsReplicas } from './commands/streams-replicas.js';
import { init } from './commands/init.js';
import { pgSetup } from './commands/pg-setup.js';
import { principalAdd } from './commands/principal-add.js';
import { principalKeygen } from './commands/principal-keygen.js';
import { principalRevoke } from './commands/principal-revoke.js';
import { principalShow } from './commands/principal-show.js';
import { participantShow } from './commands/participant-show.js';
import { participantVerify } from './commands/participant-verify.js';
import { receiptShow } from './commands/receipt-show.js';
import { rollback } from './commands/rollback.js';
import { exportBundle } from './commands/export.js';
import { verify } from './commands/verify.js';
import { taskShow } from './commands/task-show.js';
import { registerTaskClaimCommands } from './commands/task-claim-commands.js';
import { decisions } from './commands/decisions.js';
import { explain } from './commands/explain.js';
import { grantRevoke } from './commands/grant-revoke.js';
import { beliefAssert, beliefList, beliefRevoke, workingStateSet, workingStateShow } from './commands/knowledge.js';
import { memoryInvalidate, memoryList, memoryPromote, memoryShow } from './commands/memory.js';
import { focus, history, say } from './commands/conversation.js';
import { contextShow } from './commands/context.js';
import { keysList } from './commands/keys-list.js';
import { ROTATING_SERVICES, keysRotate, type RotatingService } from './commands/keys-rotate.js';
import { policyApply } from './commands/policy-apply.js';
import { policyList } from './commands/policy-list.js';
import { policyShow } from './commands/policy-show.js';
import { policySimulate } from './commands/policy-simulate.js';
import { tlogHead } from './commands/tlog-head.js';
import { tlogProve } from './commands/tlog-prove.js';
import { projectionsRebuild } from './commands/projections-rebuild.js';
import { projectionsStatus } from './commands/projections-status.js';
import { httpToken } from './commands/http-token.js';
import { serveAll } from './commands/serve.js';
import { DEFAULT_API_URL, WritApi } from './http-api.js';

export { CliError, type CliErrorCode } from './cli-errors.js';
export { connectionFrom, processIo, type CliIo, type Connection } from './cli-io.js';
export { actionSubmit, type ActionSubmitOptions, type SubmitResult } from './commands/action-submit.js';
export { doctor, type DoctorCheck, type DoctorOptions, type DoctorReport } from './commands/doctor.js';
export { init, type InitOptions } from './commands/init.js';
export { DEFAULT_PG_ADMIN_URL, pgSetup, type PgSetupOptions, type PgSetupResult } from './commands/pg-setup.js';
export { streamsEnsure, type StreamsEnsureOptions } from './commands/streams-ensure.js';
export { streamsReplicas, type StreamReplicasReport, type StreamsReplicasOptions } from './commands/streams-replicas.js';
export { principalAdd, type PrincipalAddOptions, type PrincipalAddOutcome, type PrincipalAddResult } from './commands/principal-add.js';
export { principalKeygen, type KeygenOptions } from './commands/principal-keygen.js';
export { principalRevoke, type PrincipalRevokeOptions, type PrincipalRevokeResult } from './commands/principal-revoke.js';
export { principalShow, type PrincipalView } from './commands/principal-show.js';
export { participantShow } from './commands/participant-show.js';
export { participantVerify, type ParticipantVerifyOptions } from './commands/participant-verify.js';
export { actionShow } from './commands/action-show.js';
export { cellList, type CellListEntry } from './commands/cell-list.js';
export { cellRenew, parseDuration, type CellRenewOptions } from './commands/cell-renew.js';
export { cellResurrect, type CellResurrectOptions } from './commands/cell-resurrect.js';
export { cellShow, type CellView } from './commands/cell-show.js';
export { actionResolve, type ActionResolveOptions } from './commands/action-resolve.js';
export { approvalResolve, type ApprovalDecision, type ApprovalResolveOptions } from './commands/approval-resolve.js';
export { approvalsList, type ApprovalsListOptions } from './commands/approvals-list.js';
export { approvalsShow, type ApprovalsShowOptions } from './commands/approvals-show.js';
export { receiptShow, type ReceiptShowOptions } from './commands/receipt-show.js';
export { rollback, rollbackRequest, rollbackRequestId, type RollbackOptions, type RollbackSubmitted } from './commands/rollback.js';
export { exportBundle, type ExportOptions, type ExportResult } from './commands/export.js';
export { verify, type VerifyOptions, type VerifyReport } from './commands/verify.js';
export { assembleBundle, bundleNeeds, type BundleSources } from './evidence/assemble-bundle.js';
export { bundleHashOf, sealBundle, serializeBundle } from './evidence/bundle-seal.js';
export { verifyBundle, verifyBundleText, type BundleCheck, type BundleCheckCode, type BundleCheckStatus, type BundleVerification } from './evidence/verify-bundle.js';
export { taskShow } from './commands/task-show.js';
export { taskCreate, type TaskCreateOptions, type TaskCreateResult } from './commands/task-create.js';
export { taskClaim, type ClaimCommand, type TaskClaimOptions } from './commands/task-claim.js';
export { decisions } from './commands/decisions.js';
export { explain, type ExplainOptions } from './commands/explain.js';
export { decisionLog, type DecisionEntry, type DecisionLog } from './explain/decision-log.js';
export { explainTask, type ActionExplanation, type TaskExplanation } from './explain/task-explanation.js';
export { grantRevoke, type GrantRevokeOptions } from './commands/grant-revoke.js';
export { beliefAssert, beliefList, beliefRevoke, workingStateSet, workingStateShow } from './commands/knowledge.js';
export { memoryInvalidate, memoryList, memoryPromote, memoryShow } from './commands/memory.js';
export { focus, history, say } from './commands/conversation.js';
export { contextLines, contextShow, type ContextOptions, type ShownContext } from './commands/context.js';
export { keysList, type KeysListOptions, type PrincipalKeys } from './commands/keys-list.js';
export { keysRotate, type KeysRotateOptions } from './commands/keys-rotate.js';
export { policyApply, type PolicyApplyOptions } from './commands/policy-apply.js';
export { policyList, type PolicyListEntry } from './commands/policy-list.js';
export { policyShow, type PolicyShowOptions } from './commands/policy-show.js';
export {
  collectPolicyRequests,
  policySimulate,
  simulatePolicy,
  type PolicySimulateOptions,
  type RecordedPolicyRequest,
  type SimulationReport,
} from './commands/policy-simulate.js';
export { tlogHead, type TlogHeadOptions } from './commands/tlog-head.js';
export { tlogProve, type TlogProveOptions } from './commands/tlog-prove.js';
export { projectionsRebuild, type ProjectionsRebuildOptions } from './commands/projections-rebuild.js';
export { projectionsStatus, type ProjectionsStatusOptions, type ProjectionStatusView } from './commands/projections-status.js';
export { WritApi, httpCredential, type ApiCaller } from './http-api.js';
export { httpToken, type HttpTokenOptions, type HttpTokenResult } from './commands/http-token.js';
export { verifyReceiptDocument, type ReceiptCheck, type ReceiptCheckCode, type ReceiptVerification } from './receipt-verification.js';

const EXIT_FAILURE = 1;
const EXIT_USAGE = 2;

const collect = (value: string, previous: string[]): string[] => [...previous, value];

const URL_HELP = `the Writ HTTP API (default WRIT_URL or ${DEFAULT_API_URL})`;
const READER_HELP = 'who reads the API: signs its bearer token (default WRIT_OPERATOR_ID or "operator")';
const READER_KEY_HELP = "the reader's PRIVATE JWK (default WRIT_OPERATOR_KEY)";

function program(io: CliIo): Command {
  const writ = new Command('writ')
    .description('Writ, the governed action kernel: principals, keys, signed actions, approvals, tasks and receipts')
    .exitOverride()
    // A parent's options (`writ action --json <id>`) stay out of its subcommands' (`writ action submit ... --json`).
    .enablePositionalOptions()
    .configureOutput({
      writeOut: (text) => io.stdout(text.trimEnd()),
      writeErr: (text) => io.stderr(text.trimEnd()),
      // Usage errors are printed once, by run(), as `error CLI_USAGE: ...`.
      outputError: () => undefined,
    });

  writ
    .command('init')
    .description("set up a deployment's trust material once: Writ's NATS authority and server config, operator / dashboard / service credentials, the first operator's key and the trust anchor (re-runs create only what is missing)")
    .option('--home <dir>', 'where (default WRIT_HOME or ./var/writ)')
    .option('--port <port>', "Writ's NATS port (default 4223)")
    .option('--host <address>', "the address Writ's NATS listens on (default 127.0.0.1)")
    .option('--monitor-port <port>', "Writ's NATS monitoring port (default 8223, loopback only)")
    .option('--operator <id>', "the first operator's principal id (default operator)")
    .option('--tls-cert <file>', 'TLS for client connections: the server certificate (PEM)')
    .option('--tls-key <file>', 'TLS for client connections: the server key (PEM)')
    .option('--json', 'print the paths as JSON')
    .action(async (options: { home?: string; port?: string; host?: string; monitorPort?: string; operator?: string; tlsCert?: string; tlsKey?: string; json?: boolean }) => {
      await init(options, io);
    });

  writ
    .command('pg')
    .description("Postgres (operator)")
    .command('setup')
    .description("as a Postgres admin: create or update each Postgres-using service's own role (scram-sha-256, the password writ init generated under <home>/pg/, 0600) and give it the deployment's schema; --rotate sets a new password (idempotent; prints paths, never a password)")
    .option('--home <dir>', 'the deployment (default WRIT_HOME or ./var/writ)')
    .option('--admin-url <url>', `an admin connection (default WRIT_PG_ADMIN_URL or postgres://postgres@127.0.0.1:5432/writ); its database is the roles'`)
    .option('--rotate', "generate a new password, set it on the role, then replace the file (the projection reads it on each new connection)")
    .option('--json', 'print the outcome as JSON')
    .action(async (options: { home?: string; adminUrl?: string; rotate?: boolean; json?: boolean }) => {
      await pgSetup(options, io);
    });

  writ
    .command('doctor')
    .description("the stack from outside: Writ's NATS (auth on, this credential), the streams and their replicas, each service's readiness, the trust anchor; exit 1 with the next step when something is wrong")
    .option('--host <address>', "the services' HTTP host (default 127.0.0.1; WRIT_URL names the API)")
    .option('--nats <url>', 'NATS server (default WRIT_NATS_URL or nats://127.0.0.1:4223)')
    .option('--json', 'print the report as JSON')
    .action(async (options: { host?: string; nats?: string; json?: boolean }) => {
      await doctor(options, connectionFrom(io, options.nats), io);
    });

  writ
    .command('serve')
    .description(
      "run Writ's seven services in one Node process (apps/serve, run as a child of this command: one-machine installs and tests), each with its own bus credential ($WRIT_HOME/creds/<service>.creds, or WRIT_SERVE_CREDS_DIR), HTTP port (WRIT_HTTP_PORT_BASE + 0..6: projection, ingress, orchestrator, policy, approval, executor, receipt; else each service's default 8080..8086) and configuration (a variable for one service only: WRIT_SERVE_<SERVICE>__<VARIABLE>); SIGTERM drains them; a failure or a crash of any service ends the process non-zero, for its supervisor to restart (docs/operations.md, \"One process\")",
    )
    .option('--all', 'every service (required: one service alone runs as node services/<name>/dist/main.js)')
    .action(async (options: { all?: boolean }) => {
      await serveAll(options, io);
    });

  const streams = writ.command('streams').description('the event log and the bus streams (operator)');
  streams
    .command('ensure')
    .description("as the operator: create the log and bus streams, or bring their limits to the configured ones (services may create a missing stream, never reconfigure one)")
    .option('--nats <url>', 'NATS server (default WRIT_NATS_URL or nats://127.0.0.1:4223)')
    .option('--json', 'print the outcome as JSON')
    .action(async (options: { nats?: string; json?: boolean }) => {
      await streamsEnsure(options, connectionFrom(io, options.nats), io);
    });
  streams
    .command('replicas')
    .description("whether every peer of each replicated stream holds the same last messages; --repair replaces a diverged peer's copy with the quorum's (then: writ projections rebuild --force); exit 1 while one diverges")
    .option('--stream <name...>', 'streams to check (default: the event log and the bus streams)')
    .option('--tail <n>', 'how many of the last messages to compare', (value: string) => Number.parseInt(value, 10), 1000)
    .option('--repair', "remove each diverged peer from the stream so a fresh copy is placed and catches up from the leader")
    .option('--nats <url>', 'NATS server (default WRIT_NATS_URL or nats://127.0.0.1:4223)')
    .option('--json', 'print the report as JSON')
    .action(async (options: { stream?: string[]; tail: number; repair?: boolean; nats?: string; json?: boolean }) => {
      if (!Number.isInteger(options.tail) || options.tail < 1) throw new CliError('CLI_USAGE', `--tail ${options.tail}: a positive whole number of messages`);
      await streamsReplicas(options, connectionFrom(io, options.nats), io);
    });

  const principal = writ.command('principal').description('principals and their keys (writ.evt.principal.<id>)');
  principal
    .command('keygen')
    .description('generate an Ed25519 key pair: the private JWK goes to --out (0600), the public JWK to stdout')
    .option('--kid <kid>', 'key id (default: the key thumbprint)')
    .option('--out <file>', 'file for the PRIVATE JWK; never overwritten (default ./writ-<kid>.private.jwk.json)')
    .action(async (options: { kid?: string; out?: string }) => {
      await principalKeygen(options, io);
    });
  principal
    .command('add')
    .description("register a principal with its public key, or add a new key to it (idempotent), signed by an operator; issues the principal's bus credential")
    .requiredOption('--id <id>', 'principal id')
    .addOption(new Option('--type <type>', 'principal type').choices(PrincipalType.options).makeOptionMandatory())
    .addOption(new Option('--role <role>', 'role (repeat for several)').choices(PrincipalRole.options).argParser(collect).default([]))
    .requiredOption('--jwk <file>', 'the PUBLIC JWK (from writ principal keygen)')
    .option('--name <display>', 'display name (default: the id)')
    .option('--key <file>', "the operator's PRIVATE JWK that signs the registration (default WRIT_OPERATOR_KEY)")
    .option('--principal <id>', 'the operator who signs (default WRIT_OPERATOR_ID or "operator")')
    .option('--creds-out <file>', "where the principal's bus credential goes (default ./<id>.creds, mode 0600, never overwritten)")
    .option('--no-creds', 'register only: issue no bus credential')
    .option('--nats <url>', 'NATS server (default WRIT_NATS_URL or nats://127.0.0.1:4223)')
    .option('--json', 'print { principal_id, outcome, kids_added, creds? }')
    .action(async (options: { id: string; type: string; role: string[]; jwk: string; name?: string; key?: string; principal?: string; credsOut?: string; creds?: boolean; nats?: string; json?: boolean }) => {
      if (options.role.length === 0) throw new CliError('CLI_USAGE', 'name at least one --role');
      await principalAdd({ ...options, roles: options.role }, connectionFrom(io, options.nats), io);
    });
  principal
    .command('revoke')
    .description("revoke a principal's keys (signed by an operator; ingress appends principal.key_revoked) and, for an agent revoked whole, cut its bus credential at once")
    .argument('<id>', 'principal id')
    .option('--kid <kid>', 'only this key (repeat for several; the bus credential is then kept)', collect, [])
    .option('--reason <text>', 'why (recorded in each principal.key_revoked)')
    .option('--key <file>', "the operator's PRIVATE JWK that signs (default WRIT_OPERATOR_KEY)")
    .option('--principal <id>', 'the operator who signs (default WRIT_OPERATOR_ID or "operator")')
    .option('--nats <url>', 'NATS server (default WRIT_NATS_URL or nats://127.0.0.1:4223)')
    .option('--json', 'print { principal_id, kids_revoked, bus_revoked }')
    .action(async (id: string, options: { kid: string[]; reason?: string; key?: string; principal?: string; nats?: string; json?: boolean }) => {
      await principalRevoke(id, options, connectionFrom(io, options.nats), io);
    });
  principal
    .command('show')
    .description('a principal as the log says now')
    .argument('<id>', 'principal id')
    .option('--nats <url>', 'NATS server (default WRIT_NATS_URL or nats://127.0.0.1:4223)')
    .option('--json', 'print JSON')
    .action(async (id: string, options: { nats?: string; json?: boolean }) => {
      await principalShow(id, options, connectionFrom(io, options.nats), io);
    });

  const action = writ
    .command('action')
    .description("ActionRequests: `writ action <action_request_id>` shows one's status, `writ action submit` sends one")
    .argument('<action_request_id>', 'the action to show (GET /v1/actions/<id>)')
    .option('--url <base>', URL_HELP)
    .option('--principal <id>', READER_HELP)
    .option('--key <file>', READER_KEY_HELP)
    .option('--json', 'print the raw JSON')
    .action(async (id: string, options: { url?: string; principal?: string; key?: string; json?: boolean }) => {
      await actionShow(id, options, WritApi.from(io, options.url, options), io);
    });
  action
    .command('submit')
    .description('sign an ActionRequest file and publish it to <root>.ingress.action.<principal> (or POST it to <url>/v1/actions)')
    .argument('<file>', 'the ActionRequest JSON; proposed_at is set to now, proposed_by filled when missing')
    .requiredOption('--key <file>', 'the PRIVATE JWK that signs')
    .option('--principal <id>', 'the proposer (default: proposed_by of the file)')
    .addOption(new Option('--nats <url>', 'NATS server (default WRIT_NATS_URL or nats://127.0.0.1:4223)').conflicts('http'))
    .option('--http <url>', 'POST to <url>/v1/actions instead of publishing to NATS')
    .option('--json', 'print JSON')
    .action(async (file: string, options: { key: string; principal?: string; nats?: string; http?: string; json?: boolean }) => {
      await actionSubmit(file, options, connectionFrom(io, options.nats), io);
    });
  action
    .command('resolve')
    .description("settle an attempt whose execution outcome is unknown: sign an OutcomeResolution with the director's key and send it to <root>.qry.executor.resolve-outcome (nothing is re-run)")
    .argument('<attempt_id>', 'the attempt (writ task <task_id> shows it)')
    .requiredOption('--task <task_id>', "the attempt's task")
    .addOption(new Option('--outcome <outcome>', 'what the director established outside the log').choices(RESOLVED_OUTCOMES).makeOptionMandatory())
    .requiredOption('--note <text>', 'the evidence relied on (recorded in execution.outcome_resolved and the receipt)')
    .requiredOption('--key <file>', "the director's PRIVATE JWK")
    .requiredOption('--principal <id>', 'the director (resolved_by); a registered principal with role director, not the proposer')
    .option('--nats <url>', 'NATS server (default WRIT_NATS_URL or nats://127.0.0.1:4223)')
    .option('--json', "print the executor's reply as JSON")
    .action(async (attemptId: string, options: { task: string; outcome: string; note: string; key: string; principal: string; nats?: string; json?: boolean }) => {
      await actionResolve(attemptId, options, connectionFrom(io, options.nats), io);
    });

  const approvals = writ
    .command('approvals')
    .description('the approval inbox (GET /v1/approvals), oldest request first')
    .addOption(new Option('--status <status>', 'which approvals').choices(APPROVAL_STATUS_FILTERS).default('pending'))
    .option('--limit <n>', 'at most this many (the API allows 1 to 1000; default 200)')
    .option('--url <base>', URL_HELP)
    .option('--principal <id>', READER_HELP)
    .option('--key <file>', READER_KEY_HELP)
    .option('--json', 'print the raw JSON')
    .action(async (options: { status: string; limit?: string; url?: string; principal?: string; key?: string; json?: boolean }) => {
      await approvalsList(options, WritApi.from(io, options.url, options), io);
    });
  approvals
    .command('show')
    .description('one approval (GET /v1/approvals/<id>): packet and its artifact ref, state witness, expiry, resolution with resolver and cause, decisions')
    .argument('<approval_id>', 'the approval (writ approvals lists them)')
    .option('--url <base>', URL_HELP)
    .option('--principal <id>', READER_HELP)
    .option('--key <file>', READER_KEY_HELP)
    .option('--json', 'print the raw JSON')
    .action(async (id: string, options: { url?: string; principal?: string; key?: string; json?: boolean }) => {
      await approvalsShow(id, options, WritApi.from(io, options.url, options), io);
    });
  for (const [name, decision, verb] of [
    ['approve', 'grant', 'grant'],
    ['deny', 'deny', 'deny'],
  ] as const satisfies readonly (readonly [string, ApprovalDecision, string])[]) {
    writ
      .command(name)
      .description(
        `${verb} a pending approval: fetch its packet (GET /v1/approvals/<id>), check it hashes to the packet the approval records, sign an ApprovalResolution over that hash with the director's key and POST it to /v1/approvals/<id>/${decision}`,
      )
      .argument('<approval_id>', 'the approval (writ approvals lists them)')
      .requiredOption('--key <file>', "the director's PRIVATE JWK")
      .requiredOption('--principal <id>', 'the director (resolved_by); must be a registered principal with role director')
      .option('--note <text>', 'a note recorded with the resolution')
      .option('--task <task_id>', "the approval's task (default: the one GET /v1/approvals/<id> names)")
      .option('--url <base>', URL_HELP)
      .option('--json', "print the approval service's reply as JSON")
      .action(async (approvalId: string, options: { key: string; principal: string; note?: string; task?: string; url?: string; json?: boolean }) => {
        // The director reads the packet it signs over with its own token.
        await approvalResolve(approvalId, decision, options, WritApi.from(io, options.url, options), io);
      });
  }
  const task = writ
    .command('task')
    .description('a task: status, steps and attempts, and its event timeline (GET /v1/tasks/<id>)')
    .argument('<task_id>', 'the task')
    .option('--url <base>', URL_HELP)
    .option('--principal <id>', READER_HELP)
    .option('--key <file>', READER_KEY_HELP)
    .option('--json', 'print the raw JSON (every page of the timeline in one events list)')
    .action(async (id: string, options: { url?: string; principal?: string; key?: string; json?: boolean }) => {
      await taskShow(id, options, WritApi.from(io, options.url, options), io);
    });
  registerTaskClaimCommands(task, io);
  writ
    .command('explain')
    .description('what happened, why, on which evidence, under whose authority, what changed, and whether it can be verified and rolled back: each action of a task, or one action, from the log')
    .argument('<id>', 'a task id, or an action request id (its task is found with --task, else through GET /v1/actions/<id>)')
    .option('--task <task_id>', "the action's task: the log alone is read, no API lookup")
    .option('--url <base>', `for an action id without --task: ${URL_HELP}`)
    .option('--principal <id>', READER_HELP)
    .option('--key <file>', READER_KEY_HELP)
    .option('--nats <url>', 'NATS server (default WRIT_NATS_URL or nats://127.0.0.1:4223)')
    .option('--json', 'print the explanation as one JSON document (format writ.explain/1)')
    .action(async (id: string, options: { task?: string; url?: string; principal?: string; key?: string; nats?: string; json?: boolean }) => {
      await explain(id, options, connectionFrom(io, options.nats), options.task === undefined ? WritApi.from(io, options.url, options) : undefined, io);
    });
  writ
    .command('context')
    .description("the context pack an attempt was proposed under (Hermit 15.6): its items in the 15.7 precedence with their sources, what was left out and why, the budget; checked against the sha256 the log recorded (GET /v1/attempts/<id>/context)")
    .argument('<id>', "an attempt id, or a task id (its latest attempt's pack)")
    .option('--verify', "recompile the pack from the task's log (over NATS) and require the same bytes")
    .option('--url <base>', URL_HELP)
    .option('--principal <id>', READER_HELP)
    .option('--key <file>', READER_KEY_HELP)
    .option('--nats <url>', 'with --verify: NATS server (default WRIT_NATS_URL or nats://127.0.0.1:4223)')
    .option('--json', 'print { attempt_id, task_id, sha256, pack, recompiled_identical? } as JSON')
    .action(async (id: string, options: { verify?: boolean; url?: string; principal?: string; key?: string; nats?: string; json?: boolean }) => {
      await contextShow(id, options, WritApi.from(io, options.url, options), options.verify === true ? connectionFrom(io, options.nats) : undefined, io);
    });
  writ
    .command('decisions')
    .description("a task's decisions (policy results, approval resolutions) in the decisions-log format: timestamp, task, classification, decision, rationale, falsifier")
    .argument('<task_id>', 'the task')
    .option('--nats <url>', 'NATS server (default WRIT_NATS_URL or nats://127.0.0.1:4223)')
    .option('--json', 'print the log as one JSON document (format writ.decisions/1)')
    .action(async (id: string, options: { nats?: string; json?: boolean }) => {
      await decisions(id, options, connectionFrom(io, options.nats), io);
    });
  writ
    .command('receipt')
    .description('a receipt (GET /v1/receipts/<id>); --verify checks its signature and body against the service keys')
    .argument('<receipt_id>', 'the receipt')
    .option('--verify', 'verify: contract, receipt_hash, EdDSA JWS by a key of GET /v1/keys, signed body = canonical receipt, signer = signer_ref')
    .option('--keys <file>', 'with --verify: trust this JWKS file instead of GET /v1/keys')
    .option('--url <base>', URL_HELP)
    .option('--principal <id>', READER_HELP)
    .option('--key <file>', READER_KEY_HELP)
    .option('--json', 'print the raw JSON ({ receipt, verification } with --verify)')
    .action(async (id: string, options: { verify?: boolean; keys?: string; url?: string; principal?: string; key?: string; json?: boolean }) => {
      await receiptShow(id, options, WritApi.from(io, options.url, options), io);
    });
  writ
    .command('rollback')
    .description(
      "roll back the action a receipt is about, as a new governed action: the receipt is read from its task's log (signature checked), and ONE signed ActionRequest of class rollback naming it and its steps goes to ingress (policy, approval, grant, its own receipt); refused when the receipt names no rollback method",
    )
    .argument('<receipt_id>', 'the receipt of the action to undo (writ explain lists each action\'s receipts and rollback)')
    .option('--key <file>', 'the PRIVATE JWK that signs the request')
    .requiredOption('--principal <id>', 'who proposes the rollback (a registered principal whose key --key is)')
    .option('--task <task_id>', "the receipt's task: the log alone is read, no API lookup")
    .option('--id <action_request_id>', 'the request id (default rb-<hash of the receipt id>: a second submission dedupes)')
    .option('--reason <text>', 'why, shown to approvers (default: the receipt and its summary)')
    .option('--url <base>', `without --task: ${URL_HELP}, to find the receipt's task`)
    .option('--nats <url>', 'NATS server (default WRIT_NATS_URL or nats://127.0.0.1:4223)')
    .option('--json', 'print { action_request_id, task_id, receipt_id, receipt_hash, steps, subject, stream, seq, duplicate }')
    .action(async (receiptId: string, options: { key?: string; principal: string; task?: string; id?: string; reason?: string; url?: string; nats?: string; json?: boolean }) => {
      await rollback(receiptId, options, connectionFrom(io, options.nats), options.task === undefined ? WritApi.from(io, options.url, options) : undefined, io);
    });
  writ
    .command('export')
    .description("write a task's receipt bundle: its events through the last receipt, the receipts with their inclusion proofs against one signed tree head, and the key history to check them offline (docs/verification.md)")
    .argument('<task_id>', 'the task')
    .option('--out <file>', 'where to write it (default writ-bundle-<task_id>.json; - for stdout)')
    .option('--force', 'replace an existing file')
    .option('--wait <seconds>', 'how long to wait for receipts not yet sequenced in the transparency log (default 30)')
    .option('--nats <url>', 'NATS server (default WRIT_NATS_URL or nats://127.0.0.1:4223)')
    .option('--json', 'print { file, task_id, receipts, events, log_id, tree_size, bundle_hash, bytes, ok }')
    .action(async (taskId: string, options: { out?: string; force?: boolean; wait?: string; nats?: string; json?: boolean }) => {
      await exportBundle(taskId, options, connectionFrom(io, options.nats), io);
    });
  writ
    .command('verify')
    .description('check a receipt bundle offline and print every check (PASS / FAIL / SKIP / UNANCHORED); exit 1 on any failure. --task checks a task against the live log and transparency log instead')
    .argument('[bundle]', 'the bundle file (from writ export)')
    .option('--trust <jwks.json>', 'keys obtained independently of the bundle (e.g. GET /v1/keys): every key the checks rely on must be in it')
    .option('--trust-anchor <file>', "the deployment's trust-anchor.json (writ init), obtained independently of the bundle: every registration, key and role must chain to it (with --task, default WRIT_TRUST_ANCHOR)")
    .option('--task <task_id>', 'verify this task in the live log instead of a file')
    .option('--wait <seconds>', 'with --task: how long to wait for receipts not yet sequenced (default 30)')
    .option('--live', "with a bundle: also check the live log's signed tree head and that the bundle's tree is a prefix of it (consistency proof)")
    .option('--nats <url>', 'with --task or --live: NATS server (default WRIT_NATS_URL or nats://127.0.0.1:4223)')
    .option('--json', 'print { ok, anchored, source, bundle, checks, not_asserted }')
    .action(async (file: string | undefined, options: { trust?: string; trustAnchor?: string; task?: string; wait?: string; live?: boolean; nats?: string; json?: boolean }) => {
      await verify(file, options, connectionFrom(io, options.nats), io);
    });

  const POLICY_NATS_HELP = 'NATS server (default WRIT_NATS_URL or nats://127.0.0.1:4223)';
  const policy = writ.command('policy').description('policy profiles as data: the bucket WRIT_POLICY_BUCKET (default WRIT_POLICY), versioned by content hash');
  policy
    .command('apply')
    .description('validate a profile (YAML or JSON; every issue printed), sign it as a director and apply it (<root>.qry.policy.apply-profile)')
    .argument('<file>', 'the profile document (no version: it is the content hash)')
    .option('--key <file>', "the director's PRIVATE JWK (without it the file is only validated)")
    .option('--principal <id>', 'the director (applied_by; default WRIT_OPERATOR_ID); a registered principal with role director')
    .option('--nats <url>', POLICY_NATS_HELP)
    .option('--json', "print the policy service's reply as JSON")
    .action(async (file: string, options: { key?: string; principal?: string; nats?: string; json?: boolean }) => {
      await policyApply(file, options, connectionFrom(io, options.nats), io);
    });
  policy
    .command('list')
    .description('every profile in the bucket: id, version, applied_by, applied_at')
    .option('--nats <url>', POLICY_NATS_HELP)
    .option('--json', 'print JSON')
    .action(async (options: { nats?: string; json?: boolean }) => {
      await policyList(options, connectionFrom(io, options.nats), io);
    });
  policy
    .command('show')
    .description("a profile's current record; --yaml prints the document alone, ready to edit and apply")
    .argument('<id>', 'the profile id')
    .option('--nats <url>', POLICY_NATS_HELP)
    .addOption(new Option('--json', 'print the record as JSON').conflicts('yaml'))
    .option('--yaml', 'print the document as YAML')
    .action(async (id: string, options: { nats?: string; json?: boolean; yaml?: boolean }) => {
      await policyShow(id, options, connectionFrom(io, options.nats), io);
    });
  policy
    .command('simulate')
    .description('replay recorded requests from the event log against a candidate profile and print the decisions that would change (runs nothing, records nothing)')
    .requiredOption('--profile <file>', 'the candidate profile document (YAML or JSON)')
    .requiredOption('--since <time>', 'RFC 3339, or back from now: 30m, 2h, 7d, 1w')
    .option('--until <time>', 'same forms (default now)')
    .option('--all-tasks', "apply the candidate to every task, not only those whose profile id is the candidate's")
    .option('--nats <url>', POLICY_NATS_HELP)
    .option('--json', 'print the report as JSON')
    .action(async (options: { profile: string; since: string; until?: string; allTasks?: boolean; nats?: string; json?: boolean }) => {
      await policySimulate(options, connectionFrom(io, options.nats), io);
    });

  const grant = writ.command('grant').description('capability grants');
  grant
    .command('revoke')
    .description("revoke a grant: sign a GrantRevocation with the director's key and send it to <root>.qry.approval.revoke-grant; the executor refuses its next use")
    .argument('<grant_id>', 'the grant (writ task <task_id> shows it)')
    .requiredOption('--key <file>', "the director's PRIVATE JWK")
    .requiredOption('--principal <id>', 'the director (revoked_by); a registered principal with role director')
    .option('--reason <text>', 'why (recorded in grant.revoked; default "revoked by <principal>")')
    .option('--task <task_id>', "the grant's task (default: looked up in GET /v1/grants/<id>)")
    .option('--url <base>', URL_HELP)
    .option('--nats <url>', 'NATS server (default WRIT_NATS_URL or nats://127.0.0.1:4223)')
    .option('--json', "print the approval service's reply as JSON")
    .action(async (grantId: string, options: { key: string; principal: string; reason?: string; task?: string; url?: string; nats?: string; json?: boolean }) => {
      await grantRevoke(grantId, options, connectionFrom(io, options.nats), WritApi.from(io, options.url, options), io);
    });

  const NATS_HELP = 'NATS server (default WRIT_NATS_URL or nats://127.0.0.1:4223)';
  const SIGNER_KEY_HELP = "the signer's PRIVATE JWK: the task's agent (its owner) or a director";
  const workingState = writ.command('working-state').description("a task's working state (Hermit 15.2): bounded, task-local entries revised through signed requests");
  workingState
    .command('show')
    .description("the task's working state as the projection folded it (GET /v1/tasks/<id>/working-state)")
    .argument('<task_id>', 'the task')
    .option('--url <base>', URL_HELP)
    .option('--principal <id>', READER_HELP)
    .option('--key <file>', READER_KEY_HELP)
    .option('--json', 'print the row as JSON')
    .action(async (taskId: string, options: { url?: string; principal?: string; key?: string; json?: boolean }) => {
      await workingStateShow(taskId, options, WritApi.from(io, options.url, options), io);
    });
  workingState
    .command('set')
    .description('revise the working state: set the entries of entries.json (a JSON array of WorkingStateEntry) and remove keys, signed and sent to <root>.qry.orchestrator.revise-working-state; a refusal (KNOWLEDGE_WORKING_STATE_TOO_LARGE, _REVISION_CONFLICT, KNOWLEDGE_SECRET_BY_VALUE for an entry marked secret whose value is not { secret_ref }, ...) exits with its code')
    .argument('<task_id>', 'the task')
    .argument('[entries.json]', 'the entries to set (each replaces the entry of its key)')
    .requiredOption('--key <file>', SIGNER_KEY_HELP)
    .requiredOption('--principal <id>', 'the signer (revised_by)')
    .option('--remove <key>', 'an entry to remove (repeat for several)', collect, [])
    .option('--expected-revision <n>', "the revision this change is made against (default: the task's current one, read from its log)")
    .option('--compact', 'compact first: drop every entry no root reaches (pinned, objectives, constraints, pending questions, uncertainties, --keep keys) through refs; makes room at the size limit')
    .option('--keep <key>', 'with --compact: a key held from outside, kept with all it reaches (repeat for several)', collect, [])
    .option('--request-id <id>', 'the request id (default a fresh one); the same id sent again appends nothing')
    .option('--nats <url>', NATS_HELP)
    .option('--json', "print the orchestrator's reply as JSON")
    .action(async (taskId: string, file: string | undefined, options: { key: string; principal: string; remove: string[]; expectedRevision?: string; compact?: boolean; keep: string[]; requestId?: string; nats?: string; json?: boolean }) => {
      await workingStateSet(taskId, file, options, connectionFrom(io, options.nats), io);
    });

  writ
    .command('say')
    .description('send a free-form message (a note, an answer, a correction, a control word, chat) signed to <root>.qry.ingress.submit-message: ingress records it first, then binds it (explicit --task, else the --reply-to message\'s task, else, for --kind answer, the task awaiting approval (bound `approval`: it records the answer, a director\'s `writ approve` decides), else the conversation\'s focus; ambiguity is pending_disambiguation, settled by a --reply-to it naming one of its candidates with --task; a note, correction or answer on an ended task starts a new task anchored on its outcome, start_new_root) and answers where; INGRESS_MESSAGE_TASK_UNKNOWN, _REPLY_UNKNOWN, _REUSED record nothing')
    .argument('<text>', 'the message (secret-looking values are redacted before it is stored)')
    .requiredOption('--conversation <id>', 'the conversation it belongs to')
    .requiredOption('--key <file>', "the sender's PRIVATE JWK (an agent or a director)")
    .requiredOption('--principal <id>', 'the sender')
    .option('--kind <kind>', 'note (default), answer, correction, control or chat')
    .option('--task <task_id>', 'the task it is about (wins over reply and focus; yours, or any for a director)')
    .option('--reply-to <ingress_id>', 'an earlier message of this conversation it answers')
    .option('--fork', 'ask for a child task of the live task it lands on (fork_child: a new task of its owner, naming it as parent) instead of a note on it')
    .option('--message-id <id>', 'the message id (default a fresh one); the same id sent again records nothing more')
    .option('--nats <url>', NATS_HELP)
    .option('--json', "print ingress's reply as JSON")
    .action(async (text: string, options: { key: string; principal: string; conversation: string; kind?: string; task?: string; replyTo?: string; fork?: boolean; messageId?: string; nats?: string; json?: boolean }) => {
      await say(text, options, connectionFrom(io, options.nats), io);
    });
  writ
    .command('focus')
    .description("the focus in each of a principal's conversations (GET /v1/focus): a projection of ingress's records and bindings, rebuildable; an agent reads its own only")
    .option('--of <principal_id>', 'whose conversations (default the reader; a director or operator may name any)')
    .option('--url <base>', URL_HELP)
    .option('--principal <id>', READER_HELP)
    .option('--key <file>', READER_KEY_HELP)
    .option('--json', 'print the list as JSON')
    .action(async (options: { of?: string; url?: string; principal?: string; key?: string; json?: boolean }) => {
      await focus(options, WritApi.from(io, options.url, options), io);
    });
  writ
    .command('history')
    .description("a conversation's messages and where each was bound (GET /v1/conversations/<id>/history): the session history is only this projection")
    .argument('<conversation_id>', 'the conversation')
    .option('--of <principal_id>', 'whose conversation (default the reader)')
    .option('--url <base>', URL_HELP)
    .option('--principal <id>', READER_HELP)
    .option('--key <file>', READER_KEY_HELP)
    .option('--json', 'print the page as JSON')
    .action(async (conversation: string, options: { of?: string; url?: string; principal?: string; key?: string; json?: boolean }) => {
      await history(conversation, options, WritApi.from(io, options.url, options), io);
    });

  const belief = writ.command('belief').description("a task's beliefs (Hermit 15.3): evidence-backed, trust-tiered, never deleted (superseded or revoked instead)");
  belief
    .command('list')
    .description('every belief of the task with its status, version, trust tier and confidence (GET /v1/tasks/<id>/beliefs)')
    .argument('<task_id>', 'the task')
    .option('--status <status>', 'only beliefs of this status (active, superseded, contradicted, revoked, expired)')
    .option('--url <base>', URL_HELP)
    .option('--principal <id>', READER_HELP)
    .option('--key <file>', READER_KEY_HELP)
    .option('--json', 'print the list as JSON')
    .action(async (taskId: string, options: { status?: string; url?: string; principal?: string; key?: string; json?: boolean }) => {
      await beliefList(taskId, options, WritApi.from(io, options.url, options), io);
    });
  belief
    .command('assert')
    .description('assert a belief from belief.json (claim, scope, evidence_refs, confidence, trust_tier; supersedes / contradicts optional), signed and sent to <root>.qry.orchestrator.change-belief; a tier its evidence or signer cannot support exits KNOWLEDGE_TRUST_TIER_UNSUPPORTED, a secret belief whose structured_assertion is not { secret_ref } KNOWLEDGE_SECRET_BY_VALUE')
    .argument('<task_id>', 'the task')
    .argument('<belief.json>', 'the belief (belief_id defaults to a fresh bel-<uuid>)')
    .requiredOption('--key <file>', SIGNER_KEY_HELP)
    .requiredOption('--principal <id>', 'the asserter')
    .option('--request-id <id>', 'the request id (default a fresh one); the same id sent again appends nothing')
    .option('--nats <url>', NATS_HELP)
    .option('--json', "print the orchestrator's reply as JSON")
    .action(async (taskId: string, file: string, options: { key: string; principal: string; requestId?: string; nats?: string; json?: boolean }) => {
      await beliefAssert(taskId, file, options, connectionFrom(io, options.nats), io);
    });
  belief
    .command('revoke')
    .description('revoke a belief (it stays, with status revoked), signed and sent to <root>.qry.orchestrator.change-belief')
    .argument('<task_id>', 'the task')
    .argument('<belief_id>', 'the belief')
    .requiredOption('--reason <text>', 'why (recorded in belief.revoked)')
    .requiredOption('--key <file>', SIGNER_KEY_HELP)
    .requiredOption('--principal <id>', 'the signer (revoked_by)')
    .option('--request-id <id>', 'the request id (default a fresh one); the same id sent again appends nothing')
    .option('--nats <url>', NATS_HELP)
    .option('--json', "print the orchestrator's reply as JSON")
    .action(async (taskId: string, beliefId: string, options: { key: string; principal: string; reason: string; requestId?: string; nats?: string; json?: boolean }) => {
      await beliefRevoke(taskId, beliefId, options, connectionFrom(io, options.nats), io);
    });

  const memory = writ
    .command('memory')
    .description('durable memory (Hermit 8.7, 15.5): promoted and invalidated only by memory_write actions (policy, approval where the profile says, a receipt); never deleted');
  memory
    .command('promote')
    .description(
      "propose a memory promotion in your task: a memory_write ActionRequest, signed and sent as `writ action submit` sends one; policy decides it, the executor performs it under its grant, and it is receipted. A promotion without evidence or trust metadata degrades to a working state candidate (its receipt says so); a tier above its source belief is refused KNOWLEDGE_TRUST_TIER_ESCALATION. Follow it with `writ action <action_request_id>`",
    )
    .argument('<task_id>', 'the task it is proposed in (the source belief is looked up in its log)')
    .argument('[promotion.json]', 'the promotion (MemoryPromotionParams without op); the flags below override it')
    .requiredOption('--key <file>', "the proposer's PRIVATE JWK")
    .requiredOption('--principal <id>', 'the proposer (the task\'s agent)')
    .option('--memory-id <id>', 'the record to create (default a fresh mem-<uuid>)')
    .option('--claim <text>', 'the claim in words')
    .option('--scope <scope>', 'what it applies to, e.g. repo:writ')
    .option('--evidence <kind:id>', 'evidence: receipt:<id>, artifact:<id> or observation:<id> (repeat for several)', collect, [])
    .option('--trust-tier <tier>', 'untrusted, observed, verified, user_asserted or policy_asserted (at most its source belief\'s)')
    .option('--reason <text>', 'the promotion reason')
    .option('--source <kind:id>', 'belief:<id> (of this task) or artifact:<id>')
    .option('--invalidation <mode>', 'manual, on_evidence_revoked or at_expiry')
    .option('--expires-at <instant>', 'with --invalidation at_expiry')
    .option('--retention <class>', 'retention class, e.g. project, org, audit')
    .option('--supersedes <memory_id>', 'the record it replaces')
    .option('--action-request-id <id>', 'the ActionRequest id (default ar-mem-<uuid>)')
    .addOption(new Option('--nats <url>', NATS_HELP).conflicts('http'))
    .option('--http <url>', 'POST to <url>/v1/actions instead of publishing to NATS')
    .option('--json', 'print JSON')
    .action(async (taskId: string, file: string | undefined, options: Parameters<typeof memoryPromote>[2] & { nats?: string }) => {
      await memoryPromote(taskId, file, options, connectionFrom(io, options.nats), io);
    });
  memory
    .command('invalidate')
    .description('propose the invalidation of a memory record (a memory_write action, governed and receipted like the promotion); the record is kept, marked invalidated')
    .argument('<memory_id>', 'the record')
    .requiredOption('--task <task_id>', 'the task the action is proposed in')
    .requiredOption('--reason <text>', 'why (recorded in memory.invalidated)')
    .requiredOption('--key <file>', "the proposer's PRIVATE JWK")
    .requiredOption('--principal <id>', 'the proposer')
    .option('--superseded-by <memory_id>', 'the record that replaces it')
    .option('--action-request-id <id>', 'the ActionRequest id (default ar-mem-<uuid>)')
    .addOption(new Option('--nats <url>', NATS_HELP).conflicts('http'))
    .option('--http <url>', 'POST to <url>/v1/actions instead of publishing to NATS')
    .option('--json', 'print JSON')
    .action(async (memoryId: string, options: Parameters<typeof memoryInvalidate>[1] & { nats?: string }) => {
      await memoryInvalidate(memoryId, options, connectionFrom(io, options.nats), io);
    });
  memory
    .command('list')
    .description('memory records, newest first (GET /v1/memory; an agent: the ones it promoted)')
    .option('--status <status>', 'only records of this status (active, invalidated, revoked, expired)')
    .option('--scope <scope>', 'only records of this scope')
    .option('--task <task_id>', 'only records promoted in this task')
    .option('--url <base>', URL_HELP)
    .option('--principal <id>', READER_HELP)
    .option('--key <file>', READER_KEY_HELP)
    .option('--json', 'print the list as JSON')
    .action(async (options: { status?: string; scope?: string; task?: string; url?: string; principal?: string; key?: string; json?: boolean }) => {
      await memoryList(options, WritApi.from(io, options.url, options), io);
    });
  memory
    .command('show')
    .description('one memory record with its evidence, promotion reason and policy / approval / receipt refs (GET /v1/memory/<id>)')
    .argument('<memory_id>', 'the record')
    .option('--url <base>', URL_HELP)
    .option('--principal <id>', READER_HELP)
    .option('--key <file>', READER_KEY_HELP)
    .option('--json', 'print the record as JSON')
    .action(async (memoryId: string, options: { url?: string; principal?: string; key?: string; json?: boolean }) => {
      await memoryShow(memoryId, options, WritApi.from(io, options.url, options), io);
    });

  const keys = writ.command('keys').description("service signing keys: the JWKS is each service's /.well-known/jwks.json");
  keys
    .command('rotate')
    .description("rotate a service's signing key (director-signed request on <root>.qry.<service>.rotate-key); the old key stays valid until its retire_after, and what it signed verifies after")
    .addOption(new Option('--service <service>', 'whose key').choices(ROTATING_SERVICES).makeOptionMandatory())
    .requiredOption('--key <file>', "the director's PRIVATE JWK")
    .requiredOption('--principal <id>', 'the director (requested_by); a registered principal with role director')
    .option('--reason <text>', 'why (signed with the request)')
    .option('--nats <url>', 'NATS server (default WRIT_NATS_URL or nats://127.0.0.1:4223)')
    .option('--json', "print the service's reply as JSON")
    .action(async (options: { service: RotatingService; key: string; principal: string; reason?: string; nats?: string; json?: boolean }) => {
      await keysRotate(options, connectionFrom(io, options.nats), io);
    });
  keys
    .command('list')
    .description('the signing keys of the service principals as the log tells them: kid, status (active / retiring until T / retired), added_at')
    .option('--service <service>', 'one service (principal writ-<service>; default: approval and receipt)')
    .option('--principal <id>', 'list this principal instead')
    .option('--nats <url>', 'NATS server (default WRIT_NATS_URL or nats://127.0.0.1:4223)')
    .option('--json', 'print JSON')
    .action(async (options: { service?: string; principal?: string; nats?: string; json?: boolean }) => {
      await keysList(options, connectionFrom(io, options.nats), io);
    });
  const tlog = writ.command('tlog').description('the receipt transparency log (RFC 9162 Merkle tree of every receipt; writ.evt.transparency_log.<log_id>)');
  tlog
    .command('head')
    .description("the latest signed tree head (<root>.qry.receipt.tree-head), its signature checked against the receipt service's keys in the log")
    .option('--principal <id>', 'the receipt service principal (default WRIT_RECEIPT_PRINCIPAL_ID or writ-receipt)')
    .option('--nats <url>', 'NATS server (default WRIT_NATS_URL or nats://127.0.0.1:4223)')
    .option('--json', 'print { tree_head, ok, checks } as JSON')
    .action(async (options: { principal?: string; nats?: string; json?: boolean }) => {
      await tlogHead(options, connectionFrom(io, options.nats), io);
    });
  tlog
    .command('prove')
    .description("a receipt's inclusion proof (<root>.qry.receipt.inclusion-proof), checked here: head signature, the receipt's leaf hash from the log, the audit path to the signed root; exit 1 on any failure")
    .argument('<receipt_id>', 'the receipt')
    .option('--tree-size <n>', 'prove against the signed head published at this size (default: the current head)')
    .option('--principal <id>', 'the receipt service principal (default WRIT_RECEIPT_PRINCIPAL_ID or writ-receipt)')
    .option('--nats <url>', 'NATS server (default WRIT_NATS_URL or nats://127.0.0.1:4223)')
    .option('--json', 'print { proof, tree_head, ok, checks } as JSON')
    .action(async (receiptId: string, options: { treeSize?: string; principal?: string; nats?: string; json?: boolean }) => {
      await tlogProve(receiptId, options, connectionFrom(io, options.nats), io);
    });
  const participant = writ.command('participant').description('participants: seeds spawned under seed 002 (writ.evt.participant.<seed_id>; docs/spawn-retire.md)');
  participant
    .command('show')
    .description('a participant as the log says now: status, parent, keys, TTL, heartbeats, Last Will')
    .argument('<seed_id>', 'the seed id')
    .option('--nats <url>', 'NATS server (default WRIT_NATS_URL or nats://127.0.0.1:4223)')
    .option('--json', 'print the folded state as JSON')
    .action(async (seedId: string, options: { nats?: string; json?: boolean }) => {
      await participantShow(seedId, options, connectionFrom(io, options.nats), io);
    });
  participant
    .command('verify')
    .description('ask ingress to verify a signed seed.spawn.v1 manifest (<root>.qry.ingress.spawn-verify); exit 1 with its code when refused')
    .argument('<manifest>', 'the signed manifest (JSON file)')
    .requiredOption('--child-key <file>', "the child's PUBLIC JWK (its fingerprint must be key_binding.child_key_fingerprint)")
    .option('--nats <url>', 'NATS server (default WRIT_NATS_URL or nats://127.0.0.1:4223)')
    .option('--json', 'print the verdict as JSON')
    .action(async (file: string, options: { childKey: string; nats?: string; json?: boolean }) => {
      await participantVerify(file, options, connectionFrom(io, options.nats), io);
    });
  const cellCommand = writ.command('cell').description('Lazarus cells: one per task (writ.evt.cell.<cell_id>, cell id = task id; services/executor/README.md → Cells)');
  cellCommand
    .command('list')
    .description('every cell in the log: status, director, seats, last event')
    .option('--nats <url>', 'NATS server (default WRIT_NATS_URL or nats://127.0.0.1:4223)')
    .option('--json', 'print JSON')
    .action(async (options: { nats?: string; json?: boolean }) => {
      await cellList(options, connectionFrom(io, options.nats), io);
    });
  cellCommand
    .command('show')
    .description('a cell as its stream says now: seats and roles, TTLs, heartbeats, checkpoints, graveyard, events')
    .argument('<cell_id>', 'the cell (its task id)')
    .option('--nats <url>', 'NATS server (default WRIT_NATS_URL or nats://127.0.0.1:4223)')
    .option('--json', 'print JSON')
    .action(async (cellId: string, options: { nats?: string; json?: boolean }) => {
      await cellShow(cellId, options, connectionFrom(io, options.nats), io);
    });
  cellCommand
    .command('resurrect')
    .description("bring a closed cell back within its grace: sign a CellResurrection with the director's key and send it to <root>.qry.executor.resurrect-cell")
    .argument('<cell_id>', 'the cell (its task id)')
    .requiredOption('--key <file>', "the director's PRIVATE JWK")
    .requiredOption('--principal <id>', 'the director (resurrected_by): a registered principal with role director, not an agent')
    .option('--note <text>', "why (recorded in the cell's decisions log)")
    .option('--nats <url>', 'NATS server (default WRIT_NATS_URL or nats://127.0.0.1:4223)')
    .option('--json', "print the executor's reply as JSON")
    .action(async (cellId: string, options: { key: string; principal: string; note?: string; nats?: string; json?: boolean }) => {
      await cellResurrect(cellId, options, connectionFrom(io, options.nats), io);
    });
  cellCommand
    .command('renew')
    .description("push an ACTIVE, CHECKPOINTING or DOWNED cell's active expiry later, up to its policy's ceiling (24 h from activation by default): sign a CellRenewal with the director's key and send it to <root>.qry.executor.renew-cell")
    .argument('<cell_id>', 'the cell (its task id)')
    .requiredOption('--key <file>', "the director's PRIVATE JWK")
    .requiredOption('--principal <id>', 'the director (renewed_by): a registered principal with role director, not an agent')
    .option('--extend <duration>', "how much later the window ends: 2h, 90m, 1h30m, 45s (default: the cell policy's active TTL, 4h unless configured)")
    .option('--nats <url>', 'NATS server (default WRIT_NATS_URL or nats://127.0.0.1:4223)')
    .option('--json', "print the executor's reply as JSON")
    .action(async (cellId: string, options: { key: string; principal: string; extend?: string; nats?: string; json?: boolean }) => {
      await cellRenew(cellId, options, connectionFrom(io, options.nats), io);
    });
  const projections = writ.command('projections').description('the read models: rebuild them from the log alone and prove them equal (services/projection/README.md)');
  projections
    .command('rebuild')
    .description(
      'replay the log into a fresh schema, compare every view with the live one at the same checkpoint, and swap the rebuilt tables in only when they match (<root>.qry.projection.rebuild); progress on stderr; exit 1 with PROJECTION_REBUILD_MISMATCH when a view differs (nothing swapped)',
    )
    .addOption(new Option('--view <view>', 'rebuild only this view (repeat for several; default all)').choices(ProjectionView.options).argParser(collect).default([]))
    .option('--keep-old', 'keep the replaced tables in <schema>_old_<UTC yyyymmddhhmmss> (default: dropped)')
    .option('--force', 'swap even when a checksum differs (repairs a view that drifted from the log); the mismatch is still printed')
    .option('--follow <job_id>', 'follow a rebuild already started (after an interrupted CLI)')
    .option('--nats <url>', 'NATS server (default WRIT_NATS_URL or nats://127.0.0.1:4223)')
    .option('--json', 'print the finished job as JSON')
    .action(async (options: { view: string[]; keepOld?: boolean; force?: boolean; follow?: string; nats?: string; json?: boolean }) => {
      await projectionsRebuild(options, connectionFrom(io, options.nats), io);
    });
  projections
    .command('status')
    .description('the checkpoint and the lag (events behind, age of the oldest event not folded), rows and checksum per view, the last rebuild (GET /v1/projections/status)')
    .option('--no-checksums', 'skip the checksums (each reads every row of its view)')
    .option('--url <base>', URL_HELP)
    .option('--principal <id>', READER_HELP)
    .option('--key <file>', READER_KEY_HELP)
    .option('--json', 'print the raw JSON')
    .action(async (options: { checksums: boolean; url?: string; principal?: string; key?: string; json?: boolean }) => {
      await projectionsStatus(options, WritApi.from(io, options.url, options), io);
    });

  writ
    .command('http')
    .description("Writ's HTTP API (docs/security.md, \"HTTP reads\")")
    .command('token')
    .description(
      'mint a bearer token for the HTTP API, signed by a principal\'s registered key, and print `Bearer <token>`: curl -H "Authorization: $(writ http token)" …; a dashboard or the conformance agent takes it as WRIT_HTTP_AUTHORIZATION',
    )
    .option('--principal <id>', 'who the token speaks for (default WRIT_OPERATOR_ID or "operator")')
    .option('--key <file>', "that principal's PRIVATE JWK, one of its registered keys (default WRIT_OPERATOR_KEY)")
    .option('--ttl <duration>', 'how long it lives: 90s, 10m, 15m (default 5m, at most 15m)')
    .option('--audience <aud>', 'the API it is for (default writ-http:<WRIT_SUBJECT_ROOT or writ>)')
    .option('--json', 'print { authorization, token, principal_id, kid, audience, expires_at }')
    .action(async (options: { principal?: string; key?: string; ttl?: string; audience?: string; json?: boolean }) => {
      await httpToken(options, io);
    });
  return writ;
}

/**
 * Runs `writ <argv>` and returns the exit status: 0 on success, 2 on a usage
 * error, 1 on any other failure, printed as `error CODE: message` on stderr.
 */
export async function run(argv: readonly string[], io: CliIo = processIo): Promise<number> {
  try {
    await program(io).parseAsync([...argv], { from: 'user' });
    return 0;
  } catch (error) {
    if (error instanceof CommanderError) {
      // Help and version are not failures; commander already printed its message.
      if (error.exitCode === 0) return 0;
      io.stderr(`error CLI_USAGE: ${error.message.replace(/^error: /, '')}`);
      return EXIT_USAGE;
    }
    const code = hasErrorCode(error) ? error.code : 'CLI_FAILED';
    const message = error instanceof Error ? error.message : String(error);
    io.stderr(`error ${code}: ${message}`);
    return code === 'CLI_USAGE' ? EXIT_USAGE : EXIT_FAILURE;
  }
}
