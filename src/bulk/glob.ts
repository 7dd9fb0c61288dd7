/**
 * Glob patterns for the bulk commands' --include and --exclude, matched against a file's path
 * relative to the folder it was found in, `/`-separated. Node.js 20 has no stable glob API and the
 * bulk commands take no dependency, hence this small matcher. What it understands:
 *   `*`      any characters within one path segment (not `/`)
 *   `?`      one character, not `/`
 *   `**`     as a whole segment: zero or more segments (`**\/2025/**`, `a/**\/b`, `docs/**`)
 *   `{a,b}`  either alternative (nested braces too; an alternative may hold `/`)
 *   `[abc]`, `[a-z]`, `[!a]` / `[^a]`  one character of (or not of) a class
 *   `\x`     the character x itself
 * A pattern without `/` matches a file's name at any depth (`*.pdf` is `**\/*.pdf`), as in
 * .gitignore: that is what someone passing `--include '*.pdf'` to a folder means. A leading `/` or
 * `./` anchors nothing more (paths are already relative). Dot files are not special. No `!`.
 */

/** A compiled pattern: `matches(relativePath)`. */
export interface Glob {
  readonly source: string;
  matches(path: string): boolean;
}

export function compileGlob(pattern: string): Glob {
  const regexes = expandBraces(pattern).map((p) => new RegExp(`^${translate(p)}$`, "s"));
  return { source: pattern, matches: (path) => regexes.some((r) => r.test(path)) };
}

/** `a{b,c{d,e}}f` → abf, acdf, acef. An unbalanced brace is literal. */
export function expandBraces(pattern: string): string[] {
  const open = findUnescaped(pattern, "{", 0);
  if (open < 0) return [pattern];
  let depth = 0;
  const commas: number[] = [];
  for (let i = open; i < pattern.length; i++) {
    const c = pattern[i];
    if (c === "\\") {
      i++;
      continue;
    }
    if (c === "{") depth++;
    else if (c === "}" && --depth === 0) {
      if (commas.length === 0) {
        // `{x}`: no alternatives, the braces are literal; expand what follows.
        return expandBraces(pattern.slice(i + 1)).map((rest) => pattern.slice(0, i + 1) + rest);
      }
      const head = pattern.slice(0, open);
      const bounds = [open, ...commas, i];
      const tails = expandBraces(pattern.slice(i + 1));
      const out: string[] = [];
      for (let k = 0; k + 1 < bounds.length; k++) {
        for (const alt of expandBraces(pattern.slice(bounds[k]! + 1, bounds[k + 1]!))) for (const tail of tails) out.push(head + alt + tail);
      }
      return out;
    } else if (c === "," && depth === 1) commas.push(i);
  }
  return [pattern]; // unbalanced: literal
}

function findUnescaped(s: string, ch: string, from: number): number {
  for (let i = from; i < s.length; i++) {
    if (s[i] === "\\") i++;
    else if (s[i] === ch) return i;
  }
  return -1;
}

/** One brace-free pattern as the body of a regular expression. */
function translate(pattern: string): string {
  let p = pattern.replace(/^(\.\/|\/)+/, "");
  if (!p.includes("/")) p = `**/${p}`;
  const segments = p.split("/");
  let out = "";
  segments.forEach((segment, i) => {
    const last = i === segments.length - 1;
    if (segment === "**") out += last ? ".*" : "(?:[^/]*/)*";
    else out += translateSegment(segment) + (last ? "" : "/");
  });
  return out;
}

const SPECIAL = /[.+^${}()|[\]\\*?]/;

function translateSegment(segment: string): string {
  let out = "";
  for (let i = 0; i < segment.length; i++) {
    const c = segment[i]!;
    if (c === "\\" && i + 1 < segment.length) out += escape(segment[++i]!);
    else if (c === "*") {
      while (segment[i + 1] === "*") i++;
      out += "[^/]*";
    } else if (c === "?") out += "[^/]";
    else if (c === "[") {
      const end = classEnd(segment, i);
      if (end < 0) out += "\\[";
      else {
        out += translateClass(segment.slice(i + 1, end));
        i = end;
      }
    } else out += escape(c);
  }
  return out;
}

/** The index of the `]` closing the class opened at `start`, or -1 (then `[` is literal). */
function classEnd(segment: string, start: number): number {
  let i = start + 1;
  if (segment[i] === "!" || segment[i] === "^") i++;
  if (segment[i] === "]") i++; // `[]a]`: a leading ] is a member
  for (; i < segment.length; i++) {
    if (segment[i] === "\\") i++;
    else if (segment[i] === "]") return i;
  }
  return -1;
}

function translateClass(body: string): string {
  let negate = false;
  if (body.startsWith("!") || body.startsWith("^")) {
    negate = true;
    body = body.slice(1);
  }
  let out = "";
  for (let i = 0; i < body.length; i++) {
    const c = body[i]!;
    if (c === "\\" && i + 1 < body.length) out += "\\" + body[++i]!;
    else if (c === "-" && i > 0 && i < body.length - 1) out += "-";
    else out += c === "]" || c === "\\" || c === "^" || c === "-" || c === "[" ? "\\" + c : c;
  }
  // A class never matches the separator: `[!a]` is one character of a segment.
  return negate ? `(?!/)[^${out}]` : `[${out}]`;
}

function escape(c: string): string {
  return SPECIAL.test(c) ? "\\" + c : c;
}
