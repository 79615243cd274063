/**
 * A small POSIX-shell word splitter, enough to see which commands a
 * `sh -c` / `bash -c` string runs. It is not an interpreter: it splits words
 * (quotes, backslashes, `$'...'`), control operators and pipelines,
 * redirections and here-documents, and lifts out command substitutions
 * (`$(...)`, backticks, `<(...)`) so that they can be analyzed as scripts of
 * their own. Expansions (`$VAR`) are left as literal text and flagged as
 * dynamic. Anything it cannot split is reported, never guessed.
 */

export interface ShellRedirect {
  readonly op: string;
  readonly target: string;
}

export interface ShellCommand {
  readonly words: readonly string[];
  /** Per word: it contains an expansion (`$`, a substitution), so its run-time value is unknown. */
  readonly dynamic: readonly boolean[];
  readonly redirects: readonly ShellRedirect[];
  /** Here-document or here-string text fed to the command, when any. */
  readonly stdin: string | null;
  /** Commands joined by `|` share a pipeline number. */
  readonly pipeline: number;
}

export interface ShellParse {
  readonly ok: boolean;
  /** Why the script could not be split (unterminated quote or substitution, dangling redirection). */
  readonly error: string | null;
  readonly commands: readonly ShellCommand[];
  /** Bodies of command and process substitutions, to be analyzed as scripts. */
  readonly substitutions: readonly string[];
}

type Token =
  | { readonly kind: 'word'; readonly text: string; readonly dynamic: boolean }
  | { kind: 'op'; readonly op: string; body?: string };

const OPERATORS = ['&>>', '<<<', '<<-', '&&', '||', ';;', '|&', '<<', '>>', '&>', '>|', '<&', '>&', '<>', ';', '&', '|', '(', ')', '<', '>', '\n'];
/** First characters of OPERATORS: any other character is part of a word, with no operator to look up. */
const OPERATOR_START: ReadonlySet<string> = new Set(OPERATORS.map((op) => op[0] as string));
const REDIRECTIONS = new Set(['<', '>', '>>', '>|', '&>', '&>>', '<>', '<&', '>&', '<<', '<<-', '<<<']);
const PIPES = new Set(['|', '|&']);

class SplitError extends Error {}

const ANSI_ESCAPES: Readonly<Record<string, string>> = { n: '\n', t: '\t', r: '\r', a: '\x07', b: '\b', e: '\x1b', E: '\x1b', f: '\f', v: '\v', '\\': '\\', "'": "'", '"': '"', '?': '?' };

class Lexer {
  private i = 0;
  private word: string | null = null;
  private dynamic = false;
  readonly tokens: Token[] = [];
  readonly substitutions: string[] = [];
  private readonly pendingHeredocs: { op: Token & { kind: 'op' }; delimiter: string | null; stripTabs: boolean }[] = [];

  constructor(private readonly s: string) {}

