// A stella-conform adapter (report and persistent modes) around a trivial stella reader.
//
// Written by `stella-conform init typescript`.  Build and grade it as it is, then make it
// yours:
//
//     npm install && npx tsc
//     stella-conform smoke --mode report -- node dist/stella_adapter.js
//     stella-conform run -- node dist/stella_adapter.js
//
// The lines marked `EDIT` are the ones to change.  `readStream` is handed the raw bytes of
// one stella stream as a Node.js `Readable`: call your own parser on it there, as your
// program calls it on `process.stdin` or on the pipe from stella, so that your parser's own
// line splitting, decoding and buffering are what the kit grades; then tell `report` what it
// made of each line and return what it read.  Everything else speaks the adapter protocol
// (docs/adapter-protocol.md) and can stay as it is.  Node.js 18 or newer, no dependencies.
//
// An adapter grades your parser as it reads the bytes it is handed here.  Grade the program
// your users run as well, unmodified, by its exit status:
// `stella-conform run --mode exit -- your-cli ARGS` (the stream on its stdin).

import { Readable } from "node:stream";

const CLIENT = { name: "my-stella-client", version: "0.1", language: "typescript" }; // EDIT: yours

type Summary = { verdict: "accept" | "reject"; [field: string]: unknown };

/**
 * Read one stella stream: `stream` holds its raw bytes (`process.stdin` itself in report
 * mode, a case's bytes in persistent mode).  For each physical line, call
 * `report.line(number, outcome, type, reason)` as soon as your parser has read it (or
 * `report.pending(number)` for a line that does not parse, until the next line tells whether
 * it was the torn last one); resolve to the summary (docs/adapter-protocol.md: the summary,
 * field by field).  In report mode the kit writes line k+1 only after the answer for line k,
 * so answer each line as it arrives, never after reading ahead.
 */
async function readStream(stream: Readable, report: Report): Promise<Summary> {
  return new TrivialReader(report).read(stream); // EDIT: your parser, reading `stream` itself
}

async function main(): Promise<void> {
  // `knows`: the types your parser recognizes (today's stella's, or an older one's too), so
  // the kit grades it on streams of any stella by what it knows, not by what that stella wrote
  emit({
    kind: "hello", protocol: 1, client: CLIENT, profiles: ["reader"],
    modes: ["report", "persistent"], knows: Object.keys(KNOWN), // EDIT: the types yours knows
  });
  if (process.env.STELLA_CONFORM_MODE === "persistent") {
    process.exitCode = await serveCases(process.stdin);
    return;
  }
  const summary = await readStream(process.stdin, new Report()); // report mode: stdin
  emit({ ...summary, kind: "summary" });
  process.exitCode = summary.verdict === "reject" ? 1 : 0;
  process.stdin.destroy(); // read no more after a rejection
}

/**
 * Persistent mode: one case per stdin line, `{"kind":"case","id":..,"stream":<base64>}`,
 * each answered with observations and a summary that carry its id.
 */
async function serveCases(stdin: Readable): Promise<number> {
  for await (const raw of splitLines(stdin)) {
    let message: { kind?: unknown; id?: unknown; stream?: unknown };
    try {
      message = JSON.parse(raw.toString("utf-8"));
    } catch {
      continue; // not a message of this protocol: ignored
    }
    if (message === null || typeof message !== "object") continue;
    if (message.kind === "shutdown") break;
    if (message.kind !== "case") continue;
    if (typeof message.stream !== "string") {
      process.stderr.write("stella-adapter: a case without a base64 stream\n");
      return 2;
    }
    const stream = Readable.from([Buffer.from(message.stream, "base64")], { objectMode: false });
    const report = new Report(message.id);
    const summary = await readStream(stream, report);
    report.emit({ ...summary, kind: "summary" });
  }
  return 0;
}

/** What the parser made of each line, written to the kit at once (with the case's id in
 * persistent mode). */
class Report {
  constructor(private readonly caseId?: unknown) {}

  line(line: number, outcome: string, type?: string | null, reason?: string): void {
    const message: Record<string, unknown> = { kind: "line", line, outcome };
    if (outcome === "known" || outcome === "unknown") message.type = type ?? null;
    if (reason !== undefined) message.reason = reason;
    this.emit(message);
  }

  pending(line: number): void {
    this.emit({ kind: "pending", line });
  }

