//! What the runner lists for each way the kit can end (the kit's exit statuses:
//! src/stella_conform/errors.py): only exit 0 and 1 with a report list checks.

use std::collections::BTreeMap;
use std::time::Duration;

use serde_json::{json, Value};
use stella_conform_runner::{grade, plan, KitRun, Options, Status, Test, RUN_TEST};

fn argv() -> Vec<String> {
    ["stella-conform", "run", "--json", "REPORT", "--", "client"]
        .iter()
        .map(|s| s.to_string())
        .collect()
}

fn ended(status: i32, output: &str) -> KitRun {
    KitRun {
        status: Some(status),
        output: output.to_string(),
        ..KitRun::default()
    }
}

fn check(id: &str, outcome: &str) -> Value {
    json!({"id": id, "outcome": outcome, "message": format!("{} said", id), "known_failure": null})
}

fn report(checks: Vec<Value>) -> Value {
    json!({"format": "stella-conform/report/1", "checks": checks, "known_failures_now_passing": []})
}

fn statuses(tests: &[Test]) -> BTreeMap<String, Status> {
    tests.iter().map(|t| (t.name.clone(), t.status)).collect()
}

fn want(pairs: &[(&str, Status)]) -> BTreeMap<String, Status> {
    pairs.iter().map(|(n, s)| (n.to_string(), *s)).collect()
}

#[test]
fn every_check_is_listed_on_exit_0() {
    let mut warn = check("C", "warn");
    warn["explanation"] = json!("C: WARN\nwhy");
    let got = plan(
        &ended(0, ""),
        Some(&report(vec![check("A", "pass"), check("B", "skip"), warn])),
        &argv(),
    );
    assert_eq!(
        statuses(&got),
        want(&[
            ("A", Status::Pass),
            ("B", Status::Skip),
            ("C", Status::Pass)
        ])
    );
    assert_eq!(got[1].message, "B said");
    assert_eq!(got[2].message, "C: WARN\nwhy");
}

#[test]
fn a_failing_check_fails_with_its_explanation() {
    let mut failing = check("A", "fail");
    failing["explanation"] = json!("A: FAIL\nthe text");
    let checks = vec![failing, check("B", "crash"), check("C", "error")];
    let got = plan(&ended(1, ""), Some(&report(checks)), &argv());
    assert_eq!(
        statuses(&got),
        want(&[
            ("A", Status::Fail),
            ("B", Status::Fail),
            ("C", Status::Fail)
        ])
    );
    assert_eq!(got[0].message, "A: FAIL\nthe text");
}

#[test]
fn a_known_failure_is_ignored_and_one_that_now_passes_fails() {
    let mut known = check("A", "fail");
    known["known_failure"] = json!("upstream bug");
    let mut passing = check("B", "pass");
    passing["known_failure"] = json!("old");
    let mut r = report(vec![known, passing]);
    r["known_failures_now_passing"] = json!(["B"]);
    let got = plan(&ended(1, ""), Some(&r), &argv());
    assert_eq!(
        statuses(&got),
        want(&[("A", Status::Todo), ("B", Status::Fail)])
    );
    assert!(got[1]
        .message
        .contains("now passes: remove it from the list"));
}

#[test]
fn any_other_exit_is_one_failing_test() {
    for (status, words) in [
        (2, "exit 2: a setup error"),
        (3, "exit 3: a bug"),
        (143, "stopped (exit 143)"),
    ] {
        let got = plan(
            &ended(status, "stella-conform: its words"),
            Some(&report(vec![check("A", "pass")])),
            &argv(),
        );
        assert_eq!(statuses(&got), want(&[(RUN_TEST, Status::Fail)]));
        assert!(
            got[0].message.contains(words) && got[0].message.contains("its words"),
            "{}",
            got[0].message
        );
    }
}

#[test]
fn a_run_that_says_nothing_or_is_cut_short_fails() {
    let passing = report(vec![check("A", "pass")]);
    let got = plan(&ended(1, ""), Some(&passing), &argv());
    assert_eq!(
        statuses(&got),
        want(&[("A", Status::Pass), (RUN_TEST, Status::Fail)])
    );
    let mut cut = report(vec![check("A", "pass")]);
    cut["incomplete"] = json!("stopped by SIGTERM");
    let got = plan(&ended(0, ""), Some(&cut), &argv());
    assert_eq!(
        statuses(&got),
        want(&[("A", Status::Pass), (RUN_TEST, Status::Fail)])
    );
    assert_eq!(
        statuses(&plan(&ended(0, ""), None, &argv())),
        want(&[(RUN_TEST, Status::Fail)])
    );
    let other = json!({"format": "other", "checks": []});
    assert_eq!(
        statuses(&plan(&ended(0, ""), Some(&other), &argv())),
        want(&[(RUN_TEST, Status::Fail)])
    );
}

#[cfg(unix)]
#[test]
fn a_kit_that_outlives_the_timeout_is_stopped() {
    use std::os::unix::fs::PermissionsExt;
    let folder = std::env::temp_dir().join(format!("stella-runner-test-{}", std::process::id()));
    std::fs::create_dir_all(&folder).unwrap();
    let kit = folder.join("slow-kit");
    std::fs::write(&kit, "#!/bin/sh\nexec sleep 600\n").unwrap();
    std::fs::set_permissions(&kit, std::fs::Permissions::from_mode(0o755)).unwrap();
    let options = Options::new(["client"])
        .kit([kit.to_string_lossy().into_owned()])
        .dir(&folder)
        .timeout(Duration::from_secs(1));
    let got = grade(&options);
    let _ = std::fs::remove_dir_all(&folder);
    assert_eq!(statuses(&got), want(&[(RUN_TEST, Status::Fail)]));
    assert!(
        got[0]
            .message
            .contains("did not finish in time and was stopped"),
        "{}",
        got[0].message
    );
}
