// Package stellaconform runs the stella-conform kit's conformance checks as Go subtests:
// one subtest per check, named by its check id, failing with the kit's own failure text.
//
//	func TestConformance(t *testing.T) {
//		stellaconform.Run(t, stellaconform.Options{Client: []string{"./mycli"}, Examples: 5})
//	}
//
// Run starts the kit (stella-conform on PATH, or Options.Kit) once on the client, reads
// its JSON report and lists the checks. The kit's exit status is kept: a client the kit
// cannot grade (exit 2), a bug in the kit (3) or a stopped run (128 + N) is one failing
// subtest named "stella-conform", never a list of passing ones; a skipped check is a
// skipped subtest, a listed known failure a skipped one that says so.
package stellaconform

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// RunTest names the one subtest that stands for the whole run when no check can be listed.
const RunTest = "stella-conform"

// ReportFormat is the report format this package reads.
const ReportFormat = "stella-conform/report/1"

// DefaultTimeout bounds the whole run when Options.Timeout is zero.
const DefaultTimeout = 15 * time.Minute

// grace is how long a stopped kit has to write its report and end before it is killed.
const grace = 30 * time.Second

// kept is how many bytes of the kit's own output are kept to explain a run it could not grade.
const kept = 64 * 1024

// Options says how to start the kit on a client.
type Options struct {
	// Client is the client's command (STELLA_CONFORM_CLIENT, words split at whitespace,
	// overrides it).
	Client []string
	// Kit is the kit's command (default "stella-conform" on PATH; STELLA_CONFORM_KIT
	// overrides it).
	Kit []string
	// Examples is the generated cases per check (0: the kit's default; "--examples", "0"
	// in Args grades fixtures only).
	Examples int
	// Mode is auto (the kit's default), exit, report or persistent.
	Mode string
	// Args are more "stella-conform run" options, e.g. {"--profile", "dashboard"}.
	Args []string
	// Dir is where the kit runs and saves failing cases (default: the test's folder).
	Dir string
	// Timeout bounds the whole run (default DefaultTimeout); the kit is then stopped.
	Timeout time.Duration
}

// Test is one planned test: Status is pass, fail, skip or todo (a listed known failure).
type Test struct {
	Name    string
	Status  string
	Message string
}

// Check is a check of the kit's JSON report, as far as a runner reads it.
type Check struct {
	ID           string  `json:"id"`
	Outcome      string  `json:"outcome"`
	Message      string  `json:"message"`
	KnownFailure *string `json:"known_failure"`
	Explanation  string  `json:"explanation"`
}

// Report is the kit's JSON report (schemas/report.schema.json), as far as a runner reads it.
type Report struct {
	Format                  string      `json:"format"`
	ExitCode                int         `json:"exit_code"`
	Checks                  []Check     `json:"checks"`
	KnownFailuresNowPassing []string    `json:"known_failures_now_passing"`
	Incomplete              interface{} `json:"incomplete"`
	Error                   string      `json:"error"`
}

// KitRun is how the kit ended: its exit status, what it printed (the end of it), whether
// it could not be started, whether it was stopped for taking too long.
type KitRun struct {
	Status   int
	Output   string
	StartErr error
	TimedOut bool
}

// Run grades the client with the kit and runs one subtest of t per check.
func Run(t *testing.T, opts Options) {
	t.Helper()
	for _, planned := range Grade(opts) {
		planned := planned
		t.Run(planned.Name, func(t *testing.T) {
			switch planned.Status {
			case "skip":
				t.Skip(planned.Message)
			case "todo":
				t.Skip(planned.Message)
			case "fail":
				t.Error("\n" + planned.Message)
			default:
				if planned.Message != "" {
					t.Log("\n" + planned.Message)
				}
			}
		})
	}
}

// Grade runs the kit on the client and plans one test per check.
func Grade(opts Options) []Test {
	argv, err := KitArgv(opts, "REPORT")
	if err != nil {
		return runFailure(err.Error())
	}
	// the report is kept beside the failing cases the kit saves (.stella-conform in the
	// folder it runs in), where the last run's report can be read, and not in the
	// system's temporary folder: a file the test read that was written moments ago keeps
	// go test from caching the result, which would stand for a client changed since
	home := filepath.Join(opts.Dir, ".stella-conform")
	if err := os.MkdirAll(home, 0o755); err != nil {
		return runFailure("cannot make the folder for the report: " + err.Error())
	}
	reportPath := filepath.Join(home, "go-test-report.json")
	_ = os.Remove(reportPath) // a report left by an earlier run is not this run's
	for i, word := range argv {
		if word == "REPORT" {
			argv[i] = reportPath
		}
	}
	timeout := opts.Timeout
	if timeout == 0 {
		timeout = DefaultTimeout
	}
	run := runKit(argv, opts.Dir, timeout)
	var report *Report
	if data, err := os.ReadFile(reportPath); err == nil {
		var parsed Report
		if json.Unmarshal(data, &parsed) == nil {
			report = &parsed
		}
	}
	for i, word := range argv {
		if word == reportPath {
			argv[i] = "REPORT"
		}
	}
	return Plan(run, report, argv)
}

