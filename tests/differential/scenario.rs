//! The committed ibsim scenarios (`tests/fixtures/ibsim/*/scenario.json`)
//! against the analyzer. Every expectation is read from `scenario.json`,
//! which the generator writes from the scenario's definition, never from
//! tool output and never from fabricscope.
//!
//! Captures are grouped by what they look at, from their command line:
//! - **local** (`ibstat`, `ibstatus`, `perfquery` without a target): the
//!   capture host's own port. All local captures of a scenario are analysed
//!   together, each under its host's name, as a fleet.
//! - **remote** (`perfquery LID PORTS`, `-l LID LIST`): a switch port, named by
//!   the LID the scenario lists for the switch. Each is analysed alone.
//! - **fabric** (`iblinkinfo`, `ibqueryerrors`, `ibnetdiscover`): the whole
//!   fabric; judged only in a scenario with nothing wrong.
//!
//! Expectations ("reported" = a finding at warning or worse):
//! - a port with `problem: "port_down"` → a reported finding on it that
//!   says Down; `"no_sm"` → a reported finding on it about the subnet manager;
//!   `"narrow_link"` → a reported finding on it from the hosts' own captures
//!   (ibstat compared across hosts), and a reported finding on either end of
//!   each narrow link once the fabric-wide captures are added (iblinkinfo's
//!   `Could be 12X`);
//! - a port with no problem and no counter over threshold → no reported
//!   finding about its host;
//! - each thresholded counter set on a port shown by a plain `perfquery`
//!   capture: over threshold → a reported finding on the port naming it
//!   (`PortXmitWait`, congestion: a finding naming it at `info`, none at
//!   warning or worse; issue 9);
//!   under → no reported finding whose message names it; saturated → some
//!   finding on the port saying it is saturated;
//! - a scenario with nothing wrong (SM running, no cut, no narrow link, no
//!   counter set) → no reported finding over all its captures that succeeded
//!   (`[exit 0]`; the commands ibsim cannot answer say nothing of the fabric).

use crate::subject::{is_congestion, is_reported, mentions, says_saturated, show};
use crate::tally::{Gate, Tally};
use fabricscope::{analyze, AnalyzeOptions, Document, Finding, ReadOptions};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::Path;

#[derive(Debug, Deserialize)]
struct Scenario {
    scenario: String,
    subnet_manager: SubnetManager,
    cut_ports: Vec<serde_json::Value>,
    narrow_links: Vec<Link>,
    nodes: Vec<Node>,
    counters_set: Vec<CounterSet>,
    lids: BTreeMap<String, u32>,
    expected_hca_ports: Vec<ExpectedPort>,
    captures: Vec<Capture>,
}

#[derive(Debug, Deserialize)]
struct Node {
    id: String,
    desc: String,
}

/// A cable: `[node, port]` at each end.
#[derive(Debug, Deserialize)]
struct Link {
    a: (String, u32),
    b: (String, u32),
}

#[derive(Debug, Deserialize)]
struct SubnetManager {
    running: bool,
}

#[derive(Debug, Deserialize)]
struct CounterSet {
    node: String,
    port: u32,
    attribute: String,
    field: String,
    expected_value: u64,
    saturated: bool,
    /// Present only on the counters the thresholds file lists.
    #[serde(default)]
    over_threshold: Option<bool>,
}

#[derive(Debug, Deserialize)]
struct ExpectedPort {
    node: String,
    port: u32,
    problem: Option<String>,
}

#[derive(Debug, Deserialize)]
struct Capture {
    file: String,
    host: String,
    command: String,
}

/// What a capture looks at.
#[derive(Debug, PartialEq)]
enum Target {
    /// The capture host's own port; `error_counters` when it is a plain
    /// PortCounters query (the one that shows the thresholded counters).
    Local { ibstat: bool, error_counters: bool },
    /// Ports of the node with this LID, with PortCounters shown.
    Remote { lid: u32, ports: Vec<u32> },
    /// A remote query that shows no thresholded counter (`-x`, `-E`, `-a`, GUID).
    RemoteOther,
    /// The whole fabric.
    Fabric,
}

/// `1,3,8` or `1-4` or `3`.
fn port_list(text: &str) -> Option<Vec<u32>> {
    let mut out = Vec::new();
    for part in text.split(',') {
        match part.split_once('-') {
            Some((a, b)) => out.extend(a.parse::<u32>().ok()?..=b.parse::<u32>().ok()?),
            None => out.push(part.parse().ok()?),
        }
    }
    Some(out)
}

