import { useContext } from 'preact/hooks';
import { timelineReceipts } from '../explain/action-story.js';
import { ConsoleContext } from '../ui/console-context.js';
import { ErrorBox, Facts, JsonView, Link, Loading, Mono, Section, Status, Time } from '../ui/components.js';
import { useLive } from '../ui/use-live.js';
import { verifyReceipt } from '../verify/receipt-verdict.js';

/**
 * A receipt and its verification in this browser (see verify/receipt-verdict.ts):
 * a clear PASS / FAIL (or PARTIAL when a check could not run) and every check
 * with its code and what it found.
 */
export function ReceiptPage(props: { readonly id: string }) {
  const { api } = useContext(ConsoleContext);
  const loaded = useLive(
    async () => {
      const row = await api!.receipt(props.id);
      const [jwks, task, inclusion] = await Promise.all([api!.keys(), api!.taskWithTimeline(row.task_id), api!.inclusionProof(props.id)]);
      const verdict = await verifyReceipt({ receiptId: props.id, row, jwks, taskReceipts: timelineReceipts(task.events), inclusion });
      return { row, verdict };
    },
    [props.id],
    { live: false },
  );
  const data = loaded.data;
  const receipt = (data?.row.receipt ?? {}) as Record<string, unknown>;
  return (
    <>
      <h1>
        Receipt <Mono>{props.id}</Mono>
      </h1>
      <ErrorBox error={loaded.error} />
      <Loading when={loaded.loading} />
      {data === undefined ? null : (
        <>
          <div class={`verdict verdict-${data.verdict.verdict.toLowerCase()}`} data-testid="verdict" data-verdict={data.verdict.verdict}>
            <strong>{data.verdict.verdict}</strong>{' '}
            {data.verdict.verdict === 'PASS'
              ? `signed by ${data.verdict.kid ?? '?'}, chained, and in the signed transparency log`
              : data.verdict.verdict === 'FAIL'
                ? `failed: ${data.verdict.checks
                    .filter((check) => check.result === 'fail')
                    .map((check) => `${check.name} (${check.code ?? 'fail'})`)
                    .join(', ')}`
                : 'every check that could run passed; see the skipped ones'}
            <button type="button" class="link" onClick={loaded.reload} data-testid="verify-again">
              verify again
            </button>
          </div>
          <Section title="Checks (run in this browser)" testId="checks">
            <table>
              <thead>
                <tr>
                  <th>Check</th>
                  <th>Result</th>
                  <th>Code</th>
                  <th>Found</th>
                </tr>
              </thead>
              <tbody>
                {data.verdict.checks.map((check) => (
                  <tr data-testid="check" data-check={check.name} data-result={check.result}>
                    <td>
                      <Mono>{check.name}</Mono>
                    </td>
                    <td>
                      <Status value={check.result} />
                    </td>
                    <td>{check.code === undefined ? null : <Mono>{check.code}</Mono>}</td>
                    <td>{check.message}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </Section>
          <Section title="Receipt" testId="receipt">
            <Facts
              rows={[
                ['result', <Status value={data.row.result_code} />],
                ['summary', String(receipt['result_summary'] ?? '')],
                ['class', data.row.receipt_class],
                ['task', <Link to={{ page: 'task', id: data.row.task_id }}>{data.row.task_id}</Link>],
                ['action', data.row.action_request_id === null ? null : <Link to={{ page: 'action', id: data.row.action_request_id }}>{data.row.action_request_id}</Link>],
                ['receipt hash', <Mono>{data.row.receipt_hash}</Mono>],
                ['previous receipt hash', <Mono>{String(receipt['prev_receipt_hash'] ?? 'none (first of the task)')}</Mono>],
                ['signer', <Mono>{String(receipt['signer_ref'] ?? '')}</Mono>],
                ['verifiability', String(receipt['verifiability'] ?? '')],
                ['created', <Time at={data.row.created_at} />],
              ]}
            />
            <JsonView value={data.row.receipt} label="receipt as signed" />
          </Section>
        </>
      )}
    </>
  );
}
