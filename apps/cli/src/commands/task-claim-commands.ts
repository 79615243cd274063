import type { Command } from 'commander';
import { connectionFrom, type CliIo } from '../cli-io.js';
import { taskClaim, type ClaimCommand } from './task-claim.js';
import { taskCreate } from './task-create.js';

const NATS_HELP = 'NATS server (default WRIT_NATS_URL or nats://127.0.0.1:4223)';
const collect = (value: string, previous: string[]): string[] => [...previous, value];

/**
 * `writ task create|done|blocked|correct` (docs/task-claims.md), under `writ task`:
 * a task made from a brief, and the claims its agent signs about it.
 */
export function registerTaskClaimCommands(task: Command, io: CliIo): void {
  task
    .command('create')
    .description('create a task from brief.json (seed 003): its first action is sent with the brief, signed by the agent; the task then closes only on an accepted done claim')
    .requiredOption('--brief <file>', 'brief.json: every section present (empty allowed); mission at most 200 characters; verify_command as argv')
    .requiredOption('--action <file>', "the task's first ActionRequest, without task or task_id")
    .requiredOption('--key <file>', "the agent's PRIVATE JWK")
    .requiredOption('--principal <id>', "the agent (proposer and the task's owner)")
    .option('--profile <id>', 'the policy profile the task asks for (default local_edit_allowed)')
    .option('--sacred-exception <path>', 'a Sacred Scope path the task asks to write (repeat for several)', collect, [])
    .option('--wait <seconds>', "seconds to wait for ingress's verdict (default 10; 0: do not wait)")
    .option('--nats <url>', NATS_HELP)
    .option('--json', 'print JSON')
    .action(async (options: { brief: string; action: string; key: string; principal: string; profile?: string; sacredException: string[]; wait?: string; nats?: string; json?: boolean }) => {
      await taskCreate(options, connectionFrom(io, options.nats), io);
    });
  const claims: ReadonlyArray<readonly [ClaimCommand, string, string]> = [
    ['done', 'done.json', "claim the task done (done_clean | pending | failed): the orchestrator judges it against the brief and runs the brief's verify command itself; a refusal exits with its code"],
    ['blocked', 'blocked.json', 'report a legal block: its question goes to the approval inbox while the fallback runs; an illegal block (a preference, an idle wait) is refused with its code'],
    ['correct', 'correction.json', 'record a correction of an earlier done claim (done.json is written once; corrections are separate records)'],
  ];
  for (const [name, file, description] of claims) {
    task
      .command(name)
      .description(description)
      .argument('<task_id>', 'the task')
      .argument(`<${file}>`, `the ${file} file`)
      .requiredOption('--key <file>', "the agent's PRIVATE JWK")
      .requiredOption('--principal <id>', "the agent (the task's owner)")
      .option('--wait <seconds>', 'done: seconds to wait for the verdict while Writ verifies (default 60; 0: do not wait)')
      .option('--nats <url>', NATS_HELP)
      .option('--json', "print the orchestrator's reply as JSON")
      .action(async (taskId: string, path: string, options: { key: string; principal: string; wait?: string; nats?: string; json?: boolean }) => {
        await taskClaim(name, taskId, path, options, connectionFrom(io, options.nats), io);
      });
  }
}
