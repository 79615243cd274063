import { LIMITS, type NotAssertedStatement } from '@writ/contracts';

/** What `notAssertedFor` reads of a bundle. */
export interface NotAssertedInput {
  readonly task_id: string;
  readonly events: readonly { readonly event_id: string; readonly event_type: string; readonly task_seq: number }[];
  readonly receipts: readonly { readonly receipt: Readonly<Record<string, unknown>> }[];
  readonly tree_head: { readonly log_id: string; readonly tree_size: number };
}

const MAX_STATEMENTS = 2 * LIMITS.listItems;

function clip(text: string): string {
  return text.length <= LIMITS.text ? text : `${text.slice(0, LIMITS.text - 1)}…`;
}

/**
 * What a bundle does NOT prove, in plain words, derived from its content by
 * this one rule (so `writ verify` recomputes it and a statement cannot be
 * quietly dropped): the limits every bundle has, then each receipt's own
 * `not_asserted` (signed with it) or, for a receipt without that field, what
 * its outcome leaves open.
 */
export function notAssertedFor(bundle: NotAssertedInput): NotAssertedStatement[] {
  const last = bundle.events.at(-1)?.task_seq ?? 0;
  const statements: NotAssertedStatement[] = [
    {
      subject: 'effects',
      statement:
        'That any effect outside the cell happened, or did not: a receipt records what the executor observed and reported (exit status, changed files, output digests), not the state of external systems.',
    },
    {
      subject: 'contents',
      statement:
        'The bytes of artifacts, stdout and stderr: the bundle binds only the SHA-256 digests the log recorded for them (references with binding recorded_digest); whoever holds the bytes can check them against those digests.',
    },
    ...eventChainStatements(bundle, last),
    {
      subject: `task ${bundle.task_id}`,
      statement: `Anything after task_seq ${last}, the task's last receipted event: later events are not in this bundle.`,
    },
    {
      subject: `log ${bundle.tree_head.log_id}`,
      statement: `That the transparency log never showed anyone a different history: the bundle holds one signed tree head (size ${bundle.tree_head.tree_size}); consistency with later heads is checked against the live log (writ verify <bundle> --live).`,
    },
    {
      subject: 'keys',
      statement:
        "Whose keys signed: the keys come with the bundle (the principals' key events). That they are Writ's is established only when writ verify is given a JWKS obtained independently (--trust).",
    },
  ];
  const typeOf = new Map(bundle.events.map((event) => [event.event_id, event.event_type]));
  for (const { receipt } of bundle.receipts) {
    const subject = `receipt ${String(receipt['receipt_id'])}`;
    const own = receipt['not_asserted'];
    if (Array.isArray(own)) {
      for (const statement of own) if (typeof statement === 'string' && statement !== '') statements.push({ subject, statement: clip(statement) });
      continue;
    }
    if (receipt['result_code'] === 'unknown_outcome') {
      statements.push({ subject, statement: 'Whether the action took effect: its outcome is unknown, and automatic replay is blocked until it is resolved.' });
    }
    const outputs = Array.isArray(receipt['output_refs']) ? receipt['output_refs'] : [];
    if (outputs.some((ref) => typeof ref === 'string' && ref.startsWith('event:') && typeOf.get(ref.slice('event:'.length)) === 'execution.outcome_resolved')) {
      statements.push({ subject, statement: 'That Writ observed the effect: a director settled the unknown outcome on evidence outside the log.' });
    }
  }
  // The contract's bound: a task with very many receipts keeps the first ones' statements.
  return statements.slice(0, MAX_STATEMENTS);
}

/**
 * Receipts sign the task's chain head they were built on (`event_chain_head`),
 * so events through the highest signed head are covered by a signature; only
 * events after it (and all of them, for receipts issued before receipts
 * carried the head) rest on the hash chain alone.
 */
function eventChainStatements(bundle: NotAssertedInput, last: number): NotAssertedStatement[] {
  const heads = bundle.receipts.map(({ receipt }) => (receipt['event_chain_head'] as { task_seq?: unknown } | undefined)?.task_seq).filter((seq): seq is number => typeof seq === 'number');
  const covered = heads.length === 0 ? 0 : Math.max(...heads);
  // The last event of the segment is the last receipt.issued: it carries its own signed receipt.
  if (covered >= last - 1) return [];
  const from = covered === 0 ? 'the task events are' : `the events after task_seq ${covered} (the highest chain head a receipt signed) are`;
  return [
    {
      subject: 'event_chain',
      statement: `That events were not rewritten by someone who also recomputed every later hash: ${from} hash-linked but not signed. What the signed receipts bind by hash (sha256: references, request, policy result and grant hashes) and what carries its own signature (grants) is covered; what a receipt names only by id (event:, policy_result:, approval:, decision:) is protected by the hash chain alone.`,
    },
  ];
}
