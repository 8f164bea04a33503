#!/usr/bin/env python3
"""A client that misbehaves on purpose, as told by its first argument.

    hostile.py BEHAVIOUR [ARG]

Used by the tests beside it; every behaviour is one thing a real client has done.
"""

import json
import os
import signal
import subprocess
import sys
import time

#: The sleep argument of every grandchild this client leaves behind: the test's own token,
#: so its leak check finds its grandchildren and no other test's.
SLEEP = os.environ.get("HOSTILE_SLEEP", "987.654")

HELLO = {"kind": "hello", "protocol": 1, "client": {"name": "hostile"}, "profiles": ["reader"]}


def _answer_the_first_run(first_done: str) -> None:
    """The first run (the kit's preflight) reads its stream and exits; later runs go on."""
    if not os.path.exists(first_done):
        open(first_done, "w").close()
        sys.stdin.buffer.read()
        sys.exit(0)


def out(obj):
    sys.stdout.write(json.dumps(obj) + "\n")  # NaN stays NaN: json.dumps allows it
    sys.stdout.flush()


def flood(total_mib):
    chunk = b"x" * (1024 * 1024 - 1) + b"\n"
    for i in range(total_mib):
        os.write(1 if i % 2 == 0 else 2, chunk)


def main():
    # a machine so loaded that the client starts late (the suite's proof that no hostile
    # test's verdict depends on how fast a client starts: run it with HOSTILE_SLOW_START=3)
    time.sleep(float(os.environ.get("HOSTILE_SLOW_START", "0")))
    what = sys.argv[1]
    arg = sys.argv[2] if len(sys.argv) > 2 else None
    first = os.environ.get("HOSTILE_FIRST_RUN_ANSWERS")
    if first and not os.path.exists(first):
        # the kit's preflight (the first run given input): answer it correctly, misbehave
        # from the next run on (a hello-only probe gives no input and does not count)
        out(HELLO)
        line = sys.stdin.readline()
        if line:
            open(first, "w").close()
            answer(reject=False, hello=False, lines=[line])
        return
    if what == "hang-no-read":
        time.sleep(3600)
    elif what == "read-never-exit":
        sys.stdin.buffer.read()
        time.sleep(3600)
    elif what == "trickle":
        for _ in range(3600):
            os.write(1, b"{")
            time.sleep(1)
    elif what == "exit-at-once":
        sys.exit(0)
    elif what == "flood":
        sys.stdin.buffer.read()
        flood(int(arg or 1024))
        sys.exit(0)
    elif what == "signal":
        sys.stdin.buffer.read()
        os.kill(os.getpid(), getattr(signal, arg))
    elif what == "exit":
        sys.stdin.buffer.read()
        sys.exit(int(arg))
    elif what == "grandchild":
        # a grandchild that outlives us and keeps stdout/stderr open
        subprocess.Popen(["sleep", arg or SLEEP])
        sys.stdin.buffer.read()
        sys.exit(0)
    elif what == "report-huge-line":
        out(HELLO)
        sys.stdout.buffer.write(b"x" * (100 * 1024 * 1024) + b"\n")
        sys.stdout.flush()
        sys.stdin.buffer.read()
    elif what == "persistent-too-many":
        out(HELLO)
        for raw in sys.stdin:
            msg = json.loads(raw)
            if msg["kind"] == "case":
                for _ in range(2):
                    out({"kind": "summary", "id": msg["id"], "verdict": "accept"})
    elif what == "persistent-too-few":
        out(HELLO)
        for _raw in sys.stdin:
            pass  # never answers
    elif what == "persistent-late":
        out(HELLO)
        for raw in sys.stdin:
            msg = json.loads(raw)
            time.sleep(float(arg or 3))
            out({"kind": "summary", "id": msg.get("id"), "verdict": "accept"})
    elif what == "setsid-hang":
        # the first run (the kit's preflight) answers; every later one starts a grandchild
        # in a session of its own (out of the client's process group), then hangs
        token = sys.argv[2]
        _answer_the_first_run(sys.argv[3])
        subprocess.Popen(["setsid", "sleep", token], start_new_session=True)
        time.sleep(3600)
    elif what == "stubborn":
        # the first run (the kit's preflight) answers; every later one ignores SIGTERM,
        # SIGHUP, SIGINT and its stdin closing (children inherit the ignored signals), and
        # leaves a child in its own process group and a grandchild in a session of its own
        token = sys.argv[2]
        _answer_the_first_run(sys.argv[3])
        for signum in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
            signal.signal(signum, signal.SIG_IGN)
        subprocess.Popen(["sleep", token])
        subprocess.Popen(["setsid", "sleep", token], start_new_session=True)
        sys.stdin.buffer.read()
        time.sleep(3600)
    elif what == "answer-then-hang":
        # accepts its first N runs (argv[4]; counted in a log, argv[3]), then starts a
        # grandchild in a session of its own and hangs (a {stream} file after: unread)
        token, log, answers = sys.argv[2], sys.argv[3], int(sys.argv[4])
        with open(log, "a") as fh:
            fh.write("run\n")
        with open(log) as fh:
            runs = len(fh.readlines())
        if len(sys.argv) < 6:
            sys.stdin.buffer.read()
        if runs <= answers:
            sys.exit(0)
        subprocess.Popen(["setsid", "sleep", token], start_new_session=True)
        time.sleep(3600)
    elif what == "setsid-exit":
        # a grandchild in a session of its own that outlives the client (argument: its
        # sleep's unique argument, so a test finds its own grandchild and no other)
        token = sys.argv[2] if len(sys.argv) > 2 else SLEEP
        subprocess.Popen(["setsid", "sleep", token], start_new_session=True)
        sys.stdin.buffer.read()
        sys.exit(0)
    elif what == "slow":
        # takes ARG seconds over every case, counting its runs in a log (argv[3])
        with open(sys.argv[3], "a") as log:
            log.write("run\n")
        sys.stdin.buffer.read()
        time.sleep(float(arg))
        sys.exit(0)
    elif what == "hang-counted":
        # hangs on every case, counting its runs in a log (argv[2])
        with open(arg, "a") as log:
            log.write("run\n")
        time.sleep(3600)
    elif what == "swap-failures":
        # replaces the kit's failures folder (in its working folder) with a link to ARG,
        # then accepts everything (so a failing case is saved there: it must not be)
        folder = os.path.join(".stella-conform", "failures")
        if not os.path.islink(folder):
            os.makedirs(".stella-conform", exist_ok=True)
            if os.path.isdir(folder):
                os.rename(folder, folder + ".moved")
            os.symlink(arg, folder)
        sys.stdin.buffer.read()
        sys.exit(0)
    elif what == "record-fifo":
        os.mkfifo(arg)  # the {record} file: a FIFO nobody writes
        sys.stdin.buffer.read()
    elif what == "record-zero":
        os.symlink("/dev/zero", arg)  # the {record} file: endless zeros
        sys.stdin.buffer.read()
    elif what == "log-fifo":
        # a wrapper that replaces the fake stella's invocation log with a FIFO
        log = os.environ["STELLA_FAKE_LOG"]
        subprocess.run(["stella", "run", "--output-format", "stream-json", "x"], check=False)
        os.unlink(log)
        os.mkfifo(log)
    elif what == "report-poison":
        # follows the protocol, but every string is hostile: a lone surrogate, escape
        # sequences, a workflow command, HTML and a mention; NaN and Infinity as numbers
        poison = "\ud800\x1b]0;pwned\x07\x1b[2J<script>alert(1)</script> @octocat\n::error::x"
        out(HELLO)
        for n, _raw in enumerate(sys.stdin, 1):
            out({"kind": "line", "line": n, "outcome": "known", "type": "\x1b[2J\x9b31m"})
        sys.stderr.write(poison + "\n")
        summary = {"kind": "summary", "verdict": "reject", "rejected_line": 1,
                   "final_text": poison, "tool_calls": [{"cost": float("nan"),
                   "n": float("inf"), "name": poison}]}  # fmt: skip
        out(summary)
        sys.exit(1)
    elif what == "report-html":
        # a line that is not JSON, quoted back in the error: HTML, a link, a mention
        out(HELLO)
        sys.stdout.write("<img src=x onerror=alert(1)> [x](https://evil.invalid) @octocat\n")
        sys.stdout.write("\x1b[2J\x1b]0;pwned\x07\n::error::injected\n")
        sys.stdout.flush()
        sys.stdin.buffer.read()
        sys.exit(1)
    elif what == "report-after-summary":
        # a correct conversation, then ARG MiB of lines (forever without one) while the kit
        # waits for the exit; then it exits 0
        answer(reject=False)
        line = b'{"kind":"line","line":1,"outcome":"known"}' * 1000 + b"\n"
        lines = int(float(arg) * 1024 * 1024 / len(line)) + 1 if arg else None
        while lines is None or lines > 0:
            os.write(1, line)
            lines = None if lines is None else lines - 1
        sys.exit(0)
    elif what == "report-echo-event":
        # echoes a 4 MB event in every line observation
        pad = "x" * 4_000_000  # 4 MB: under the line cap, so only the total can stop it
        answer(reject=False, extra={"event": {"type": "text", "pad": pad}})
    elif what == "report-echo-empties":
        # echoes 3.8 MiB of empty objects in every line observation: few bytes, many objects
        pad = [{}] * 1_000_000  # "{}, " each: 3.8 MiB of JSON, a million dicts parsed
        answer(reject=False, extra={"event": {"type": "text", "pad": pad}})
    elif what == "report-deep-summary":
        # a 400 KB summary nested 900 deep, with items at every level
        deep = []
        for _ in range(900):
            deep = [*range(50), deep]
        answer(reject=True, summary={"tool_calls": [{"deep": deep}]})
        sys.exit(1)
    elif what == "report-big-preview":
        big = "p" * 4_000_000  # 4 MB: just under the kit's 4 MiB line cap
        answer(reject=True, summary={"preview": big})
        sys.exit(1)
    else:
        raise SystemExit(f"unknown behaviour {what}")


def answer(reject, extra=None, summary=None, hello=True, lines=()):
    """Follow the protocol: hello, one observation per line, a summary, the exit status."""
    if hello:
        out(HELLO)
    n = 0
    for n, _raw in enumerate([*lines, *sys.stdin], 1) if lines else enumerate(sys.stdin, 1):
        out({"kind": "line", "line": n, "outcome": "known", "type": "x", **(extra or {})})
    verdict = "reject" if reject else "accept"
    rejected = {"rejected_line": n} if reject else {}
    out({"kind": "summary", "verdict": verdict, **rejected, **(summary or {})})
    sys.stdout.flush()


if __name__ == "__main__":
    main()
