//! The stella-conform kit's conformance checks as `cargo test` tests: one test per check,
//! named by its check id, failing with the kit's own failure text.
//!
//! A test target with `harness = false` calls [`main`]:
//!
//! ```no_run
//! // tests/conformance.rs
//! fn main() {
//!     stella_conform_runner::main(
//!         stella_conform_runner::Options::new(["target/debug/mycli"]).examples(5),
//!     );
//! }
//! ```
//!
//! It starts the kit (`stella-conform` on `PATH`, or [`Options::kit`]) once on the client,
//! reads its JSON report and prints the tests as libtest does (`test R6.torn-final-line
//! ... FAILED`, the failures, `test result:`), exiting 101 when one fails. The kit's exit
//! status is kept: a client the kit cannot grade (exit 2), a bug in the kit (3) or a
//! stopped run (128 + N) is one failing test named `stella-conform`, never a list of
//! passing ones; a skipped check is an ignored test, and so is a listed known failure.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::Value;

/// The one test that stands for the whole run when no check can be listed.
pub const RUN_TEST: &str = "stella-conform";
/// The report format this crate reads.
pub const REPORT_FORMAT: &str = "stella-conform/report/1";
/// How long the whole run may take when [`Options::timeout`] is not set.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(900);
/// How long a stopped kit has to write its report and end before it is killed.
const GRACE: Duration = Duration::from_secs(30);
/// Bytes of the kit's own output kept to explain a run it could not grade.
const KEPT: usize = 64 * 1024;

/// How to start the kit on a client.
#[derive(Clone, Debug, Default)]
pub struct Options {
    client: Vec<String>,
    kit: Vec<String>,
    examples: Option<u32>,
    mode: Option<String>,
    args: Vec<String>,
    dir: Option<PathBuf>,
    timeout: Option<Duration>,
}

impl Options {
    /// Grade this client command (`STELLA_CONFORM_CLIENT`, words split at whitespace,
    /// overrides it).
    pub fn new<I: IntoIterator<Item = S>, S: Into<String>>(client: I) -> Self {
        Options {
            client: client.into_iter().map(Into::into).collect(),
            ..Options::default()
        }
    }
    /// The kit's command (default `stella-conform` on `PATH`; `STELLA_CONFORM_KIT`
    /// overrides it).
    pub fn kit<I: IntoIterator<Item = S>, S: Into<String>>(mut self, kit: I) -> Self {
        self.kit = kit.into_iter().map(Into::into).collect();
        self
    }
    /// Generated cases per check (`--examples`).
    pub fn examples(mut self, n: u32) -> Self {
        self.examples = Some(n);
        self
    }
    /// `auto` (the kit's default), `exit`, `report` or `persistent`.
    pub fn mode(mut self, mode: &str) -> Self {
        self.mode = Some(mode.to_string());
        self
    }
    /// More `stella-conform run` options, e.g. `["--profile", "dashboard"]`.
    pub fn args<I: IntoIterator<Item = S>, S: Into<String>>(mut self, args: I) -> Self {
        self.args.extend(args.into_iter().map(Into::into));
        self
    }
    /// Where the kit runs and saves failing cases (default: the crate's folder).
    pub fn dir<P: AsRef<Path>>(mut self, dir: P) -> Self {
        self.dir = Some(dir.as_ref().to_path_buf());
        self
    }
    /// How long the whole run may take before the kit is stopped.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }
}

/// What a planned test does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    Pass,
    Fail,
    Skip,
    /// A listed known failure.
    Todo,
}

/// One planned test and what it says (a failure's whole text, a skip's reason, a warning).
#[derive(Clone, Debug)]
pub struct Test {
    pub name: String,
    pub status: Status,
    pub message: String,
}

/// How the kit ended.
#[derive(Clone, Debug, Default)]
pub struct KitRun {
    /// The exit status (128 + N when signal N ended it); `None` when it could not start.
    pub status: Option<i32>,
    /// The end of what it printed.
    pub output: String,
    /// Why it could not be started.
    pub start_error: Option<String>,
    /// It was stopped for taking longer than the timeout.
    pub timed_out: bool,
}

fn words(text: &str) -> Vec<String> {
    text.split_whitespace().map(String::from).collect()
}

