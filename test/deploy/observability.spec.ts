import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { METRIC_CATALOGUE, seriesNames } from '@writ/telemetry';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { readPromql } from './promql-metrics.js';

// The Grafana dashboard and the Prometheus alert rules a platform team installs must name only
// what Writ exports: a renamed or dropped metric otherwise leaves an empty panel and an alert that
// can never fire, and nothing says so. Every expression is parsed with Prometheus' own grammar.
const root = fileURLToPath(new URL('../../', import.meta.url));
const observability = `${root}deploy/observability/`;

/** Series names a scrape of Writ can show, and Prometheus' own `up` (a target answering). */
const exported = new Set(['up', ...METRIC_CATALOGUE.flatMap((metric) => seriesNames(metric))]);

interface Query {
  readonly where: string;
  readonly expr: string;
}

interface Panel {
  readonly title?: string;
  readonly targets?: readonly { readonly expr?: string }[];
  readonly panels?: readonly Panel[];
}

function dashboardQueries(file: string): Query[] {
  const dashboard = JSON.parse(readFileSync(file, 'utf8')) as { panels: Panel[]; templating?: { list: { name: string; query?: unknown; definition?: string }[] } };
  const queries: Query[] = [];
  const visit = (panel: Panel) => {
    for (const [index, target] of (panel.targets ?? []).entries()) {
      if (target.expr !== undefined) queries.push({ where: `panel "${panel.title}" target ${index}`, expr: target.expr });
    }
    for (const child of panel.panels ?? []) visit(child);
  };
  dashboard.panels.forEach(visit);
  for (const variable of dashboard.templating?.list ?? []) {
    const query = typeof variable.query === 'string' ? variable.query : (variable.query as { query?: string } | undefined)?.query;
    // Grafana's label_values(<selector>, <label>) is not PromQL: its selector is.
    const selector = query === undefined ? undefined : /^label_values\((.+),\s*\w+\)$/.exec(query.trim())?.[1];
    if (selector !== undefined) queries.push({ where: `variable $${variable.name}`, expr: selector });
  }
  return queries;
}

interface Rule {
  readonly alert?: string;
  readonly record?: string;
  readonly expr: string;
  readonly annotations?: Record<string, string>;
}

function alertRules(file: string): Rule[] {
  const rules = parse(readFileSync(file, 'utf8')) as { groups: { name: string; rules: Rule[] }[] };
  return rules.groups.flatMap((group) => group.rules);
}

/** Every metric a set of queries names that no Writ process exports, and every query that does not parse. */
function unknownMetrics(queries: readonly Query[]): { unknown: string[]; unparsable: string[] } {
  const unknown: string[] = [];
  const unparsable: string[] = [];
  for (const query of queries) {
    const reading = readPromql(query.expr);
    for (const error of reading.syntaxErrors) unparsable.push(`${query.where}: ${error}`);
    for (const metric of reading.metrics) if (!exported.has(metric)) unknown.push(`${query.where}: ${metric}`);
  }
  return { unknown, unparsable };
}

/** GitHub's heading anchors: lowercase, punctuation dropped, spaces as dashes. */
function anchors(markdown: string): Set<string> {
  return new Set(
    markdown
      .split('\n')
      .filter((line) => /^#{1,6} /.test(line))
      .map((line) => line.replace(/^#+ /, '').trim().toLowerCase().replace(/[^\w\- ]/g, '').replace(/ /g, '-')),
  );
}

const dashboard = dashboardQueries(`${observability}writ-dashboard.json`);
const rules = alertRules(`${observability}writ-alerts.yml`);
const ruleQueries = rules.map((rule) => ({ where: `rule ${rule.alert ?? rule.record}`, expr: rule.expr }));

describe('the PromQL reader', () => {
  it('given an expression naming a metric no service exports, then the check reports it', () => {
    const { unknown, unparsable } = unknownMetrics([{ where: 'made up', expr: 'sum(rate(writ_made_up_total[$__rate_interval])) / sum(rate(writ_executions_total[5m]))' }]);
    expect(unknown).toEqual(['made up: writ_made_up_total']);
    expect(unparsable).toEqual([]);
  });

  it('given names written as __name__ matchers, in binary operations and under functions, then it finds each', () => {
    const reading = readPromql('histogram_quantile(0.9, sum by (le) (rate({__name__="writ_a_bucket", x="$service"}[5m]))) > on(instance) group_left writ_b offset 1h and up');
    expect([...reading.metrics].sort()).toEqual(['up', 'writ_a_bucket', 'writ_b']);
  });

  it('given an expression that does not parse, then it says where', () => {
    expect(readPromql('sum(rate(writ_executions_total[5m]) bogus').syntaxErrors).not.toEqual([]);
  });
});

describe('deploy/observability', () => {
  it('given the Grafana dashboard, then every query parses and names only exported metrics', () => {
    expect(dashboard.length).toBeGreaterThan(20);
    expect(unknownMetrics(dashboard)).toEqual({ unknown: [], unparsable: [] });
  });

  it('given the alert rules, then every expression parses and names only exported metrics', () => {
    expect(rules.length).toBeGreaterThan(10);
    expect(unknownMetrics(ruleQueries)).toEqual({ unknown: [], unparsable: [] });
  });

  it('given the catalogue, then the dashboard shows every metric Writ exports', () => {
    const shown = new Set(dashboard.flatMap((query) => readPromql(query.expr).metrics));
    const missing = METRIC_CATALOGUE.filter((metric) => !seriesNames(metric).some((name) => shown.has(name))).map((metric) => metric.name);
    expect(missing).toEqual([]);
  });

  it('given each alert, then it says what happened and links the section of docs/operations.md that says what to do', () => {
    const sections = anchors(readFileSync(`${root}docs/operations.md`, 'utf8'));
    for (const rule of rules) {
      expect(rule.annotations?.['summary'], rule.alert).toBeTruthy();
      expect(rule.annotations?.['description'], rule.alert).toBeTruthy();
      const runbook = rule.annotations?.['runbook'] ?? '';
      expect(runbook, rule.alert).toMatch(/^docs\/operations\.md#[a-z0-9-]+$/);
      expect(sections.has(runbook.split('#')[1] ?? ''), `${rule.alert}: ${runbook}`).toBe(true);
    }
  });
});
