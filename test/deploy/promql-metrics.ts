import { parser } from '@prometheus-io/lezer-promql';

/** What one PromQL expression names: its metrics, and where it does not parse. */
export interface PromqlReading {
  readonly metrics: readonly string[];
  readonly syntaxErrors: readonly string[];
}

/**
 * Grafana's variables are not PromQL: `$__rate_interval` and friends stand for a
 * duration, any other `$name` / `${name}` for a value inside a label matcher.
 */
export function withoutGrafanaVariables(expr: string): string {
  return expr.replace(/\$__(rate_interval|interval|range)\b|\$\{__(rate_interval|interval|range)\}/g, '5m').replace(/\$\{(\w+)\}|\$(\w+)/g, (_m, a: string | undefined, b: string | undefined) => a ?? b ?? '');
}

/**
 * The metric names an expression selects, read with Prometheus' own grammar
 * (`@prometheus-io/lezer-promql`): the name of every vector selector, whether
 * written as `name{...}` or as `{__name__="name"}`. A part the grammar
 * rejects is reported, never guessed around.
 */
export function readPromql(expr: string): PromqlReading {
  const source = withoutGrafanaVariables(expr);
  const metrics = new Set<string>();
  const syntaxErrors: string[] = [];
  const tree = parser.parse(source);
  const cursor = tree.cursor();
  do {
    const node = cursor.node;
    if (node.type.isError) {
      syntaxErrors.push(`at ${node.from}: ${JSON.stringify(source.slice(Math.max(0, node.from - 10), node.to + 10))}`);
    } else if (node.name === 'VectorSelector') {
      const identifier = node.getChild('Identifier');
      if (identifier !== null) metrics.add(source.slice(identifier.from, identifier.to));
    } else if (node.name === 'UnquotedLabelMatcher' || node.name === 'QuotedLabelMatcher') {
      const name = node.getChild('LabelName') ?? node.getChild('QuotedLabelName');
      const value = node.getChild('StringLiteral');
      if (name !== null && value !== null && source.slice(name.from, name.to).replace(/"/g, '') === '__name__') metrics.add(JSON.parse(source.slice(value.from, value.to)) as string);
    }
  } while (cursor.next());
  return { metrics: [...metrics], syntaxErrors };
}
