// A stella-conform adapter (report mode) around a trivial stella reader.
//
// Written by `stella-conform init typescript`.  Build and grade it as it is, then make it
// yours:
//
//     npm install && npx tsc
//     stella-conform smoke --mode report -- node dist/stella_adapter.js
//     stella-conform run --mode report -- node dist/stella_adapter.js
//
// The lines marked `EDIT` are the ones to change: call your own parser where the trivial
// reader is called, and report what it did.  Everything else speaks the adapter protocol
// (docs/adapter-protocol.md) and can stay as it is.  Node.js 18 or newer, no dependencies.

const CLIENT = { name: "my-stella-client", version: "0.1", language: "typescript" }; // EDIT: yours

type Observation = { kind: "line" | "pending"; line: number; outcome?: string; type?: string | null; reason?: string };

function main(): void {
  // `knows`: the types your parser recognizes (today's stella's, or an older one's too), so
  // the kit grades it on streams of any stella by what it knows, not by what that stella wrote
  emit({ kind: "hello", protocol: 1, client: CLIENT, profiles: ["reader"], modes: ["report"], knows: Object.keys(KNOWN) });
  const reader = new TrivialReader(); // EDIT: your parser, fed one physical line at a time
  const lines = new LineSplitter();
  let done = false;
  const finish = (): void => {
    if (done) return;
    done = true;
    for (const o of reader.finish()) emit(o); // EDIT: tell your parser the stream ended
    emit(reader.summary()); // EDIT: what your parser read (verdict, counts, final text)
    process.exitCode = reader.rejected ? 1 : 0;
    process.stdin.destroy();
  };
  const take = (line: number, raw: Buffer): boolean => {
    for (const o of reader.push(line, raw)) emit(o); // EDIT: hand the line to your parser
    return reader.rejected === null;
  };
  process.stdin.on("data", (chunk: Buffer) => {
    if (!done && !lines.feed(chunk, take)) finish();
  });
  process.stdin.on("end", () => {
    if (!done) lines.end(take); // a last line without a newline
    finish();
  });
}

function emit(message: object): void {
  process.stdout.write(JSON.stringify(message) + "\n"); // lockstep: one answer per line
}

/** Physical lines (split at LF only), each handed over as soon as it is complete. */
class LineSplitter {
  private buf: Buffer = Buffer.alloc(0);
  private n = 0;

  feed(chunk: Buffer, take: (line: number, raw: Buffer) => boolean): boolean {
    this.buf = this.buf.length ? Buffer.concat([this.buf, chunk]) : chunk;
    let nl: number;
    while ((nl = this.buf.indexOf(0x0a)) >= 0) {
      const raw = this.buf.subarray(0, nl + 1);
      this.buf = this.buf.subarray(nl + 1);
      this.n += 1;
      if (!take(this.n, raw)) return false;
    }
    return true;
  }

  end(take: (line: number, raw: Buffer) => boolean): boolean {
    if (!this.buf.length) return true;
    this.n += 1;
    return take(this.n, this.buf);
  }
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

  push(line: number, raw: Buffer): Observation[] {
    const content = raw.length && raw[raw.length - 1] === 0x0a ? raw.subarray(0, raw.length - 1) : raw;
    if (content.every((b) => b === 0x20 || b === 0x09 || b === 0x0d || b === 0x0a)) {
      return [{ kind: "line", line, outcome: "blank" }];
    }
    if (this.pending) return this.reject(this.pending[0], `corrupt line: ${this.pending[1]}`); // rule 6
    let event: unknown;
    try {
      event = JSON.parse(utf8.decode(content)); // rule 1: each line is one JSON document
    } catch (e) {
      this.pending = [line, String((e as Error).message)];
      return [{ kind: "pending", line }];
    }
    if (!isObject(event)) return this.reject(line, "line is JSON but not an object");
    const tag = event.type; // rule 2: the type string alone decides
    const known = typeof tag === "string" && Object.prototype.hasOwnProperty.call(KNOWN, tag);
    if (!known || (tag in ARCHIVED && !(ARCHIVED[tag] in event))) {
      this.unknown += 1; // rule 3: unrecognized events are counted, nothing more
      if (typeof tag === "string") this.unknownTypes.add(tag);
      return [{ kind: "line", line, outcome: "unknown", type: typeof tag === "string" ? tag : null }];
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
    return [{ kind: "line", line, outcome: "known", type: tag }];
  }

  finish(): Observation[] {
    if (!this.pending || this.rejected) return [];
    const [line, reason] = this.pending; // rule 6: the cut-off final line is dropped
    return [{ kind: "line", line, outcome: "torn", reason }];
  }

  reject(line: number, reason: string): Observation[] {
    this.rejected = [line, reason];
    return [{ kind: "line", line, outcome: "reject", reason }];
  }

  summary(): object {
    return {
      kind: "summary",
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

main();