  emit(message: object): void {
    emit(this.caseId === undefined ? message : { ...message, id: this.caseId });
  }
}

function emit(message: object): void {
  process.stdout.write(JSON.stringify(message) + "\n"); // lockstep: one answer per line
}

/** Physical lines of a byte stream (split at LF only, each with its LF; the last one without,
 * if the stream does not end in one), each handed over as soon as it is complete. */
async function* splitLines(stream: AsyncIterable<Buffer>): AsyncGenerator<Buffer> {
  let buf: Buffer = Buffer.alloc(0);
  for await (const chunk of stream) {
    buf = buf.length ? Buffer.concat([buf, chunk]) : chunk;
    let nl: number;
    while ((nl = buf.indexOf(0x0a)) >= 0) {
      yield buf.subarray(0, nl + 1);
      buf = buf.subarray(nl + 1);
    }
  }
  if (buf.length) yield buf;
}

// ---------------------------------------------------------------------------------------
// The trivial reader: the six rules of stella's stream contract, and nothing more.
// Replace it with your parser; keep what it reports.

type Fits = (v: unknown) => boolean;
type JsonObject = Record<string, unknown>;

const U64 = 2 ** 64 - 1; // JSON numbers are doubles here: bounds are checked on the double
const U32 = 2 ** 32 - 1;
const uint = (top: number): Fits => (v) => Number.isInteger(v) && (v as number) >= 0 && (v as number) <= top;
const string: Fits = (v) => typeof v === "string";
const number: Fits = (v) => typeof v === "number" && Number.isFinite(v);
const boolean: Fits = (v) => typeof v === "boolean";
const oneOf = (...names: string[]): Fits => (v) => typeof v === "string" && names.includes(v);
const orNull = (fits: Fits): Fits => (v) => v === null || fits(v);
const isObject = (v: unknown): v is JsonObject => v !== null && typeof v === "object" && !Array.isArray(v);
const toolCall: Fits = (v) => isObject(v) && string(v.call_id) && string(v.name) && "input" in v;
const toolOutput: Fits = (v) =>
  isObject(v) &&
  ((isObject(v.ok) && string(v.ok.content)) || (isObject(v.error) && string(v.error.message)));

// Rule 4: each known type's required fields (first), then its optional ones.
const KNOWN: Record<string, [Record<string, Fits>, Record<string, Fits>]> = {
  stage: [{ name: string, scope: oneOf("turn", "run") }, {}],
  text: [{ text: string }, {}],
  text_delta: [{ delta: string }, {}],
  reasoning: [{ delta: string }, {}],
  tool_start: [{ call: toolCall }, {}],
  tool_result: [{ call_id: string, output: toolOutput, duration_ms: uint(U64) }, { speculated: boolean }],
  step_usage: [
    {
      step: uint(U64), model: string, input_tokens: uint(U64), output_tokens: uint(U64),
      cached_input_tokens: uint(U64), cost_usd: number, duration_ms: uint(U64),
      retries: uint(U32), tool_calls: uint(U64),
    },
    { provider: string, reasoning_tokens: orNull(uint(U64)), output_text: orNull(string), complete: boolean },
  ],
  turn_complete: [{ model: string, cost_usd: number }, {}],
  run_complete: [{ model: string, cost_usd: number }, {}],
  error: [{ message: string, retryable: boolean }, {}],
  budget_tick: [
    { spent_usd: number, mode: oneOf("off", "observed", "enforced") },
    {
      limit_usd: orNull(number), session_spent_usd: orNull(number),
      session_limit_usd: orNull(number), deadline_remaining_ms: orNull(uint(U64)),
    },
  ],
  file_change: [
    { path: string, kind: oneOf("read", "created", "modified", "deleted") },
    { added: uint(U32), removed: uint(U32), diff: orNull(string) },
  ],
};
const ALIASES: Record<string, [string, string]> = { text: ["text", "delta"], text_delta: ["delta", "text"] };
const ARCHIVED: Record<string, string> = { stage: "scope" }; // a stage from before `scope` existed
const utf8 = new TextDecoder("utf-8", { fatal: true });
// TextDecoder drops a leading U+FEFF unless told not to: on the first line that is the
// stream's BOM, on any other a character JSON does not take (the line is corrupt).
const utf8KeepingBOM = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