  run(): void {
    const s = this.s;
    while (this.i < s.length) {
      const c = s[this.i] as string;
      if (c === ' ' || c === '\t') {
        this.flush();
        this.i += 1;
      } else if (c === '#' && this.word === null) {
        while (this.i < s.length && s[this.i] !== '\n') this.i += 1;
      } else if (c === '\\') {
        const next = s[this.i + 1];
        if (next === undefined) {
          this.append('\\');
          this.i += 1;
        } else if (next === '\n') {
          this.i += 2;
        } else {
          this.append(next);
          this.i += 2;
        }
      } else if (c === "'") {
        const end = s.indexOf("'", this.i + 1);
        if (end < 0) throw new SplitError('unterminated single quote');
        this.append(s.slice(this.i + 1, end));
        this.i = end + 1;
      } else if (c === '"') {
        this.doubleQuoted();
      } else if (c === '$' && s[this.i + 1] === "'") {
        this.ansiQuoted();
      } else if (c === '$' && s[this.i + 1] === '(') {
        this.substitution(this.i + 2);
      } else if ((c === '<' || c === '>') && s[this.i + 1] === '(') {
        this.substitution(this.i + 2);
      } else if (c === '`') {
        this.backtick();
      } else if (c === '$') {
        this.dynamic = true;
        this.append('$');
        this.i += 1;
      } else {
        const op = OPERATOR_START.has(c) ? OPERATORS.find((candidate) => s.startsWith(candidate, this.i)) : undefined;
        if (op === undefined) {
          this.append(c);
          this.i += 1;
          continue;
        }
        if (REDIRECTIONS.has(op) && this.word !== null && /^[0-9]+$/.test(this.word) && !this.dynamic) {
          this.word = null; // a file-descriptor number: `2>`, `1>&2`
        } else {
          this.flush();
        }
        this.i += op.length;
        const token: Token & { kind: 'op' } = { kind: 'op', op };
        this.tokens.push(token);
        if (op === '<<' || op === '<<-') this.pendingHeredocs.push({ op: token, delimiter: null, stripTabs: op === '<<-' });
        if (op === '\n') this.readHeredocBodies();
      }
    }
    this.flush();
    for (const heredoc of this.pendingHeredocs) heredoc.op.body = '';
  }

  private append(text: string): void {
    this.word = (this.word ?? '') + text;
  }

  private flush(): void {
    if (this.word === null) return;
    this.tokens.push({ kind: 'word', text: this.word, dynamic: this.dynamic });
    const waiting = this.pendingHeredocs.find((heredoc) => heredoc.delimiter === null);
    if (waiting !== undefined) waiting.delimiter = this.word;
    this.word = null;
    this.dynamic = false;
  }

  private readHeredocBodies(): void {
    const s = this.s;
    for (const heredoc of this.pendingHeredocs.splice(0)) {
      const lines: string[] = [];
      let found = false;
      while (this.i < s.length) {
        const newline = s.indexOf('\n', this.i);
        const end = newline < 0 ? s.length : newline;
        const raw = s.slice(this.i, end);
        this.i = newline < 0 ? s.length : newline + 1;
        const line = heredoc.stripTabs ? raw.replace(/^\t+/, '') : raw;
        if (line === heredoc.delimiter) {
          found = true;
          break;
        }
        lines.push(line);
      }
      heredoc.op.body = lines.join('\n');
      if (!found && heredoc.delimiter === null) heredoc.op.body = '';
    }
  }

  private doubleQuoted(): void {
    const s = this.s;
    this.i += 1;
    this.append('');
    while (this.i < s.length && s[this.i] !== '"') {
      const c = s[this.i] as string;
      const next = s[this.i + 1];
      if (c === '\\' && next !== undefined && '$`"\\\n'.includes(next)) {
        if (next !== '\n') this.append(next);
        this.i += 2;
      } else if (c === '$' && next === '(') {
        this.substitution(this.i + 2);
      } else if (c === '`') {
        this.backtick();
      } else {
        if (c === '$') this.dynamic = true;
        this.append(c);
        this.i += 1;
      }
    }
    if (this.i >= s.length) throw new SplitError('unterminated double quote');
    this.i += 1;
  }

  private ansiQuoted(): void {
    const s = this.s;
    let i = this.i + 2;
    let out = '';
    while (i < s.length && s[i] !== "'") {
      const c = s[i] as string;
      if (c !== '\\') {
        out += c;
        i += 1;
        continue;
      }
      const e = s[i + 1];
      if (e === undefined) throw new SplitError("unterminated $'...' quote");
      const hex = e === 'x' ? /^[0-9A-Fa-f]{1,2}/.exec(s.slice(i + 2, i + 4)) : null;
      const octal = /^[0-7]{1,3}/.exec(s.slice(i + 1, i + 4));
      if (hex !== null) {
        out += String.fromCharCode(parseInt(hex[0], 16));
        i += 2 + hex[0].length;
      } else if (octal !== null) {
        out += String.fromCharCode(parseInt(octal[0], 8) & 0xff);
        i += 1 + octal[0].length;
      } else {
        out += ANSI_ESCAPES[e] ?? `\\${e}`;
        i += 2;
      }
    }
    if (i >= s.length) throw new SplitError("unterminated $'...' quote");
    this.append(out);
    this.i = i + 1;
  }

