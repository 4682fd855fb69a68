//! The wild-paste collection: our own fixtures that reproduce the shape of
//! real tool output found in public issue threads, mailing lists and blogs
//! (cut rows, quoted mail, HTML archives, lost indentation, elisions, real
//! faults). Each `tests/fixtures/wild/<id>.txt` has a `<id>.toml` beside it
//! with its provenance and what a senior fabric engineer would conclude:
//!
//! - `must_fire`: rule ids that must appear at warning or worse;
//! - `must_not_warn`: rule ids that must not appear at warning or worse;
//! - `must_not_report`: rule ids that must not appear at all (the `info`
//!   rules: IN002 says lines of tool output went unread);
//! - `max_severity`: no finding may be worse than this;
//! - `kinds`: section kinds that must be recognised;
//! - `hosts`: the hosts the sections name, every one (sorted, once each);
//! - `exit_ok`: `read` must not fail with an input error (default true);
//! - `pending`: why the fixture fails today. A pending fixture must *still*
//!   fail, so fixing the code forces removing the mark.
//!
//! Every fixture must also account for every input line. The test prints one
//! line per fixture and fails listing every problem.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use fabricscope::rules::registry::RULES;
use fabricscope::{analyze, read, AnalyzeOptions, ReadOptions, Severity};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Kind names announced for formats being added in parallel; accepted in
/// `kinds` before the registry knows them.
const ANNOUNCED_KINDS: [&str; 3] = ["dcgmi_diag", "dcgmi_health", "mlxlink"];

fn wild_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/wild")
}

/// One value of the small TOML subset the expectation files use.
#[derive(Debug, Clone, PartialEq)]
enum Value {
    Str(String),
    List(Vec<String>),
    Bool(bool),
}

/// Parses `key = "string"`, `key = ["a", "b"]` and `key = true|false`, one
/// per line, with `#` comment lines. Anything else is an error, so a typo in
/// an expectation file cannot silently weaken the test.
fn parse_toml(text: &str) -> Result<BTreeMap<String, Value>, String> {
    let mut out = BTreeMap::new();
    for (n, raw) in text.lines().enumerate() {
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let (key, value) = line
            .split_once('=')
            .ok_or_else(|| format!("line {}: expected key = value", n + 1))?;
        let key = key.trim().to_string();
        let value = value.trim();
        let parsed = if value == "true" || value == "false" {
            Value::Bool(value == "true")
        } else if value.starts_with('"') {
            let (s, rest) = parse_string(value).map_err(|e| format!("line {}: {e}", n + 1))?;
            if !rest.trim().is_empty() {
                return Err(format!("line {}: text after the string", n + 1));
            }
            Value::Str(s)
        } else if let Some(inner) = value.strip_prefix('[') {
            let mut items = Vec::new();
            let mut rest = inner.trim_start();
            loop {
                if let Some(after) = rest.strip_prefix(']') {
                    if !after.trim().is_empty() {
                        return Err(format!("line {}: text after the list", n + 1));
                    }
                    break;
                }
                let (s, after) = parse_string(rest).map_err(|e| format!("line {}: {e}", n + 1))?;
                items.push(s);
                rest = after.trim_start();
                rest = rest.strip_prefix(',').unwrap_or(rest).trim_start();
                if rest.is_empty() {
                    return Err(format!("line {}: list not closed on its line", n + 1));
                }
            }
            Value::List(items)
        } else {
            return Err(format!("line {}: unsupported value {value}", n + 1));
        };
        if out.insert(key.clone(), parsed).is_some() {
            return Err(format!("line {}: {key} given twice", n + 1));
        }
    }
    Ok(out)
}

/// A basic TOML string at the start of `s`; returns it and the rest.
fn parse_string(s: &str) -> Result<(String, &str), String> {
    let body = s.strip_prefix('"').ok_or("expected a string")?;
    let mut out = String::new();
    let mut chars = body.char_indices();
    while let Some((i, c)) = chars.next() {
        match c {
            '"' => return Ok((out, body.get(i + 1..).unwrap_or(""))),
            '\\' => match chars.next() {
                Some((_, '"')) => out.push('"'),
                Some((_, '\\')) => out.push('\\'),
                Some((_, 'n')) => out.push('\n'),
                Some((_, 't')) => out.push('\t'),
                other => return Err(format!("unsupported escape {other:?}")),
            },
            _ => out.push(c),
        }
    }
    Err("string not closed".into())
}

