import type { FuzzCase } from "./fuzz-case.ts";

/**
 * The failures of a fuzz run, grouped so that one defect reads as one entry
 * however many requests hit it: by problem, wire protocol, status, code and
 * the error message up to its first colon with numbers blanked (so
 * "parse binary: premature EOF" and "parse binary: invalid varint" are one
 * defect); each group lists the routes it was seen on, the messages, how
 * often, and one reproducer (the first case that showed it).
 */
export interface Finding {
  problem: string;
  caseIndex: number;
  fuzzCase: FuzzCase;
  status: number | undefined;
  code: string | undefined;
  message: string;
  body: string;
}

interface Group {
  first: Finding;
  count: number;
  routes: Map<string, number>;
  /** Distinct messages seen (numbers blanked), a few at most. */
  messages: Set<string>;
}

const maxMessages = 6;

/** Secrets of the run replaced by shell variables in reproducers, so they are not printed and can be set for `npm start`. */
export interface Placeholders {
  [variable: string]: string;
}

const shellDoubleQuoted = (text: string, placeholders: Placeholders): string => {
  let pieces = [text.replace(/[\\"$`]/g, "\\$&")];
  for (const [variable, secret] of Object.entries(placeholders)) {
    if (!secret) continue;
    pieces = pieces.flatMap((piece) => piece.split(secret).flatMap((part, i) => (i === 0 ? [part] : [`$${variable}`, part])));
  }
  return `"${pieces.join("")}"`;
};

/** The body as a printf format: printable ASCII kept, everything else as \xHH. */
function printfBytes(body: Buffer): string {
  let out = "";
  for (const byte of body) {
    if (byte === 0x25) out += "%%";
    else if (byte === 0x27 || byte === 0x5c || byte < 0x20 || byte > 0x7e) out += `\\x${byte.toString(16).padStart(2, "0")}`;
    else out += String.fromCharCode(byte);
  }
  return out;
}

const maxInlineBody = 1024;
const maxInlinePath = 600;

/** A curl command for the case against $BASE (e.g. http://localhost:8080); long bodies are described instead. */
export function curlFor(fuzzCase: FuzzCase, placeholders: Placeholders): string {
  const parts = ["curl -sS -i"];
  if (fuzzCase.transport === "h2c") parts.push("--http2-prior-knowledge");
  if (fuzzCase.method !== "GET" || fuzzCase.body) parts.push(`-X ${fuzzCase.method}`);
  for (const [name, value] of Object.entries(fuzzCase.headers)) {
    for (const v of Array.isArray(value) ? value : [value]) parts.push(`-H ${shellDoubleQuoted(`${name}: ${v}`, placeholders)}`);
  }
  if (fuzzCase.body && fuzzCase.body.length <= maxInlineBody) parts.push("--data-binary @-");
  const shownPath = fuzzCase.path.length > maxInlinePath ? `${fuzzCase.path.slice(0, maxInlinePath)}...` : fuzzCase.path;
  parts.push(shellDoubleQuoted(`$BASE${shownPath}`, placeholders).replace("\\$BASE", "$BASE"));
  if (shownPath !== fuzzCase.path) parts.push(`  # path of ${fuzzCase.path.length} characters, cut here: replay the case for all of it`);
  const command = parts.join(" ");
  if (!fuzzCase.body) return command;
  if (fuzzCase.body.length > maxInlineBody) return `${command} --data-binary @body.bin   # body: ${fuzzCase.body.length} bytes, starting ${fuzzCase.body.subarray(0, 48).toString("hex")}`;
  return `printf '${printfBytes(fuzzCase.body)}' | ${command}`;
}

export class FuzzFindings {
  private readonly groups = new Map<string, Group>();
  total = 0;

  add(finding: Finding): void {
    this.total++;
    const message = finding.message.replace(/[0-9a-f]{8}-[0-9a-f-]{27}/g, "<uuid>").replace(/\d+/g, "#").slice(0, 120);
    const key = [finding.problem, finding.fuzzCase.protocol, finding.status ?? "-", finding.code ?? "-", message.split(":")[0]].join(" | ");
    const group = this.groups.get(key) ?? { first: finding, count: 0, routes: new Map<string, number>(), messages: new Set<string>() };
    group.count++;
    if (group.messages.size < maxMessages) group.messages.add(message);
    group.routes.set(finding.fuzzCase.route, (group.routes.get(finding.fuzzCase.route) ?? 0) + 1);
    this.groups.set(key, group);
  }

  get size(): number {
    return this.groups.size;
  }

  /** The grouped findings, most frequent first, with a reproducer each. */
  report(placeholders: Placeholders, replay: (caseIndex: number) => string): string {
    const groups = [...this.groups.values()].sort((a, b) => b.count - a.count);
    return groups
      .map((g, i) => {
        const f = g.first;
        const routes = [...g.routes].sort((a, b) => b[1] - a[1]).map(([route, n]) => `${route} (${n})`).join(", ");
        return [
          `#${i + 1} ${f.problem}: ${g.count} request(s)`,
          `   protocol ${f.fuzzCase.protocol} (${f.fuzzCase.description}); status ${f.status ?? "none"}; code ${f.code ?? "none"}`,
          `   routes: ${routes}`,
          `   messages: ${[...g.messages].map((m) => JSON.stringify(m)).join(", ")}`,
          `   body: ${JSON.stringify(f.body.slice(0, 200))}`,
          `   reproduce: ${curlFor(f.fuzzCase, placeholders)}`,
          `   replay: ${replay(f.caseIndex)}`,
        ].join("\n");
      })
      .join("\n");
  }
}