  /** Captures a balanced `( ... )` body starting at `start` (just after the opening parenthesis). */
  private substitution(start: number): void {
    const s = this.s;
    let depth = 1;
    let i = start;
    while (i < s.length) {
      const c = s[i];
      if (c === '\\') {
        i += 2;
        continue;
      }
      if (c === "'") {
        const end = s.indexOf("'", i + 1);
        if (end < 0) throw new SplitError('unterminated quote in substitution');
        i = end + 1;
        continue;
      }
      if (c === '"') {
        i += 1;
        while (i < s.length && s[i] !== '"') i += s[i] === '\\' ? 2 : 1;
        if (i >= s.length) throw new SplitError('unterminated quote in substitution');
        i += 1;
        continue;
      }
      if (c === '(') depth += 1;
      if (c === ')') {
        depth -= 1;
        if (depth === 0) break;
      }
      i += 1;
    }
    if (depth !== 0) throw new SplitError('unterminated substitution');
    const body = s.slice(start, i);
    this.substitutions.push(body.startsWith('(') && body.endsWith(')') ? body.slice(1, -1) : body);
    this.append(`$(${body})`);
    this.dynamic = true;
    this.i = i + 1;
  }

  private backtick(): void {
    const s = this.s;
    let i = this.i + 1;
    let body = '';
    while (i < s.length && s[i] !== '`') {
      if (s[i] === '\\' && i + 1 < s.length) {
        body += s[i + 1];
        i += 2;
      } else {
        body += s[i];
        i += 1;
      }
    }
    if (i >= s.length) throw new SplitError('unterminated backtick');
    this.substitutions.push(body);
    this.append(`\`${body}\``);
    this.dynamic = true;
    this.i = i + 1;
  }
}

interface CommandBuilder {
  words: string[];
  dynamic: boolean[];
  redirects: ShellRedirect[];
  stdin: string | null;
  pipeline: number;
}

/** Splits a shell script into simple commands. Never throws: a script it cannot split comes back with `ok: false`. */
export function splitShell(script: string): ShellParse {
  const lexer = new Lexer(script);
  try {
    lexer.run();
  } catch (error) {
    if (error instanceof SplitError) return { ok: false, error: error.message, commands: [], substitutions: lexer.substitutions };
    throw error;
  }
  const commands: ShellCommand[] = [];
  let pipeline = 0;
  const fresh = (): CommandBuilder => ({ words: [], dynamic: [], redirects: [], stdin: null, pipeline });
  let current = fresh();
  const end = () => {
    if (current.words.length > 0 || current.redirects.length > 0 || current.stdin !== null) commands.push(current);
    current = fresh();
  };
  const tokens = lexer.tokens;
  for (let t = 0; t < tokens.length; t += 1) {
    const token = tokens[t] as Token;
    if (token.kind === 'word') {
      current.words.push(token.text);
      current.dynamic.push(token.dynamic);
      continue;
    }
    if (REDIRECTIONS.has(token.op)) {
      const target = tokens[t + 1];
      if (target === undefined || target.kind !== 'word') {
        return { ok: false, error: `redirection ${token.op} without a target`, commands, substitutions: lexer.substitutions };
      }
      t += 1;
      if (token.op === '<<' || token.op === '<<-') current.stdin = token.body ?? '';
      else if (token.op === '<<<') current.stdin = target.text;
      else current.redirects.push({ op: token.op, target: target.text });
      continue;
    }
    end();
    if (!PIPES.has(token.op)) pipeline += 1;
    current.pipeline = pipeline;
  }
  end();
  return { ok: true, error: null, commands, substitutions: lexer.substitutions };
}
