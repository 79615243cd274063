/**
 * Finds destructive SQL statements in text handed to a database client:
 * `DROP TABLE | DATABASE | SCHEMA`, `ALTER TABLE ... DROP COLUMN`,
 * `TRUNCATE`, and `DELETE FROM` / `UPDATE ... SET` without a `WHERE` of their
 * own (or with a trivially true one); a WHERE inside a subquery does not count. A tiny lexer drops comments and
 * string literals first, so `SELECT 'DROP TABLE x'` is not a drop and
 * `DrOp/**\/TaBlE` is.
 */

export interface SqlFinding {
  readonly pattern_id: 'sql.drop' | 'sql.truncate' | 'sql.delete_without_where' | 'sql.update_without_where';
  readonly summary: string;
}

function isWordChar(c: string): boolean {
  return /^[A-Za-z0-9_$]$/.test(c);
}

/** Statements as lists of lowercase tokens (words and single punctuation characters). */
export function sqlStatements(text: string): string[][] {
  const statements: string[][] = [];
  let tokens: string[] = [];
  let i = 0;
  const n = text.length;
  while (i < n) {
    const c = text[i] as string;
    if (c === '-' && text[i + 1] === '-') {
      while (i < n && text[i] !== '\n') i += 1;
    } else if (c === '/' && text[i + 1] === '*') {
      const end = text.indexOf('*/', i + 2);
      i = end < 0 ? n : end + 2;
    } else if (c === "'") {
      i += 1;
      while (i < n && !(text[i] === "'" && text[i + 1] !== "'")) i += text[i] === "'" ? 2 : 1;
      i += 1;
      tokens.push("'");
    } else if (c === '"' || c === '`') {
      const end = text.indexOf(c, i + 1);
      tokens.push(`"${text.slice(i + 1, end < 0 ? n : end).toLowerCase()}"`);
      i = end < 0 ? n : end + 1;
    } else if (c === '$' && /^\$[A-Za-z_]*\$/.test(text.slice(i, i + 64))) {
      const tag = (/^\$[A-Za-z_]*\$/.exec(text.slice(i, i + 64)) as RegExpExecArray)[0];
      const end = text.indexOf(tag, i + tag.length);
      i = end < 0 ? n : end + tag.length;
      tokens.push("'");
    } else if (c === ';') {
      if (tokens.length > 0) statements.push(tokens);
      tokens = [];
      i += 1;
    } else if (isWordChar(c)) {
      let j = i;
      while (j < n && isWordChar(text[j] as string)) j += 1;
      tokens.push(text.slice(i, j).toLowerCase());
      i = j;
    } else {
      if (!/\s/.test(c)) tokens.push(c);
      i += 1;
    }
  }
  if (tokens.length > 0) statements.push(tokens);
  return statements;
}

const DROPPABLE = new Set(['table', 'database', 'schema']);
const DROP_MODIFIERS = new Set(['temporary', 'temp', 'if', 'exists']);

/** A predicate that holds for every row: `true`, `1`, `1=1`, `'a'='a'`... (best effort). */
function triviallyTrue(predicate: readonly string[]): boolean {
  const end = predicate.findIndex((token) => ['limit', 'returning', 'order'].includes(token));
  const p = end < 0 ? predicate : predicate.slice(0, end);
  if (p.length === 1 && (p[0] === 'true' || p[0] === '1')) return true;
  return p.length === 3 && p[1] === '=' && p[0] === p[2];
}

/** Index of the first `word` after `from` at the same parenthesis depth, or -1 (also when the enclosing group closes first). */
function topLevelIndex(tokens: readonly string[], word: string, from: number): number {
  let depth = 0;
  for (let i = from; i < tokens.length; i += 1) {
    const token = tokens[i];
    if (token === '(') depth += 1;
    else if (token === ')') {
      if (depth === 0) return -1;
      depth -= 1;
    } else if (depth === 0 && token === word) return i;
  }
  return -1;
}

/** Words before `update` that make it part of another clause (`ON CONFLICT DO UPDATE`, `FOR UPDATE`, `GRANT UPDATE`, triggers). */
const NOT_AN_UPDATE_STATEMENT = new Set(['do', 'for', 'key', 'on', 'grant', 'revoke', ',', 'before', 'after', 'of', 'or', 'instead']);

function unbounded(tokens: readonly string[], from: number): 'missing' | 'always_true' | null {
  const where = topLevelIndex(tokens, 'where', from);
  if (where < 0) return 'missing';
  return triviallyTrue(tokens.slice(where + 1)) ? 'always_true' : null;
}

export function destructiveSql(text: string): SqlFinding[] {
  const findings: SqlFinding[] = [];
  for (const tokens of sqlStatements(text)) {
    tokens.forEach((token, i) => {
      if (token === 'drop') {
        let j = i + 1;
        while (j < tokens.length && DROP_MODIFIERS.has(tokens[j] as string)) j += 1;
        if (DROPPABLE.has(tokens[j] as string)) findings.push({ pattern_id: 'sql.drop', summary: `DROP ${(tokens[j] as string).toUpperCase()}` });
        else if (tokens[j] === 'column' && tokens.slice(0, i).includes('alter')) findings.push({ pattern_id: 'sql.drop', summary: 'ALTER TABLE ... DROP COLUMN' });
      }
      if (token === 'truncate' && (i === 0 || tokens[i + 1] === 'table')) findings.push({ pattern_id: 'sql.truncate', summary: 'TRUNCATE' });
      if (token === 'delete' && tokens[i + 1] === 'from') {
        const bound = unbounded(tokens, i + 2);
        if (bound === 'missing') findings.push({ pattern_id: 'sql.delete_without_where', summary: 'DELETE FROM without WHERE' });
        if (bound === 'always_true') findings.push({ pattern_id: 'sql.delete_without_where', summary: 'DELETE FROM with an always-true WHERE' });
      }
      if (token === 'update' && !NOT_AN_UPDATE_STATEMENT.has(tokens[i - 1] as string)) {
        const set = topLevelIndex(tokens, 'set', i + 1);
        if (set < 0) return;
        const bound = unbounded(tokens, set + 1);
        if (bound === 'missing') findings.push({ pattern_id: 'sql.update_without_where', summary: 'UPDATE without WHERE' });
        if (bound === 'always_true') findings.push({ pattern_id: 'sql.update_without_where', summary: 'UPDATE with an always-true WHERE' });
      }
    });
  }
  return findings;
}