/// The kit's command line: `KIT run --json REPORT --color never [--examples N]
/// [--mode M] ARGS... -- CLIENT...`, or why there is none.
pub fn kit_argv(options: &Options, report: &str) -> Result<Vec<String>, String> {
    let mut kit = options.kit.clone();
    if let Ok(text) = std::env::var("STELLA_CONFORM_KIT") {
        if !words(&text).is_empty() {
            kit = words(&text);
        }
    }
    if kit.is_empty() {
        kit = vec!["stella-conform".to_string()];
    }
    let mut client = options.client.clone();
    if let Ok(text) = std::env::var("STELLA_CONFORM_CLIENT") {
        if !words(&text).is_empty() {
            client = words(&text);
        }
    }
    if client.is_empty() {
        return Err("name the client to grade (Options::new, or STELLA_CONFORM_CLIENT)".into());
    }
    let mut argv = kit;
    argv.extend(
        ["run", "--json", report, "--color", "never"]
            .iter()
            .map(|s| s.to_string()),
    );
    if let Some(n) = options.examples {
        argv.extend(["--examples".to_string(), n.to_string()]);
    }
    if let Some(mode) = &options.mode {
        argv.extend(["--mode".to_string(), mode.clone()]);
    }
    argv.extend(options.args.iter().cloned());
    argv.push("--".to_string());
    argv.extend(client);
    Ok(argv)
}

fn keep_tail(
    buffer: &Arc<Mutex<Vec<u8>>>,
    mut source: impl Read + Send + 'static,
) -> thread::JoinHandle<()> {
    let buffer = Arc::clone(buffer);
    thread::spawn(move || {
        let mut chunk = [0u8; 8192];
        while let Ok(n) = source.read(&mut chunk) {
            if n == 0 {
                break;
            }
            let mut kept = buffer.lock().unwrap();
            kept.extend_from_slice(&chunk[..n]);
            if kept.len() > KEPT {
                let cut = kept.len() - KEPT;
                kept.drain(..cut);
            }
        }
    })
}

#[cfg(unix)]
fn signal_status(status: &std::process::ExitStatus) -> Option<i32> {
    use std::os::unix::process::ExitStatusExt;
    status.signal().map(|s| 128 + s)
}

#[cfg(not(unix))]
fn signal_status(_status: &std::process::ExitStatus) -> Option<i32> {
    None
}

/// Run the kit to its end, or stop it (SIGTERM, then kill after a grace) at `timeout`.
fn run_kit(argv: &[String], dir: Option<&Path>, timeout: Duration) -> KitRun {
    let mut command = Command::new(&argv[0]);
    command
        .args(&argv[1..])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if let Some(dir) = dir {
        command.current_dir(dir);
    }
    let mut child = match command.spawn() {
        Ok(child) => child,
        Err(error) => {
            let why = if error.kind() == std::io::ErrorKind::NotFound {
                "not found".to_string()
            } else {
                error.to_string()
            };
            return KitRun {
                start_error: Some(why),
                ..KitRun::default()
            };
        }
    };
    let output = Arc::new(Mutex::new(Vec::new()));
    let readers = [
        keep_tail(&output, child.stdout.take().expect("piped stdout")),
        keep_tail(&output, child.stderr.take().expect("piped stderr")),
    ];
    let started = Instant::now();
    let mut timed_out = false;
    let mut stopped_at: Option<Instant> = None;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) => {}
            Err(_) => break None,
        }
        if !timed_out && started.elapsed() >= timeout {
            timed_out = true;
            stopped_at = Some(Instant::now());
            // the kit stops its clients and writes its report on SIGTERM
            let _ = Command::new("kill")
                .arg("-TERM")
                .arg(child.id().to_string())
                .status();
        }
        if let Some(at) = stopped_at {
            if at.elapsed() >= GRACE {
                let _ = child.kill();
                stopped_at = None;
            }
        }
        thread::sleep(Duration::from_millis(50));
    };
    for reader in readers {
        let _ = reader.join();
    }
    let output = String::from_utf8_lossy(&output.lock().unwrap()).into_owned();
    let code = status.and_then(|s| s.code().or_else(|| signal_status(&s)));
    KitRun {
        status: code.or(Some(-1)),
        output,
        start_error: None,
        timed_out,
    }
}

fn run_failure(message: String) -> Vec<Test> {
    vec![Test {
        name: RUN_TEST.to_string(),
        status: Status::Fail,
        message,
    }]
}

fn last_lines(text: &str, count: usize) -> String {
    let lines: Vec<&str> = text.trim_end().lines().collect();
    lines[lines.len().saturating_sub(count)..].join("\n")
}