// KitArgv is the kit's command line: KIT run --json REPORT --color never [--examples N]
// [--mode M] ARGS... -- CLIENT...
func KitArgv(opts Options, reportPath string) ([]string, error) {
	kit := opts.Kit
	if words := strings.Fields(os.Getenv("STELLA_CONFORM_KIT")); len(words) > 0 {
		kit = words
	}
	if len(kit) == 0 {
		kit = []string{"stella-conform"}
	}
	client := opts.Client
	if words := strings.Fields(os.Getenv("STELLA_CONFORM_CLIENT")); len(words) > 0 {
		client = words
	}
	if len(client) == 0 {
		return nil, errors.New("name the client to grade (Options.Client, or STELLA_CONFORM_CLIENT)")
	}
	argv := append(append([]string{}, kit...), "run", "--json", reportPath, "--color", "never")
	if opts.Examples > 0 {
		argv = append(argv, "--examples", fmt.Sprint(opts.Examples))
	}
	if opts.Mode != "" {
		argv = append(argv, "--mode", opts.Mode)
	}
	argv = append(argv, opts.Args...)
	argv = append(argv, "--")
	return append(argv, client...), nil
}

// tail keeps the last bytes written to it.
type tail struct{ data []byte }

func (w *tail) Write(p []byte) (int, error) {
	w.data = append(w.data, p...)
	if len(w.data) > kept {
		w.data = append([]byte{}, w.data[len(w.data)-kept:]...)
	}
	return len(p), nil
}

func runKit(argv []string, dir string, timeout time.Duration) KitRun {
	out := &tail{}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Stdout = out
	cmd.Stderr = out
	if err := cmd.Start(); err != nil {
		return KitRun{Status: -1, StartErr: err}
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	timedOut := false
	var err error
	select {
	case err = <-done:
	case <-time.After(timeout):
		timedOut = true
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case err = <-done:
		case <-time.After(grace):
			_ = cmd.Process.Kill()
			err = <-done
		}
	}
	return KitRun{Status: exitStatus(cmd, err), Output: string(out.data), TimedOut: timedOut}
}

func exitStatus(cmd *exec.Cmd, err error) int {
	if err == nil {
		return 0
	}
	if status, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && status.Signaled() {
		return 128 + int(status.Signal())
	}
	return cmd.ProcessState.ExitCode()
}

func runFailure(message string) []Test {
	return []Test{{Name: RunTest, Status: "fail", Message: message}}
}

func lastLines(text string, count int) string {
	lines := strings.Split(strings.TrimRight(text, " \t\r\n"), "\n")
	if len(lines) > count {
		lines = lines[len(lines)-count:]
	}
	return strings.Join(lines, "\n")
}

// Plan turns how the kit ended and its report (nil when it wrote none) into tests.
func Plan(run KitRun, report *Report, argv []string) []Test {
	command := strings.Join(argv, " ")
	said := lastLines(run.Output, 40)
	switch {
	case run.StartErr != nil && errors.Is(run.StartErr, exec.ErrNotFound):
		return runFailure(fmt.Sprintf("the kit was not found: %s (install stella-conform, or name it: Options.Kit or STELLA_CONFORM_KIT)", argv[0]))
	case run.StartErr != nil && errors.Is(run.StartErr, os.ErrNotExist):
		return runFailure(fmt.Sprintf("the kit was not found: %s (install stella-conform, or name it: Options.Kit or STELLA_CONFORM_KIT)", argv[0]))
	case run.StartErr != nil:
		return runFailure(fmt.Sprintf("the kit could not be started (%s): %v", command, run.StartErr))
	case run.TimedOut:
		return runFailure(fmt.Sprintf("the kit did not finish in time and was stopped (exit %d): %s\n%s", run.Status, command, said))
	case run.Status == 2:
		return runFailure(fmt.Sprintf("the kit could not grade the client (exit 2: a setup error, no check was graded): %s\n%s", command, said))
	case run.Status == 3:
		return runFailure(fmt.Sprintf("the kit failed with an internal error (exit 3: a bug in stella-conform): %s\n%s", command, said))
	case run.Status != 0 && run.Status != 1:
		return runFailure(fmt.Sprintf("the kit was stopped (exit %d): %s\n%s", run.Status, command, said))
	case report == nil || report.Format != ReportFormat:
		return runFailure(fmt.Sprintf("the kit ended (exit %d) without a %s JSON report: %s\n%s", run.Status, ReportFormat, command, said))
	}
	nowPassing := map[string]bool{}
	for _, id := range report.KnownFailuresNowPassing {
		nowPassing[id] = true
	}
	tests := make([]Test, 0, len(report.Checks)+1)
	failing := false
	for _, check := range report.Checks {
		planned := checkTest(check, nowPassing[check.ID])
		failing = failing || planned.Status == "fail"
		tests = append(tests, planned)
	}
	if incomplete := fmt.Sprint(report.Incomplete); report.Incomplete != nil && incomplete != "" {
		tests = append(tests, Test{Name: RunTest, Status: "fail", Message: "the run is incomplete: " + incomplete})
	} else if run.Status == 1 && !failing {
		why := report.Error
		if why == "" {
			why = said
		}
		tests = append(tests, Test{Name: RunTest, Status: "fail", Message: "the kit exited 1 (a failing run) with no failing check: " + why})
	}
	return tests
}

func checkTest(check Check, nowPassing bool) Test {
	text := check.Explanation
	if text == "" {
		text = check.ID + ": " + strings.ToUpper(check.Outcome) + "\n" + check.Message
	}
	known := ""
	if check.KnownFailure != nil {
		known = *check.KnownFailure
	}
	switch {
	case nowPassing:
		return Test{check.ID, "fail", fmt.Sprintf("%s is listed as a known failure (%s) but now passes: remove it from the list", check.ID, known)}
	case check.Outcome == "skip":
		return Test{check.ID, "skip", check.Message}
	case check.Outcome == "fail" || check.Outcome == "crash" || check.Outcome == "error":
		if check.KnownFailure != nil {
			return Test{check.ID, "todo", "known failure: " + known}
		}
		return Test{check.ID, "fail", text}
	case check.Outcome == "warn":
		return Test{check.ID, "pass", text}
	}
	return Test{check.ID, "pass", ""}
}