fn target(command: &str) -> Target {
    let words: Vec<&str> = command.split_whitespace().collect();
    let Some((tool, args)) = words.split_first() else {
        return Target::Fabric;
    };
    let options: Vec<&str> = args
        .iter()
        .copied()
        .filter(|a| a.starts_with('-'))
        .collect();
    let positional: Vec<&str> = args
        .iter()
        .copied()
        .filter(|a| !a.starts_with('-'))
        .collect();
    match *tool {
        "ibstat" | "ibstatus" => Target::Local {
            ibstat: *tool == "ibstat",
            error_counters: false,
        },
        "perfquery" => {
            let plain = options.iter().all(|o| *o == "-l");
            match positional.first().map(|w| w.parse::<u32>()) {
                None => Target::Local {
                    ibstat: false,
                    error_counters: plain && !options.contains(&"-l"),
                },
                Some(Ok(lid)) if plain => match positional.get(1).and_then(|p| port_list(p)) {
                    Some(ports) => Target::Remote { lid, ports },
                    None => Target::RemoteOther,
                },
                _ => Target::RemoteOther,
            }
        }
        _ => Target::Fabric,
    }
}

/// The exit status on the capture's `[exit N]` line, if any.
fn exit_status(text: &str) -> Option<i32> {
    let last = text.lines().rev().find(|l| !l.trim().is_empty())?;
    last.trim()
        .strip_prefix("[exit ")?
        .strip_suffix(']')?
        .parse()
        .ok()
}

fn read(dir: &Path, capture: &Capture) -> (Document, Option<i32>) {
    let path = dir.join(&capture.file);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let options = ReadOptions::default().with_default_host(capture.host.clone());
    let mut doc = fabricscope::read_all(&text, &options)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    for s in &mut doc.sections {
        s.source.get_or_insert_with(|| capture.file.clone());
    }
    (doc, exit_status(&text))
}

/// A finding on a host's own port: the host's name, the port number (or an
/// address without one), and no switch LID in the subject.
fn on_local_port(f: &Finding, host: &str, port: u32, switch_lids: &[u32]) -> bool {
    let s = &f.subject;
    s.host.as_deref() == Some(host)
        && s.port.is_none_or(|p| p == port)
        && (s.port.is_some() || s.lid.is_some() || s.guid.is_some())
        && s.lid.is_none_or(|l| !switch_lids.contains(&l))
}

/// A finding on the port `port` of the node with LID `lid`.
fn on_remote_port(f: &Finding, lid: u32, port: u32) -> bool {
    f.subject.lid == Some(lid) && f.subject.port == Some(port)
}

fn list(findings: &[&Finding]) -> String {
    if findings.is_empty() {
        return "none".to_owned();
    }
    findings
        .iter()
        .map(|f| show(f))
        .collect::<Vec<_>>()
        .join("; ")
}

/// Counter expectations for the findings on one port.
fn check_counters(tally: &mut Tally, place: &str, counters: &[&CounterSet], on_port: &[&Finding]) {
    let reported: Vec<&Finding> = on_port.iter().copied().filter(|f| is_reported(f)).collect();
    for c in counters {
        let Some(over) = c.over_threshold else {
            continue;
        };
        let what = format!("{place}: {} = {}", c.field, c.expected_value);
        if over && is_congestion(&c.field) {
            let noted = on_port.iter().any(|f| mentions(f, &c.field));
            let warned = reported.iter().any(|f| mentions(f, &c.field));
            tally.case(
                "congestion counter over threshold → noted at info, not reported",
                Gate::Required,
                true,
                noted && !warned,
                || {
                    format!(
                        "{what} is over threshold (congestion); findings on the port: {}",
                        list(on_port)
                    )
                },
            );
        } else if over {
            tally.case(
                "counter over threshold → reported, named",
                Gate::Required,
                true,
                reported.iter().any(|f| mentions(f, &c.field)),
                || {
                    format!(
                        "{what} is over threshold; findings on the port: {}",
                        list(on_port)
                    )
                },
            );
        } else {
            tally.case(
                "counter under threshold → not named in a reported message",
                Gate::Required,
                false,
                reported.iter().any(|f| f.message.contains(&c.field)),
                || format!("{what} is under threshold, yet: {}", list(&reported)),
            );
        }
        if c.saturated {
            tally.case(
                "saturated counter → said saturated",
                Gate::Required,
                true,
                on_port.iter().any(|f| says_saturated(f, &c.field)),
                || {
                    format!(
                        "{what} is pinned at its field maximum; findings on the port: {}",
                        list(on_port)
                    )
                },
            );
        }
    }
}