fn text(value: &Value, key: &str) -> String {
    match value.get(key) {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Null) | None => String::new(),
        Some(other) => other.to_string(),
    }
}

/// Turn how the kit ended and its report (`None` when it wrote none) into tests.
pub fn plan(run: &KitRun, report: Option<&Value>, argv: &[String]) -> Vec<Test> {
    let command = argv.join(" ");
    let said = last_lines(&run.output, 40);
    if let Some(why) = &run.start_error {
        if why == "not found" {
            return run_failure(format!(
                "the kit was not found: {} (install stella-conform, or name it: Options::kit or STELLA_CONFORM_KIT)",
                argv[0]
            ));
        }
        return run_failure(format!(
            "the kit could not be started ({}): {}",
            command, why
        ));
    }
    let status = run.status.unwrap_or(-1);
    if run.timed_out {
        return run_failure(format!(
            "the kit did not finish in time and was stopped (exit {}): {}\n{}",
            status, command, said
        ));
    }
    match status {
        0 | 1 => {}
        2 => {
            return run_failure(format!(
                "the kit could not grade the client (exit 2: a setup error, no check was graded): {}\n{}",
                command, said
            ))
        }
        3 => {
            return run_failure(format!(
                "the kit failed with an internal error (exit 3: a bug in stella-conform): {}\n{}",
                command, said
            ))
        }
        other => return run_failure(format!("the kit was stopped (exit {}): {}\n{}", other, command, said)),
    }
    let report = match report {
        Some(r)
            if r.get("format").and_then(Value::as_str) == Some(REPORT_FORMAT)
                && r.get("checks").map_or(false, Value::is_array) =>
        {
            r
        }
        _ => {
            return run_failure(format!(
                "the kit ended (exit {}) without a {} JSON report: {}\n{}",
                status, REPORT_FORMAT, command, said
            ))
        }
    };
    let now_passing: Vec<String> = report
        .get("known_failures_now_passing")
        .and_then(Value::as_array)
        .map(|ids| {
            ids.iter()
                .filter_map(Value::as_str)
                .map(String::from)
                .collect()
        })
        .unwrap_or_default();
    let mut tests: Vec<Test> = report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|check| check_test(check, &now_passing))
        .collect();
    let failing = tests.iter().any(|t| t.status == Status::Fail);
    let incomplete = text(report, "incomplete");
    if !incomplete.is_empty() {
        tests.push(Test {
            name: RUN_TEST.into(),
            status: Status::Fail,
            message: format!("the run is incomplete: {}", incomplete),
        });
    } else if status == 1 && !failing {
        let error = text(report, "error");
        let why = if error.is_empty() { said } else { error };
        tests.push(Test {
            name: RUN_TEST.into(),
            status: Status::Fail,
            message: format!(
                "the kit exited 1 (a failing run) with no failing check: {}",
                why
            ),
        });
    }
    tests
}

fn check_test(check: &Value, now_passing: &[String]) -> Test {
    let name = text(check, "id");
    let outcome = text(check, "outcome");
    let message = text(check, "message");
    let known = text(check, "known_failure");
    let mut explanation = text(check, "explanation");
    if explanation.is_empty() {
        explanation = format!("{}: {}\n{}", name, outcome.to_uppercase(), message);
    }
    let (status, said) = if now_passing.contains(&name) {
        let said = format!(
            "{} is listed as a known failure ({}) but now passes: remove it from the list",
            name, known
        );
        (Status::Fail, said)
    } else {
        match outcome.as_str() {
            "skip" => (Status::Skip, message),
            "fail" | "crash" | "error" if !known.is_empty() => {
                (Status::Todo, format!("known failure: {}", known))
            }
            "fail" | "crash" | "error" => (Status::Fail, explanation),
            "warn" => (Status::Pass, explanation),
            _ => (Status::Pass, String::new()),
        }
    };
    Test {
        name,
        status,
        message: said,
    }
}