/// The expectations of one fixture.
#[derive(Debug, Default)]
struct Expect {
    must_fire: Vec<String>,
    must_not_warn: Vec<String>,
    must_not_report: Vec<String>,
    max_severity: Option<Severity>,
    kinds: Vec<String>,
    hosts: Option<Vec<String>>,
    exit_ok: bool,
    pending: Option<String>,
}

fn severity(name: &str) -> Option<Severity> {
    Severity::WORST_FIRST
        .into_iter()
        .find(|s| s.to_string().eq_ignore_ascii_case(name))
}

/// Reads and validates an expectation file: required provenance keys, known
/// rule ids, known kind names, no unknown keys.
fn load_expect(path: &Path) -> Result<Expect, String> {
    let text = std::fs::read_to_string(path).map_err(|e| e.to_string())?;
    let map = parse_toml(&text)?;
    let known_kinds: Vec<&str> = fabricscope::parse::supported_formats()
        .into_iter()
        .chain(ANNOUNCED_KINDS)
        .collect();
    let mut e = Expect {
        exit_ok: true,
        ..Expect::default()
    };
    for required in ["source", "tool", "shape", "verdict"] {
        match map.get(required) {
            Some(Value::Str(s)) if !s.trim().is_empty() => {}
            _ => return Err(format!("missing or empty `{required}`")),
        }
    }
    if let Some(Value::Str(s)) = map.get("source") {
        if !s.starts_with("https://") && !s.starts_with("http://") {
            return Err(format!("source is not a URL: {s}"));
        }
    }
    let rule_list = |key: &str| -> Result<Vec<String>, String> {
        match map.get(key) {
            None => Ok(Vec::new()),
            Some(Value::List(ids)) => {
                for id in ids {
                    if !RULES.iter().any(|r| r.id == id) {
                        return Err(format!("{key}: unknown rule id {id}"));
                    }
                }
                Ok(ids.clone())
            }
            Some(other) => Err(format!("{key}: expected a list, got {other:?}")),
        }
    };
    e.must_fire = rule_list("must_fire")?;
    e.must_not_warn = rule_list("must_not_warn")?;
    e.must_not_report = rule_list("must_not_report")?;
    for (key, value) in &map {
        match (key.as_str(), value) {
            (
                "source" | "tool" | "shape" | "verdict" | "must_fire" | "must_not_warn"
                | "must_not_report",
                _,
            ) => {}
            ("max_severity", Value::Str(s)) => {
                e.max_severity = Some(severity(s).ok_or_else(|| format!("unknown severity {s}"))?);
            }
            ("kinds", Value::List(kinds)) => {
                for k in kinds {
                    if !known_kinds.contains(&k.as_str()) {
                        return Err(format!("kinds: unknown kind {k}"));
                    }
                }
                e.kinds = kinds.clone();
            }
            ("hosts", Value::List(hosts)) => e.hosts = Some(hosts.clone()),
            ("exit_ok", Value::Bool(b)) => e.exit_ok = *b,
            ("pending", Value::Str(s)) if !s.trim().is_empty() => e.pending = Some(s.clone()),
            _ => return Err(format!("unexpected key or value type: {key}")),
        }
    }
    if e.must_fire
        .iter()
        .any(|id| e.must_not_warn.contains(id) || e.must_not_report.contains(id))
    {
        return Err("a rule is both in must_fire and must_not_warn or must_not_report".into());
    }
    Ok(e)
}

/// Everything that is wrong with one fixture today (empty: it passes).
fn check(text: &str, e: &Expect) -> Vec<String> {
    let mut problems = Vec::new();
    let doc = match read(text, &ReadOptions::default()) {
        Ok(doc) => doc,
        Err(err) => {
            if e.exit_ok {
                let err = err.to_string();
                let first = err.split(';').next().unwrap_or(&err);
                problems.push(format!("input error (exit 2): {first}"));
            }
            return problems;
        }
    };
    let lost = doc.unaccounted_lines(text);
    if !lost.is_empty() {
        problems.push(format!("lines {lost:?} are neither read nor reported"));
    }
    let kinds: Vec<&str> = doc.sections.iter().map(|s| s.kind.name()).collect();
    for k in &e.kinds {
        if !kinds.contains(&k.as_str()) {
            problems.push(format!("kind {k} not recognised (read: {kinds:?})"));
        }
    }
    if let Some(want) = &e.hosts {
        let hosts = doc.section_hosts();
        if hosts != *want {
            problems.push(format!("sections name hosts {hosts:?}, not {want:?}"));
        }
    }
    let report = analyze(&[doc], &AnalyzeOptions::default());
    let warned = |id: &str| {
        report
            .findings
            .iter()
            .filter(|f| f.rule == id && f.severity >= Severity::Warning)
            .count()
    };
    for id in &e.must_fire {
        if warned(id) == 0 {
            problems.push(format!("{id} did not fire at warning or worse"));
        }
    }
    for id in &e.must_not_warn {
        if let Some(f) = report
            .findings
            .iter()
            .find(|f| f.rule == id && f.severity >= Severity::Warning)
        {
            problems.push(format!("{id} warned ({}): {}", f.severity, f.message));
        }
    }
    for id in &e.must_not_report {
        if let Some(f) = report.findings.iter().find(|f| f.rule == id) {
            problems.push(format!("{id} reported ({}): {}", f.severity, f.message));
        }
    }
    if let Some(max) = e.max_severity {
        for f in report.findings.iter().filter(|f| f.severity > max) {
            problems.push(format!(
                "{} {} above {max}: {}",
                f.rule, f.severity, f.message
            ));
        }
    }
    problems
}

