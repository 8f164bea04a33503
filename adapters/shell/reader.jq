# A stella stream reader in jq, for exit-code mode. Run by jq_client.sh as
#   jq -nR -f reader.jq
# It reads raw lines one at a time (reduce over inputs: never the whole stream) and
# ends with an error (non-zero exit) when a correct client must reject the stream.

def blank: test("^[ \t\r]*$");
# Each line arrives marked by jq_client.sh: "1" when its bytes are UTF-8, "0" when not (jq's
# raw input repairs such bytes to U+FFFD, and jq 1.6 also mangles a character its 4 KiB
# read blocks split, so jq cannot tell). jq 1.6 reads NaN as null, so that is caught before
# parsing; see README.md for the limits this implies.
def suspicious: test("[:\\[,]\\s*-?(NaN|Infinity)\\s*[,}\\]]");
# jq 1.6 also reads number spellings JSON refuses (01, +1, .5, 1.): a line that may hold one
# is asked again with its strings emptied, so text like "a .5 mm" in a string is no number
def skeleton: gsub("\"([^\"\\\\]|\\\\.)*\""; "\"\"");
def not_a_number: "(^|[^0-9A-Za-z_.+-])(\\+|-?\\.[0-9]|-?0[0-9])|[0-9]\\.([^0-9]|$)";
def bad_number: test(not_a_number) and (skeleton | test(not_a_number));
def parse($utf8): if ($utf8 | not) or suspicious or bad_number then {err: "not JSON"} else (try {ok: fromjson} catch {err: .}) end;

def str: type == "string";
def num: type == "number";
def bool: type == "boolean";
def obj: type == "object";
def uint($max): type == "number" and . >= 0 and . == floor and . <= $max;
def u64: uint(18446744073709551615);
def u32: uint(4294967295);
def opt(f; k): (has(k) | not) or (.[k] | f);
def alias($field; $legacy): if has($field) then .[$field] else .[$legacy] end;

def fits:
  (opt(. == null or u64; "ts")) and
  if .type == "stage" then (.name | str) and (.scope | IN("turn", "run"))
  elif .type == "text" then alias("text"; "delta") | str
  elif .type == "text_delta" then alias("delta"; "text") | str
  elif .type == "reasoning" then .delta | str
  elif .type == "tool_start" then
    (.call | obj) and (.call.call_id | str) and (.call.name | str) and (.call | has("input"))
  elif .type == "tool_result" then
    (.call_id | str) and (.duration_ms | u64) and opt(bool; "speculated") and (.output | obj)
    and (((.output.ok | obj) and (.output.ok.content | str))
         or ((.output.error | obj) and (.output.error.message | str)))
  elif .type == "step_usage" then
    (.step | u64) and (.model | str) and (.input_tokens | u64) and (.output_tokens | u64)
    and (.cached_input_tokens | u64) and (.cost_usd | num) and (.duration_ms | u64)
    and (.retries | u32) and (.tool_calls | u64) and opt(str; "provider")
    and opt(. == null or u64; "reasoning_tokens") and opt(. == null or str; "output_text")
    and opt(bool; "complete")
  elif .type == "turn_complete" or .type == "run_complete" then (.model | str) and (.cost_usd | num)
  elif .type == "error" then (.message | str) and (.retryable | bool)
  elif .type == "budget_tick" then
    (.spent_usd | num) and (.mode | IN("off", "observed", "enforced"))
    and opt(. == null or num; "limit_usd") and opt(. == null or num; "session_spent_usd")
    and opt(. == null or num; "session_limit_usd")
    and opt(. == null or u64; "deadline_remaining_ms")
  elif .type == "file_change" then
    (.path | str) and (.kind | IN("read", "created", "modified", "deleted"))
    and opt(u32; "added") and opt(u32; "removed") and opt(. == null or str; "diff")
  else true end;

def known:
  (.type | str) and (.type | IN("stage", "text", "text_delta", "reasoning", "tool_start",
    "tool_result", "step_usage", "turn_complete", "run_complete", "error", "budget_tick",
    "file_change"))
  and ((.type == "stage" and (has("scope") | not)) | not);  # archived scope-less stage

reduce (inputs | {utf8: (.[0:1] == "1"), line: .[1:]}) as $in
  ({n: 0, pending: null, failed: null, unknown: 0};
  $in.line as $line
  | .n += 1
  | if .failed != null or ($line | blank) then .
    elif .pending != null then .failed = {line: .pending, reason: "corrupt line"}
    else ($line | parse($in.utf8)) as $p
      | if $p.err != null then .pending = .n
        elif ($p.ok | obj | not) then .failed = {line: .n, reason: "JSON but not an object"}
        elif ($p.ok | known | not) then .unknown += 1
        elif ($p.ok | fits) then .
        else .failed = {line: .n, reason: "\($p.ok.type) with a body that does not fit"}
        end
    end)
| if .failed != null then error("line \(.failed.line): \(.failed.reason)") else empty end
