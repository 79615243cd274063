import { readFileSync } from 'node:fs';
import type { EventEnvelope } from '@writ/contracts';
import { describe, expect, it } from 'vitest';
import { DECISION_LOG_FORMAT, NONE, decisionLog, decisionLogMarkdown } from './decision-log.js';

/** `writ decisions` on the task recorded from the real stack (see task-explanation.unit.spec.ts). */

interface Fixture {
  readonly task_id: string;
  readonly actions: Readonly<Record<'holder' | 'v1' | 'v2' | 'cmd' | 'denied', string>>;
  readonly events: EventEnvelope[];
}

const fixture = JSON.parse(readFileSync(new URL('./__fixtures__/governed-task.events.json', import.meta.url), 'utf8')) as Fixture;

/** The fixture with the `policy.evaluated` of one action request edited. */
function withPolicyResult(actionRequestId: string, edit: (result: Record<string, unknown>) => Record<string, unknown>): EventEnvelope[] {
  return fixture.events.map((event) => {
    const result = event.payload['policy_result'] as Record<string, unknown> | undefined;
    if (event.event_type !== 'policy.evaluated' || result?.['action_request_id'] !== actionRequestId) return event;
    return { ...event, payload: { ...event.payload, policy_result: edit({ ...result }) } };
  });
}

describe('decisionLog', () => {
  const log = decisionLog(fixture.task_id, fixture.events);

  it('given the task stream, when logged, then every policy decision and every recorded decision is an entry, in log order', () => {
    expect(log.format).toBe(DECISION_LOG_FORMAT);
    expect(log.decisions.map((entry) => entry.recorded_with)).toEqual([
      'policy.evaluated',
      'policy.evaluated',
      'policy.evaluated',
      'policy.evaluated',
      'policy.evaluated',
      'approval.denied',
      'approval.granted',
    ]);
    expect(log.decisions.map((entry) => entry.timestamp)).toEqual([...log.decisions.map((entry) => entry.timestamp)].sort());
  });

  it('given a policy allow, when logged, then the task says what was asked and the classification is the decision class and risk band', () => {
    const [, v1] = log.decisions;
    expect(v1).toMatchObject({ title: 'policy allow: write_local of notes.txt: first draft', decided_by: 'writ-policy', subject: expect.stringMatching(/^policy_result:/) });
    expect(v1?.task).toContain(`${fixture.task_id} (e2e): write_local of notes.txt proposed by`);
    expect(v1?.task).toContain('first draft');
    expect(v1?.classification).toMatch(/^safety, risk moderate \(/);
    expect(v1?.decision).toMatch(/^policy allow for write_local, risk moderate, under local_edit_allowed@sha256:/);
  });

  it('given decisions with a recorded scope, when logged, then the falsifier is derived from it and checked against what ran', () => {
    const [holder, v1, , , denied, denial, grant] = log.decisions;
    expect(v1).toMatchObject({ falsifier: expect.stringContaining('outside notes.txt (derived from'), falsifier_check: 'holds' });
    expect(holder?.falsifier).toContain('target resource fingerprints match the captured state witness');
    expect(grant).toMatchObject({ falsifier: expect.stringContaining("approval packet's impacted_resources"), falsifier_check: 'holds' });
    // the denied removal never ran: its policy falsifier is moot; a denial has no falsifier in the log
    expect(denied?.falsifier_check).toBe('never_ran');
    expect(denial).toMatchObject({ falsifier: NONE, falsifier_check: null, decision: expect.stringMatching(/^approval denied by director-/) });
  });

  it('given an execution that changed a path outside the scope policy judged, when logged, then the falsifier is reported as falsified', () => {
    const events = withPolicyResult(fixture.actions.cmd, (result) => ({ ...result, affected_resources: ['other.txt'] }));
    const entry = decisionLog(fixture.task_id, events).decisions.find((decision) => decision.title.includes('append a line'));
    expect(entry).toMatchObject({ falsifier_check: 'falsified' });
  });

  it('given an expiry, when logged, then the falsifier is a grant before the expiry, which the log does not hold', () => {
    const events = fixture.events.map((event) =>
      event.event_type === 'decision.recorded' && event.payload['outcome_event'] === 'approval.denied' ? { ...event, payload: { ...event.payload, outcome_event: 'approval.expired' } } : event,
    );
    const expired = decisionLog(fixture.task_id, events).decisions.find((entry) => entry.recorded_with === 'approval.expired');
    expect(expired).toMatchObject({ falsifier: expect.stringMatching(/^an approval\.granted of apv-\S+ recorded before \S+ \(derived from the approval's expires_at\)$/), falsifier_check: 'holds' });
  });

  it('given a directory or glob scope, when logged, then paths under it hold', () => {
    const events = withPolicyResult(fixture.actions.v1, (result) => ({ ...result, affected_resources: ['*.txt'] }));
    expect(decisionLog(fixture.task_id, events).decisions[1]?.falsifier_check).toBe('holds');
  });
});

describe('decisionLogMarkdown', () => {
  it('given the log, when printed, then each entry has the seed 003 heading and fields, in that order', () => {
    const lines = decisionLogMarkdown(decisionLog(fixture.task_id, fixture.events), (text) => text);
    const entries = lines.join('\n').split('\n\n');
    expect(entries).toHaveLength(7);
    for (const entry of entries) {
      const [heading, ...fields] = entry.split('\n');
      expect(heading).toMatch(/^### \[\d{4}-\d\d-\d\dT[\d:.]+Z\] \S/);
      expect(fields.map((field) => /^- \*\*(\w+):\*\* /.exec(field)?.[1])).toEqual(['Task', 'Classification', 'Decision', 'Rationale', 'Falsifier', 'Recorded']);
    }
    expect(lines).toContain(`- **Falsifier:** ${NONE}`);
    expect(lines.some((line) => line.endsWith(' — not falsified by the log'))).toBe(true);
  });
});