/// Grade the client with the kit and plan one test per check.
pub fn grade(options: &Options) -> Vec<Test> {
    let dir = options.dir.clone().unwrap_or_else(|| PathBuf::from("."));
    let home = dir.join(".stella-conform");
    if let Err(error) = std::fs::create_dir_all(&home) {
        return run_failure(format!(
            "cannot make the folder for the report {}: {}",
            home.display(),
            error
        ));
    }
    let report_path = home.join("cargo-test-report.json");
    let _ = std::fs::remove_file(&report_path); // a report left by an earlier run is not this run's
    let mut argv = match kit_argv(options, &report_path.to_string_lossy()) {
        Ok(argv) => argv,
        Err(why) => return run_failure(why),
    };
    let run = run_kit(
        &argv,
        options.dir.as_deref(),
        options.timeout.unwrap_or(DEFAULT_TIMEOUT),
    );
    let report: Option<Value> = std::fs::read(&report_path)
        .ok()
        .and_then(|bytes| serde_json::from_slice(&bytes).ok());
    for word in argv.iter_mut() {
        if *word == report_path.to_string_lossy() {
            *word = "REPORT".to_string();
        }
    }
    plan(&run, report.as_ref(), &argv)
}

/// What `cargo test -- ARGS` asks of a test harness, as far as this one honours it.
#[derive(Debug, Default)]
struct Filter {
    names: Vec<String>,
    skip: Vec<String>,
    exact: bool,
    list: bool,
}

impl Filter {
    fn from_args(args: impl Iterator<Item = String>) -> Filter {
        let mut filter = Filter::default();
        let mut args = args.peekable();
        while let Some(arg) = args.next() {
            match arg.as_str() {
                "--exact" => filter.exact = true,
                "--list" => filter.list = true,
                "--skip" => filter.skip.extend(args.next()),
                // options of libtest's that take a value, and those that change nothing here
                "--test-threads" | "--format" | "--color" | "-Z" | "--logfile"
                | "--report-time" => {
                    let _ = args.next();
                }
                other if other.starts_with('-') => {}
                other => filter.names.push(other.to_string()),
            }
        }
        filter
    }

    fn keeps(&self, name: &str) -> bool {
        let matches = |pattern: &String| {
            if self.exact {
                name == pattern
            } else {
                name.contains(pattern.as_str())
            }
        };
        (self.names.is_empty() || self.names.iter().any(matches))
            && !self.skip.iter().any(|s| name.contains(s.as_str()))
    }
}

/// Grade the client, print the tests as libtest does, and exit: 0 when none failed,
/// 101 (libtest's status) when one did. Honours `cargo test -- NAME` (a substring, or
/// the whole name with `--exact`), `--skip NAME` and `--list`.
pub fn main(options: Options) -> ! {
    let filter = Filter::from_args(std::env::args().skip(1));
    let started = Instant::now();
    let all = grade(&options);
    let total = all.len();
    let tests: Vec<Test> = all
        .into_iter()
        .filter(|t| t.name == RUN_TEST || filter.keeps(&t.name))
        .collect();
    if filter.list {
        for test in &tests {
            println!("{}: test", test.name);
        }
        println!("\n{} tests, 0 benchmarks", tests.len());
        std::process::exit(0);
    }
    let filtered_out = total - tests.len();
    println!(
        "\nrunning {} test{}",
        tests.len(),
        if tests.len() == 1 { "" } else { "s" }
    );
    let (mut passed, mut failed, mut ignored) = (0, 0, 0);
    for test in &tests {
        match test.status {
            Status::Pass => {
                passed += 1;
                println!("test {} ... ok", test.name);
            }
            Status::Fail => {
                failed += 1;
                println!("test {} ... FAILED", test.name);
            }
            Status::Skip | Status::Todo => {
                ignored += 1;
                println!(
                    "test {} ... ignored, {}",
                    test.name,
                    test.message.lines().next().unwrap_or("")
                );
            }
        }
    }
    let failures: Vec<&Test> = tests.iter().filter(|t| t.status == Status::Fail).collect();
    let warnings: Vec<&Test> = tests
        .iter()
        .filter(|t| t.status == Status::Pass && !t.message.is_empty())
        .collect();
    if !warnings.is_empty() {
        println!("\nwarnings (SHOULD checks):\n");
        for test in &warnings {
            println!("---- {} ----\n{}\n", test.name, test.message);
        }
    }
    if !failures.is_empty() {
        println!("\nfailures:\n");
        for test in &failures {
            println!("---- {} stdout ----\n{}\n", test.name, test.message);
        }
        println!("\nfailures:");
        for test in &failures {
            println!("    {}", test.name);
        }
    }
    println!(
        "\ntest result: {}. {} passed; {} failed; {} ignored; 0 measured; {} filtered out; finished in {:.2}s\n",
        if failed > 0 { "FAILED" } else { "ok" },
        passed,
        failed,
        ignored,
        filtered_out,
        started.elapsed().as_secs_f64()
    );
    std::process::exit(if failed > 0 { 101 } else { 0 });
}
