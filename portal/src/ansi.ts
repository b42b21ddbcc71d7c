// ANSI SGR colour codes in logs → styled spans; everything else is text.

export interface Span {
  text: string;
  /** A class such as `fg-31 bold`, or empty. */
  cls: string;
}

// eslint-disable-next-line no-control-regex
const SGR = /\x1b\[([0-9;]*)m/g;
// eslint-disable-next-line no-control-regex
const OTHER = /\x1b\[[0-9;?]*[A-Za-z]/g;

/** Splits one line into spans; `state` carries the style to the next line. */
export function ansiLine(line: string, state: { cls: string }): Span[] {
  const spans: Span[] = [];
  let last = 0;
  SGR.lastIndex = 0;
  for (let m = SGR.exec(line); m; m = SGR.exec(line)) {
    if (m.index > last) spans.push({ text: line.slice(last, m.index).replace(OTHER, ""), cls: state.cls });
    state.cls = apply(state.cls, m[1]);
    last = m.index + m[0].length;
  }
  if (last < line.length) spans.push({ text: line.slice(last).replace(OTHER, ""), cls: state.cls });
  return spans;
}

function apply(cls: string, codes: string): string {
  let fg = /fg-\d+/.exec(cls)?.[0] ?? "";
  let bold = cls.includes("bold");
  for (const c of (codes || "0").split(";").map(Number)) {
    if (c === 0) {
      fg = "";
      bold = false;
    } else if (c === 1) bold = true;
    else if (c === 22) bold = false;
    else if ((c >= 30 && c <= 37) || (c >= 90 && c <= 97)) fg = `fg-${c}`;
    else if (c === 39) fg = "";
  }
  return [fg, bold ? "bold" : ""].filter(Boolean).join(" ");
}