/// Checks one scenario directory.
fn check_one(dir: &Path, tally: &mut Tally) {
    let text = std::fs::read_to_string(dir.join("scenario.json")).unwrap();
    let sc: Scenario = serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.join("scenario.json").display()));
    let name = sc.scenario.as_str();
    let options = AnalyzeOptions::default();
    let switch_lids: Vec<u32> = sc.lids.values().copied().collect();
    let targets: Vec<(&Capture, Target)> = sc
        .captures
        .iter()
        .map(|c| (c, target(&c.command)))
        .collect();

    // Local captures, as one fleet.
    let local: Vec<&(&Capture, Target)> = targets
        .iter()
        .filter(|(_, t)| matches!(t, Target::Local { .. }))
        .collect();
    let docs: Vec<Document> = local.iter().map(|(c, _)| read(dir, c).0).collect();
    let findings = analyze(&docs, &options).findings;
    let has = |host: &str, want: fn(&Target) -> bool| {
        local.iter().any(|(c, t)| c.host == host && want(t))
    };
    for ep in &sc.expected_hca_ports {
        let on_port: Vec<&Finding> = findings
            .iter()
            .filter(|f| on_local_port(f, &ep.node, ep.port, &switch_lids))
            .collect();
        let reported: Vec<&Finding> = on_port.iter().copied().filter(|f| is_reported(f)).collect();
        let place = format!("scenario {name}, {} port {}", ep.node, ep.port);
        let text_of = |f: &&Finding| format!("{} {}", f.name, f.message).to_ascii_lowercase();
        let sees_state = has(&ep.node, |t| {
            matches!(t, Target::Local { ibstat: true, .. })
        });
        match ep.problem.as_deref() {
            Some("port_down") if sees_state => tally.case(
                "port_down → reported, says Down",
                Gate::Required,
                true,
                reported.iter().any(|f| text_of(f).contains("down")),
                || format!("{place} is Down/Polling (cut); findings on the port: {}", list(&on_port)),
            ),
            Some("no_sm") if sees_state => tally.case(
                "no_sm → reported, names the subnet manager",
                Gate::Required,
                true,
                reported.iter().any(|f| {
                    let t = text_of(f);
                    t.contains("subnet manager") || f.name.split('-').any(|w| w == "sm")
                }),
                || format!("{place} waits for a subnet manager (none runs); findings on the port: {}", list(&on_port)),
            ),
            Some("narrow_link") if sees_state => tally.case(
                "narrow_link → reported from the hosts' ibstat",
                Gate::Required,
                true,
                !reported.is_empty(),
                || format!("{place} trained at 1X while the other hosts run 12X; findings on the port: {}", list(&on_port)),
            ),
            None if has(&ep.node, |_| true) => {
                let over = sc.counters_set.iter().any(|c| {
                    c.node == ep.node && c.port == ep.port && c.over_threshold == Some(true)
                });
                if !over {
                    let about_host: Vec<&Finding> = findings
                        .iter()
                        .filter(|f| {
                            is_reported(f)
                                && f.subject.host.as_deref() == Some(ep.node.as_str())
                                && f.subject.lid.is_none_or(|l| !switch_lids.contains(&l))
                        })
                        .collect();
                    tally.case(
                        "port without problem → no reported finding on its host",
                        Gate::Required,
                        false,
                        !about_host.is_empty(),
                        || format!("{place} has nothing wrong, yet: {}", list(&about_host)),
                    );
                }
            }
            _ => {}
        }
        if has(&ep.node, |t| {
            matches!(
                t,
                Target::Local {
                    error_counters: true,
                    ..
                }
            )
        }) {
            let counters: Vec<&CounterSet> = sc
                .counters_set
                .iter()
                .filter(|c| c.node == ep.node && c.port == ep.port && c.attribute == "PortCounters")
                .collect();
            check_counters(tally, &place, &counters, &on_port);
        }
    }

    // Remote captures, each alone.
    for (capture, t) in &targets {
        let Target::Remote { lid, ports } = t else {
            continue;
        };
        let Some(node) = sc.lids.iter().find(|(_, l)| *l == lid).map(|(n, _)| n) else {
            continue;
        };
        let docs = [read(dir, capture).0];
        let findings = analyze(&docs, &options).findings;
        for port in ports {
            let counters: Vec<&CounterSet> = sc
                .counters_set
                .iter()
                .filter(|c| &c.node == node && c.port == *port && c.attribute == "PortCounters")
                .collect();
            let on_port: Vec<&Finding> = findings
                .iter()
                .filter(|f| on_remote_port(f, *lid, *port))
                .collect();
            let place = format!(
                "scenario {name}, {} ({node} LID {lid} port {port})",
                capture.file
            );
            check_counters(tally, &place, &counters, &on_port);
        }
    }

    // Narrow links, from the fabric-wide captures (iblinkinfo, ibnetdiscover,
    // ibqueryerrors) with the local ones: a finding on either end.
    if !sc.narrow_links.is_empty() {
        let docs: Vec<Document> = targets
            .iter()
            .filter(|(_, t)| matches!(t, Target::Local { .. } | Target::Fabric))
            .map(|(c, _)| read(dir, c))
            .filter(|(_, exit)| *exit == Some(0))
            .map(|(d, _)| d)
            .collect();
        let findings = analyze(&docs, &options).findings;
        let desc = |id: &str| {
            sc.nodes
                .iter()
                .find(|n| n.id == id)
                .map(|n| n.desc.as_str())
        };
        for link in &sc.narrow_links {
            let ends = [&link.a, &link.b];
            let on_link: Vec<&Finding> = findings
                .iter()
                .filter(|f| is_reported(f))
                .filter(|f| {
                    ends.iter().any(|(node, port)| {
                        let s = &f.subject;
                        s.port == Some(*port)
                            && (s.device.as_deref() == desc(node)
                                || s.host.as_deref() == Some(node.as_str())
                                || sc.lids.get(node).is_some_and(|l| s.lid == Some(*l)))
                    })
                })
                .collect();
            tally.case(
                "narrow_link → reported on the link by the fabric view",
                Gate::Required,
                true,
                !on_link.is_empty(),
                || {
                    format!(
                        "scenario {name}: link {}[{}] ↔ {}[{}] trained at 1X (both ends support 12X); no finding at warning or worse on either end among {} findings",
                        link.a.0, link.a.1, link.b.0, link.b.1, findings.len()
                    )
                },
            );
        }
    }

    // A scenario with nothing wrong: no warning anywhere.
    let nothing_wrong = sc.subnet_manager.running
        && sc.cut_ports.is_empty()
        && sc.narrow_links.is_empty()
        && sc.counters_set.is_empty()
        && sc.expected_hca_ports.iter().all(|p| p.problem.is_none());
    if nothing_wrong {
        let docs: Vec<Document> = sc
            .captures
            .iter()
            .map(|c| read(dir, c))
            .filter(|(_, exit)| *exit == Some(0))
            .map(|(d, _)| d)
            .collect();
        let findings = analyze(&docs, &options).findings;
        let reported: Vec<&Finding> = findings.iter().filter(|f| is_reported(f)).collect();
        tally.case(
            "scenario with nothing wrong → no reported finding",
            Gate::Required,
            false,
            !reported.is_empty(),
            || {
                format!(
                    "scenario {name} ({} successful captures): {}",
                    docs.len(),
                    list(&reported)
                )
            },
        );
    }
}