class TrivialReader {
  rejected: [number, string] | null = null;
  private pending: [number, string] | null = null; // corrupt; the torn last line if nothing follows
  private known = 0;
  private unknown = 0;
  private unknownTypes = new Set<string>();
  private texts: string[] = [];
  private turns = 0;
  private lastKnown: string | null = null;
  private completed = false;

  constructor(private readonly report: Report) {}

  /** The whole stream, one physical line at a time as soon as it has arrived (split at LF
   * only, on bytes: a CR or U+2028 inside a line is no line end); what it read. */
  async read(stream: Readable): Promise<Summary> {
    let n = 0;
    for await (const raw of splitLines(stream)) {
      this.push(++n, raw);
      if (this.rejected) break; // the first error ends the stream
    }
    this.finish();
    return this.summary();
  }

  push(line: number, raw: Buffer): void {
    const content = raw.length && raw[raw.length - 1] === 0x0a ? raw.subarray(0, raw.length - 1) : raw;
    if (content.every((b) => b === 0x20 || b === 0x09 || b === 0x0d || b === 0x0a)) {
      return this.report.line(line, "blank");
    }
    if (this.pending) return this.reject(this.pending[0], `corrupt line: ${this.pending[1]}`); // rule 6
    let event: unknown;
    try {
      // rule 1: each line is one JSON document
      event = JSON.parse((line === 1 ? utf8 : utf8KeepingBOM).decode(content));
    } catch (e) {
      this.pending = [line, String((e as Error).message)];
      return this.report.pending(line);
    }
    if (!isObject(event)) return this.reject(line, "line is JSON but not an object");
    const tag = event.type; // rule 2: the type string alone decides
    const known = typeof tag === "string" && Object.prototype.hasOwnProperty.call(KNOWN, tag);
    if (!known || (tag in ARCHIVED && !(ARCHIVED[tag] in event))) {
      this.unknown += 1; // rule 3: unrecognized events are counted, nothing more
      if (typeof tag === "string") this.unknownTypes.add(tag);
      return this.report.line(line, "unknown", typeof tag === "string" ? tag : null);
    }
    const alias = ALIASES[tag];
    if (alias && !(alias[0] in event) && alias[1] in event) event = { ...event, [alias[0]]: event[alias[1]] };
    const problem = misfit(tag, event as JsonObject); // rule 4: a known type must fit; rule 5: extras ignored
    if (problem) return this.reject(line, problem);
    this.known += 1;
    this.lastKnown = tag;
    if (tag === "text") this.texts.push((event as JsonObject).text as string);
    if (tag === "run_complete") this.completed = true;
    if (tag === "turn_complete") this.turns += 1;
    this.report.line(line, "known", tag);
  }

  finish(): void {
    if (!this.pending || this.rejected) return;
    const [line, reason] = this.pending; // rule 6: the cut-off final line is dropped
    this.report.line(line, "torn", undefined, reason);
  }

  reject(line: number, reason: string): void {
    this.rejected = [line, reason];
    this.report.line(line, "reject", undefined, reason);
  }

  summary(): Summary {
    return {
      verdict: this.rejected ? "reject" : "accept",
      rejected_line: this.rejected ? this.rejected[0] : null,
      known_events: this.known,
      unrecognized_events: this.unknown,
      unrecognized_types: [...this.unknownTypes].sort(),
      final_text: this.texts.length ? this.texts[this.texts.length - 1] : null,
      texts: this.texts,
      turns_completed: this.turns,
      terminator: this.completed ? "run_complete" : this.lastKnown === "error" ? "error" : null,
    };
  }
}

function misfit(tag: string, event: JsonObject): string | null {
  const [required, optional] = KNOWN[tag];
  for (const [field, fits] of Object.entries(required)) {
    if (!(field in event)) return `${tag}: missing required field '${field}'`;
    if (!fits(event[field])) return `${tag}: field '${field}' has the wrong shape`;
  }
  for (const [field, fits] of Object.entries(optional)) {
    if (field in event && !fits(event[field])) return `${tag}: field '${field}' has the wrong shape`;
  }
  if (event.ts != null && !uint(U64)(event.ts)) return `${tag}: ts must be an integer >= 0`; // null: no ts
  return null;
}

void main(); // an exception your parser lets escape is a crash, which the kit grades as one
