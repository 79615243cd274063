import { useContext, useState } from 'preact/hooks';
import { describeError } from '../api/api-error.js';
import type { ResolveReply } from '../api/rows.js';
import { resolveApproval, shownPacketHash, type Decision } from '../session/resolve-approval.js';
import { ConsoleContext } from '../ui/console-context.js';
import { ErrorBox, Facts, JsonView, Link, Loading, Mono, Section, Status, Time } from '../ui/components.js';
import { useLive } from '../ui/use-live.js';

/** One approval: the packet the director decides on (its hash checked here), the witness, and, while pending, Approve / Deny signed in this browser. */
export function ApprovalPage(props: { readonly id: string }) {
  const { api, session } = useContext(ConsoleContext);
  const approval = useLive(async () => {
    const detail = await api!.approval(props.id);
    const packetHash = await shownPacketHash(detail).then(
      (hash) => ({ hash, error: undefined }),
      (error: unknown) => ({ hash: undefined, error: describeError(error) }),
    );
    return { detail, packetHash };
  }, [props.id]);
  const [note, setNote] = useState('');
  const [busy, setBusy] = useState<Decision | undefined>(undefined);
  const [reply, setReply] = useState<ResolveReply | undefined>(undefined);
  const [error, setError] = useState<{ code: string; message: string } | undefined>(undefined);

  const decide = async (decision: Decision): Promise<void> => {
    if (approval.data === undefined || session === undefined) return;
    setBusy(decision);
    setError(undefined);
    try {
      setReply(await resolveApproval(api!, session, approval.data.detail, decision, note));
      approval.reload();
    } catch (failure) {
      setError(describeError(failure));
    } finally {
      setBusy(undefined);
    }
  };

  const detail = approval.data?.detail;
  const packet = (detail?.packet ?? {}) as Record<string, unknown>;
  return (
    <>
      <h1>
        Approval <Mono>{props.id}</Mono>
      </h1>
      <ErrorBox error={approval.error} />
      <Loading when={approval.loading} />
      {detail === undefined ? null : (
        <>
          <Section title={String(packet['action_summary'] ?? detail.approval_id)} testId="approval">
            <Facts
              rows={[
                ['status', <Status value={detail.status} testId="approval-status" />],
                ['task', <Link to={{ page: 'task', id: detail.task_id }}>{detail.task_id}</Link>],
                ['action', typeof packet['action_request_id'] === 'string' ? <Link to={{ page: 'action', id: packet['action_request_id'] }}>{packet['action_request_id']}</Link> : null],
                ['risk', `${String(packet['risk_band'] ?? '?')}: ${String(packet['risk_summary'] ?? '')}`],
                ['rationale', String(packet['decision_rationale'] ?? '')],
                ['impacted', Array.isArray(packet['impacted_resources']) ? (packet['impacted_resources'] as string[]).join(', ') : null],
                ['rollback available', String(packet['rollback_available'] ?? '?')],
                ['requested by', String(detail['requested_by'] ?? '')],
                ['expires', <Time at={(detail.expires_at as string | null | undefined) ?? null} />],
                ['packet', <Mono>{detail.packet_ref ?? 'none'}</Mono>],
                [
                  'packet check',
                  approval.data?.packetHash.hash === undefined ? (
                    <ErrorBox error={approval.data?.packetHash.error} />
                  ) : (
                    <span data-testid="packet-check">the packet shown hashes to {approval.data.packetHash.hash}: it is what you sign</span>
                  ),
                ],
                ['resolution', detail.resolution === null ? null : <JsonView value={detail.resolution} label={String(detail.resolution['status'] ?? 'resolution')} open />],
              ]}
            />
            <JsonView value={detail.packet} label="packet" />
            <JsonView value={detail.state_witness} label="state witness" />
          </Section>
          {detail.status === 'pending' && session?.mayResolve === true ? (
            <Section title="Decide" testId="decide" note={`Signed here with ${session.principalId}'s key (${session.kid}) over the packet hash above, then sent to the approval service, which checks it.`}>
              <label>
                Note (optional)
                <input value={note} onInput={(event) => setNote((event.target as HTMLInputElement).value)} data-testid="resolution-note" maxLength={1000} />
              </label>
              <div class="actions">
                <button type="button" class="approve" disabled={busy !== undefined || approval.data?.packetHash.hash === undefined} onClick={() => void decide('grant')} data-testid="approve">
                  {busy === 'grant' ? 'Approving…' : 'Approve'}
                </button>
                <button type="button" class="deny" disabled={busy !== undefined || approval.data?.packetHash.hash === undefined} onClick={() => void decide('deny')} data-testid="deny">
                  {busy === 'deny' ? 'Denying…' : 'Deny'}
                </button>
              </div>
            </Section>
          ) : null}
          <ErrorBox error={error} />
          {reply === undefined ? null : (
            <p class="ok" data-testid="resolution-reply">
              <Status value={reply.status} /> {reply.approval_id} by {reply.resolved_by ?? session?.principalId}
            </p>
          )}
        </>
      )}
    </>
  );
}