/// Checks every scenario under `root`; returns how many there were.
pub fn check_all(root: &Path, tally: &mut Tally) -> usize {
    let mut dirs: Vec<_> = std::fs::read_dir(root)
        .unwrap_or_else(|e| panic!("{}: {e}", root.display()))
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.join("scenario.json").is_file())
        .collect();
    dirs.sort();
    for category in [
        "port_down → reported, says Down",
        "no_sm → reported, names the subnet manager",
        "narrow_link → reported from the hosts' ibstat",
        "narrow_link → reported on the link by the fabric view",
        "counter over threshold → reported, named",
        "counter under threshold → not named in a reported message",
        "saturated counter → said saturated",
        "port without problem → no reported finding on its host",
        "scenario with nothing wrong → no reported finding",
    ] {
        tally.declare(category, Gate::Required);
    }
    for dir in &dirs {
        check_one(dir, tally);
    }
    dirs.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_are_classified_by_what_they_look_at() {
        assert_eq!(
            target("ibstat ibsim0 1"),
            Target::Local {
                ibstat: true,
                error_counters: false
            }
        );
        assert_eq!(
            target("perfquery"),
            Target::Local {
                ibstat: false,
                error_counters: true
            }
        );
        assert_eq!(
            target("perfquery -x"),
            Target::Local {
                ibstat: false,
                error_counters: false
            }
        );
        assert_eq!(
            target("perfquery 2 3"),
            Target::Remote {
                lid: 2,
                ports: vec![3]
            }
        );
        assert_eq!(
            target("perfquery -l 2 1-4"),
            Target::Remote {
                lid: 2,
                ports: vec![1, 2, 3, 4]
            }
        );
        assert_eq!(
            target("perfquery -l 2 1,3,8"),
            Target::Remote {
                lid: 2,
                ports: vec![1, 3, 8]
            }
        );
        assert_eq!(target("perfquery -x 2 3"), Target::RemoteOther);
        assert_eq!(target("perfquery -G 0x200000 3"), Target::RemoteOther);
        assert_eq!(target("perfquery -a 2"), Target::RemoteOther);
        assert_eq!(target("iblinkinfo -l"), Target::Fabric);
        assert_eq!(exit_status("$ x\nout\n[exit 255]\n"), Some(255));
        assert_eq!(exit_status("$ x\nout\n"), None);
    }
}