#[test]
fn wild_pastes_meet_their_expectations() {
    let dir = wild_dir();
    let mut ids: Vec<String> = std::fs::read_dir(&dir)
        .expect("tests/fixtures/wild exists")
        .flatten()
        .filter_map(|e| {
            let p = e.path();
            (p.extension()? == "txt").then(|| p.file_stem()?.to_str().map(str::to_string))?
        })
        .collect();
    ids.sort();
    assert!(!ids.is_empty(), "no wild fixtures");
    let readme = std::fs::read_to_string(dir.join("README.md")).unwrap_or_default();

    let mut failures = Vec::new();
    let (mut passed, mut pending) = (0, 0);
    // Pending fixtures by failure class: the text of `pending` before its colon.
    let mut classes: BTreeMap<String, usize> = BTreeMap::new();
    for id in &ids {
        let text = std::fs::read_to_string(dir.join(format!("{id}.txt"))).unwrap();
        let expect = match load_expect(&dir.join(format!("{id}.toml"))) {
            Ok(e) => e,
            Err(err) => {
                println!("FAIL    {id}: bad expectation file: {err}");
                failures.push(format!("{id}: bad expectation file: {err}"));
                continue;
            }
        };
        if !readme.contains(&format!("`{id}`")) {
            failures.push(format!("{id}: missing from the README table"));
        }
        let problems = check(&text, &expect);
        match (&expect.pending, problems.is_empty()) {
            (None, true) => {
                passed += 1;
                println!("ok      {id}");
            }
            (None, false) => {
                println!("FAIL    {id}: {}", problems.join("; "));
                failures.push(format!("{id}: {}", problems.join("; ")));
            }
            (Some(why), false) => {
                pending += 1;
                let class = why.split(':').next().unwrap_or(why).trim().to_string();
                *classes.entry(class).or_default() += 1;
                println!("pending {id}: {why} [still: {}]", problems.join("; "));
            }
            (Some(why), true) => {
                println!("FIXED   {id}: passes now; remove `pending = \"{why}\"`");
                failures.push(format!(
                    "{id}: marked pending ({why}) but passes now; remove `pending`"
                ));
            }
        }
    }
    for entry in std::fs::read_dir(&dir).unwrap().flatten() {
        let p = entry.path();
        if p.extension().is_some_and(|x| x == "toml") {
            let stem = p.file_stem().unwrap().to_string_lossy().to_string();
            if !ids.contains(&stem) {
                failures.push(format!("{stem}.toml has no {stem}.txt"));
            }
        }
    }
    println!(
        "wild: {} fixtures, {passed} pass, {pending} pending, {} failing",
        ids.len(),
        failures.len()
    );
    for (class, n) in &classes {
        println!("wild: pending {n:>2} × {class}");
    }
    assert!(
        failures.is_empty(),
        "wild fixtures:\n{}",
        failures.join("\n")
    );
}

#[test]
fn the_toml_subset_parser_rejects_what_it_does_not_know() {
    let ok =
        parse_toml("# c\na = \"x \\\"y\\\"\"\nb = [\"IB001\", \"TP001\"]\nc = true\n").unwrap();
    assert_eq!(ok["a"], Value::Str("x \"y\"".into()));
    assert_eq!(ok["b"], Value::List(vec!["IB001".into(), "TP001".into()]));
    assert_eq!(ok["c"], Value::Bool(true));
    assert!(parse_toml("a = 3\n").is_err());
    assert!(parse_toml("a = [\"x\"\n").is_err());
    assert!(parse_toml("a = \"x\" junk\n").is_err());
    assert!(parse_toml("a = \"x\"\na = \"y\"\n").is_err());
}
