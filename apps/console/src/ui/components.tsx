import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { href, type Route } from '../router.js';

/** Small presentational pieces shared by the pages. No inline styles: the CSP allows this origin's stylesheet only. */

export function Link(props: { readonly to: Route; readonly children: ComponentChildren; readonly testId?: string }) {
  return (
    <a href={href(props.to)} data-testid={props.testId}>
      {props.children}
    </a>
  );
}

const STATUS_TONE: Readonly<Record<string, string>> = {
  succeeded: 'good',
  completed: 'good',
  granted: 'good',
  active: 'good',
  ACTIVE: 'good',
  pass: 'good',
  issued: 'good',
  failed: 'bad',
  denied: 'bad',
  rejected: 'bad',
  refused: 'bad',
  revoked: 'bad',
  fail: 'bad',
  unknown_outcome: 'warn',
  awaiting_approval: 'warn',
  pending: 'warn',
  expired: 'muted',
  cancelled: 'muted',
  superseded: 'muted',
  invalidated: 'muted',
  skip: 'muted',
};

/** A `receipt:<id>` or `task:<id>` ref as a link to its page (a receipt verifies there); any other ref as text. */
export function RefLink(props: { readonly value: string | null }) {
  const { value } = props;
  if (value === null) return null;
  if (value.startsWith('receipt:')) return <Link to={{ page: 'receipt', id: value.slice('receipt:'.length) }}>{value}</Link>;
  if (value.startsWith('task:')) return <Link to={{ page: 'task', id: value.slice('task:'.length) }}>{value}</Link>;
  return <Mono>{value}</Mono>;
}

export function Status(props: { readonly value: string | null | undefined; readonly testId?: string }) {
  const value = props.value ?? '—';
  return (
    <span class={`status status-${STATUS_TONE[value] ?? 'neutral'}`} data-testid={props.testId} data-status={value}>
      {value}
    </span>
  );
}

export function ErrorBox(props: { readonly error: { readonly code: string; readonly message: string } | undefined }) {
  if (props.error === undefined) return null;
  return (
    <div class="error" role="alert" data-testid="error" data-code={props.error.code}>
      <code>{props.error.code}</code> {props.error.message}
    </div>
  );
}

export function Loading(props: { readonly when: boolean }) {
  return props.when ? <p class="loading">Loading…</p> : null;
}

export function Time(props: { readonly at: string | null | undefined }) {
  if (props.at === null || props.at === undefined || props.at === '') return <span class="muted">—</span>;
  const date = new Date(props.at);
  return <time dateTime={props.at} title={props.at}>{Number.isNaN(date.getTime()) ? props.at : date.toLocaleString()}</time>;
}

export function Mono(props: { readonly children: ComponentChildren }) {
  return <code class="mono">{props.children}</code>;
}

/** A JSON document, folded until asked for. */
export function JsonView(props: { readonly value: unknown; readonly label?: string; readonly open?: boolean }) {
  const [open, setOpen] = useState(props.open ?? false);
  return (
    <div class="json">
      <button type="button" class="link" onClick={() => setOpen(!open)}>
        {open ? '▾' : '▸'} {props.label ?? 'JSON'}
      </button>
      {open ? <pre>{JSON.stringify(props.value, null, 2)}</pre> : null}
    </div>
  );
}

export function Section(props: { readonly title: string; readonly children: ComponentChildren; readonly testId?: string; readonly note?: ComponentChildren }) {
  return (
    <section class="card" data-testid={props.testId}>
      <h2>{props.title}</h2>
      {props.note === undefined ? null : <p class="note">{props.note}</p>}
      {props.children}
    </section>
  );
}

export function Empty(props: { readonly children: ComponentChildren }) {
  return <p class="empty">{props.children}</p>;
}

/** Key/value facts of one object. */
export function Facts(props: { readonly rows: readonly (readonly [string, ComponentChildren])[] }) {
  return (
    <dl class="facts">
      {props.rows.map(([name, value]) => (
        <>
          <dt>{name}</dt>
          <dd>{value ?? <span class="muted">—</span>}</dd>
        </>
      ))}
    </dl>
  );
}
