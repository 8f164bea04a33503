package stellaconform

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// What the runner lists for each way the kit can end (the kit's exit statuses:
// src/stella_conform/errors.py): only exit 0 and 1 with a report list checks.

var argv = []string{"stella-conform", "run", "--json", "REPORT", "--", "client"}

func ended(status int, output string) KitRun { return KitRun{Status: status, Output: output} }

func check(id, outcome string) Check { return Check{ID: id, Outcome: outcome, Message: id + " said"} }

func report(checks ...Check) *Report { return &Report{Format: ReportFormat, Checks: checks} }

func statuses(tests []Test) map[string]string {
	out := map[string]string{}
	for _, t := range tests {
		out[t.Name] = t.Status
	}
	return out
}

func same(t *testing.T, got []Test, want map[string]string) {
	t.Helper()
	have := statuses(got)
	if len(have) != len(want) || len(got) != len(want) {
		t.Fatalf("listed %v, want %v", have, want)
	}
	for name, status := range want {
		if have[name] != status {
			t.Fatalf("listed %v, want %v", have, want)
		}
	}
}

func TestEveryCheckListedOnExit0(t *testing.T) {
	warn := check("C", "warn")
	warn.Explanation = "C: WARN\nwhy"
	got := Plan(ended(0, ""), report(check("A", "pass"), check("B", "skip"), warn), argv)
	same(t, got, map[string]string{"A": "pass", "B": "skip", "C": "pass"})
	if got[1].Message != "B said" || got[2].Message != "C: WARN\nwhy" {
		t.Fatalf("messages: %q, %q", got[1].Message, got[2].Message)
	}
}

func TestAFailingCheckFailsWithItsExplanation(t *testing.T) {
	failing := check("A", "fail")
	failing.Explanation = "A: FAIL\nthe text"
	got := Plan(ended(1, ""), report(failing, check("B", "crash"), check("C", "error")), argv)
	same(t, got, map[string]string{"A": "fail", "B": "fail", "C": "fail"})
	if got[0].Message != "A: FAIL\nthe text" {
		t.Fatalf("message: %q", got[0].Message)
	}
}

func TestKnownFailuresAreSkippedAndOneThatNowPassesFails(t *testing.T) {
	reason, old := "upstream bug", "old"
	known := check("A", "fail")
	known.KnownFailure = &reason
	passing := check("B", "pass")
	passing.KnownFailure = &old
	r := report(known, passing)
	r.KnownFailuresNowPassing = []string{"B"}
	got := Plan(ended(1, ""), r, argv)
	same(t, got, map[string]string{"A": "todo", "B": "fail"})
	if !strings.Contains(got[1].Message, "now passes: remove it from the list") {
		t.Fatalf("message: %q", got[1].Message)
	}
}

func TestAnyOtherExitIsOneFailingTest(t *testing.T) {
	for status, words := range map[int]string{2: "exit 2: a setup error", 3: "exit 3: a bug", 143: "stopped (exit 143)"} {
		got := Plan(ended(status, "stella-conform: its words"), report(check("A", "pass")), argv)
		same(t, got, map[string]string{RunTest: "fail"})
		if !strings.Contains(got[0].Message, words) || !strings.Contains(got[0].Message, "its words") {
			t.Fatalf("exit %d: %q", status, got[0].Message)
		}
	}
}

func TestARunThatSaysNothingOrIsCutShortFails(t *testing.T) {
	same(t, Plan(ended(1, ""), report(check("A", "pass")), argv), map[string]string{"A": "pass", RunTest: "fail"})
	cut := report(check("A", "pass"))
	cut.Incomplete = "stopped by SIGTERM"
	same(t, Plan(ended(0, ""), cut, argv), map[string]string{"A": "pass", RunTest: "fail"})
	same(t, Plan(ended(0, ""), nil, argv), map[string]string{RunTest: "fail"})
	same(t, Plan(ended(0, ""), &Report{Format: "other"}, argv), map[string]string{RunTest: "fail"})
}

func TestAKitThatOutlivesTheTimeoutIsStopped(t *testing.T) {
	folder := t.TempDir()
	kit := filepath.Join(folder, "slow-kit")
	if err := os.WriteFile(kit, []byte("#!/bin/sh\nexec sleep 600\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	got := Grade(Options{Kit: []string{kit}, Client: []string{"client"}, Dir: folder, Timeout: time.Second})
	same(t, got, map[string]string{RunTest: "fail"})
	if !strings.Contains(got[0].Message, "did not finish in time and was stopped") {
		t.Fatalf("message: %q", got[0].Message)
	}
}
