//! The report for people: a verdict line; on a fleet, a summary (per-rule
//! counts with the hosts affected, a per-host table, healthy hosts counted);
//! then one block per host, worst host first, with one entry per incident:
//! its headline finding, evidence, limit and fix, the probable cause, and the
//! supporting findings indented under it.

use super::hosts::{self, HostList};
use super::{Incident, Report};
use crate::report::verdict::VerdictLevel;
use crate::rules::{Finding, Severity};
use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;

/// How to print.
///
/// Built from [`Default`] with the chainable `with_…` methods (the struct is
/// `#[non_exhaustive]`: options will be added without breaking callers):
///
/// ```
/// use fabricscope::report::text::TextOptions;
/// let options = TextOptions::default().with_color(true).with_max_width(100);
/// assert_eq!(options.max_width, Some(100));
/// ```
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub struct TextOptions {
    /// ANSI colours (the CLI sets this on a terminal unless `NO_COLOR` is set).
    pub color: bool,
    /// Print evidence, thresholds and remediations, not just the messages.
    pub verbose: bool,
    /// Above this many `info` findings they are summed up per rule instead of
    /// listed (a fleet's congestion counters would drown the rest).
    pub max_info: usize,
    /// Name every host in the fleet summary — the healthy ones, and all
    /// the hosts of a rule's row — not just count them.
    pub list_healthy: bool,
    /// The verdict and the fleet summary only, no per-host blocks.
    pub summary_only: bool,
    /// Cut lines longer than this many characters (with `…`).
    pub max_width: Option<usize>,
}

impl Default for TextOptions {
    fn default() -> Self {
        Self {
            color: false,
            verbose: true,
            max_info: 50,
            list_healthy: false,
            summary_only: false,
            max_width: None,
        }
    }
}

impl TextOptions {
    /// ANSI colours on or off.
    #[must_use]
    pub fn with_color(mut self, color: bool) -> Self {
        self.color = color;
        self
    }

    /// Evidence, thresholds and remediations printed (`true`, the default),
    /// or the messages only.
    #[must_use]
    pub fn with_verbose(mut self, verbose: bool) -> Self {
        self.verbose = verbose;
        self
    }

    /// Above this many `info` findings, they are summed up per rule.
    #[must_use]
    pub fn with_max_info(mut self, max_info: usize) -> Self {
        self.max_info = max_info;
        self
    }

    /// Names every host in the fleet summary (the healthy ones, all the
    /// hosts of a rule's row), not just counts them.
    #[must_use]
    pub fn with_list_healthy(mut self, list_healthy: bool) -> Self {
        self.list_healthy = list_healthy;
        self
    }

    /// The verdict and the fleet summary only, no per-host blocks.
    #[must_use]
    pub fn with_summary_only(mut self, summary_only: bool) -> Self {
        self.summary_only = summary_only;
        self
    }

    /// Cuts lines longer than this many characters; takes a number or an
    /// `Option` (`None`: never cut).
    #[must_use]
    pub fn with_max_width(mut self, width: impl Into<Option<usize>>) -> Self {
        self.max_width = width.into();
        self
    }
}

struct Paint(bool);

impl Paint {
    fn wrap(&self, code: &str, text: &str) -> String {
        if self.0 {
            format!("\x1b[{code}m{text}\x1b[0m")
        } else {
            text.to_owned()
        }
    }

    fn severity(&self, s: Severity) -> String {
        let code = match s {
            Severity::Critical => "1;35",
            Severity::Error => "1;31",
            Severity::Warning => "1;33",
            Severity::Info => "36",
        };
        self.wrap(code, &format!("{:<8}", s.name()))
    }

    fn dim(&self, text: &str) -> String {
        self.wrap("2", text)
    }

    fn bold(&self, text: &str) -> String {
        self.wrap("1", text)
    }
}

/// Where a finding about no host whose evidence comes from several files
/// is listed (a port that never linked on most hosts, IB001's fleet
/// finding): it is about the fleet, not one unnamed host.
const FLEET_LABEL: &str = "(fleet)";

/// The host an incident or finding is listed under: its host, or the file
/// it came from, so two anonymous dumps are not shown as one machine; a
/// finding whose evidence comes from several files is the fleet's. The
/// HTML report lists findings under the same labels.
pub(super) fn host_label(f: &Finding) -> Option<String> {
    f.subject.host.clone().or_else(|| {
        let mut sources = f.evidence.iter().filter_map(|e| e.source.as_ref());
        let first = sources.next()?;
        if sources.any(|s| s != first) {
            return Some(FLEET_LABEL.to_owned());
        }
        Some(format!("(host not named: {first})"))
    })
}

/// `subject: message`, without saying the subject twice. The host is
/// named beside the headline (its column, its heading), so a message that
/// opens with the host and then the subject (a peer outlier's `gpu00154
/// GPU 1: …`) loses the host, and a subject that is the whole host adds
/// no `host: ` before the message.
fn headline(f: &Finding) -> String {
    let subject = f.subject.describe();
    let message = f
        .subject
        .host
        .as_deref()
        .and_then(|host| f.message.strip_prefix(host)?.strip_prefix(' '))
        .filter(|rest| rest.starts_with(&subject))
        .unwrap_or(&f.message);
    if message.starts_with(&subject) || subject == crate::rules::WHOLE_HOST {
        message.to_owned()
    } else {
        format!("{subject}: {message}")
    }
}

/// Cuts `line` to `width` characters (ANSI escapes not counted, as they are
/// only used when no width is set).
fn fit(line: &str, width: Option<usize>) -> String {
    match width {
        Some(w) if line.chars().count() > w => {
            let cut: String = line.chars().take(w.saturating_sub(1)).collect();
            format!("{cut}…")
        }
        _ => line.to_owned(),
    }
}

/// One host's incidents (indexes into `report.incidents`), worst first.
type HostIncidents = Vec<(Option<String>, Vec<usize>)>;

fn by_host(report: &Report, hide_info: bool) -> HostIncidents {
    let mut hosts: HostIncidents = Vec::new();
    // Each host's place in `hosts`: a fleet's incidents are thousands, and
    // searching the list for each one made the table quadratic.
    let mut place: HashMap<Option<String>, usize> = HashMap::new();
    for (n, i) in report.incidents.iter().enumerate() {
        if hide_info && i.severity == Severity::Info {
            continue;
        }
        let Some(head) = i.members(&report.findings).next() else {
            continue;
        };
        let host = i.subject.host.clone().or_else(|| host_label(head));
        match place.get(&host) {
            Some(&at) => {
                if let Some((_, list)) = hosts.get_mut(at) {
                    list.push(n);
                }
            }
            None => {
                place.insert(host.clone(), hosts.len());
                hosts.push((host, vec![n]));
            }
        }
    }
    let worst = |list: &Vec<usize>| {
        list.iter()
            .filter_map(|&n| report.incidents.get(n))
            .map(|i| i.severity)
            .max()
    };
    hosts.sort_by(|(ha, la), (hb, lb)| worst(lb).cmp(&worst(la)).then_with(|| ha.cmp(hb)));
    hosts
}

/// The fleet summary: per-rule counts with hosts, per-host table, healthy hosts.
fn summary(
    report: &Report,
    hosts: &HostIncidents,
    options: &TextOptions,
    p: &Paint,
    s: &mut String,
) {
    let width = options.max_width;
    let _ = writeln!(s);
    let with_problems = hosts
        .iter()
        .filter(|(h, _)| h.as_deref() != Some(FLEET_LABEL))
        .count();
    let with_findings: std::collections::HashSet<&str> =
        hosts.iter().filter_map(|(h, _)| h.as_deref()).collect();
    let healthy: Vec<&String> = report
        .host_names
        .iter()
        .filter(|h| !with_findings.contains(h.as_str()))
        .collect();
    // Where no rule had its data, a host without findings was not judged:
    // calling it healthy contradicted the verdict above.
    let quiet = if report.verdict.level == VerdictLevel::NotEnoughToJudge {
        "not judged"
    } else {
        "healthy"
    };
    // With the info incidents left out of the table below, the count says
    // so: "7,510 incidents on 20 hosts" read as 7,510 problems when 7,481
    // of them were lifetime counters' history spread over every host.
    let listed: usize = hosts.iter().map(|(_, list)| list.len()).sum();
    let counted = if listed < report.incidents.len() {
        format!(
            "== summary: {listed} incident(s) on {with_problems} host(s); {} {quiet}; {} info incident(s) not listed",
            healthy.len(),
            report.incidents.len() - listed
        )
    } else {
        format!(
            "== summary: {} incident(s) from {} finding(s) on {with_problems} host(s); {} {quiet}",
            report.incidents.len(),
            report.findings.len(),
            healthy.len()
        )
    };
    let _ = writeln!(s, "{}", p.bold(&fit(&counted, width)));
    // Per rule: findings and the hosts they are on (`--verbose` names all).
    let mut per_rule: BTreeMap<&str, (usize, HostList)> = BTreeMap::new();
    for f in &report.findings {
        let e = per_rule.entry(f.rule).or_default();
        e.0 += 1;
        if let Some(h) = host_label(f) {
            e.1.add(&h);
        }
    }
    let _ = writeln!(s, "  {:<6} {:>8}  hosts", "rule", "findings");
    let limit = (!options.list_healthy).then_some(hosts::NAMED);
    for (rule, (n, hs)) in &per_rule {
        let list = match hs.join(limit) {
            (list, true) => format!("{list} (--verbose lists them)"),
            (list, false) => list,
        };
        let _ = writeln!(s, "{}", fit(&format!("  {rule:<6} {n:>8}  {list}"), width));
    }
    let _ = writeln!(s);
    let name_width = hosts
        .iter()
        .map(|(h, _)| h.as_deref().unwrap_or("(host not named)").chars().count())
        .max()
        .unwrap_or(4)
        .clamp(4, 40);
    let _ = writeln!(
        s,
        "  {:<name_width$}  {:<8}  {:>9}  headline",
        "host", "worst", "incidents"
    );
    for (host, list) in hosts {
        let Some(first) = list.first().and_then(|&n| report.incidents.get(n)) else {
            continue;
        };
        let head = first
            .members(&report.findings)
            .next()
            .map(headline)
            .unwrap_or_default();
        let line = format!(
            "  {:<name_width$}  {:<8}  {:>9}  {} {head}",
            host.as_deref().unwrap_or("(host not named)"),
            first.severity.name(),
            list.len(),
            first.rule
        );
        let _ = writeln!(s, "{}", fit(&line, width));
    }
    if !healthy.is_empty() {
        let names: Vec<&str> = healthy.iter().map(|h| h.as_str()).collect();
        let line = if options.list_healthy {
            format!("  {quiet}: {}", names.join(", "))
        } else {
            format!("  {quiet}: {} host(s) (--verbose lists them)", names.len())
        };
        let _ = writeln!(s, "{}", fit(&line, width));
    }
}

fn finding_details(f: &Finding, indent: &str, p: &Paint, s: &mut String) {
    for e in &f.evidence {
        let place = match &e.source {
            Some(src) => format!("{src} {}", e.span),
            None => e.span.to_string(),
        };
        let _ = writeln!(
            s,
            "{indent}{} {} {}",
            p.dim("evidence:"),
            e.text,
            p.dim(&format!("({place})"))
        );
    }
    if let Some(t) = &f.threshold {
        let _ = writeln!(
            s,
            "{indent}{} {} {}",
            p.dim("limit:"),
            t.value,
            p.dim(&format!("({})", t.source))
        );
    }
    if !f.remediation.is_empty() {
        let _ = writeln!(s, "{indent}{} {}", p.dim("fix:"), f.remediation);
    }
}

fn incident_block(
    report: &Report,
    incident: &Incident,
    options: &TextOptions,
    p: &Paint,
    s: &mut String,
) {
    let width = options.max_width;
    let mut members = incident.members(&report.findings);
    let Some(head) = members.next() else {
        return;
    };
    let line = format!(
        "  {} {} {}",
        p.severity(head.severity),
        head.rule,
        headline(head)
    );
    let _ = writeln!(s, "{}", fit(&line, width));
    if options.verbose {
        finding_details(head, "           ", p, s);
    }
    if let Some(cause) = &incident.probable_cause {
        let _ = writeln!(
            s,
            "{}",
            fit(
                &format!("           {} {cause}", p.dim("probable cause:")),
                width
            )
        );
    }
    // An incident about a switch or a host (several of its ports) keeps
    // each port's name in its members' lines; one about a port says it
    // once, in the headline.
    let names_port = |s: &crate::rules::Subject| s.port.is_some() || s.headerless_port.is_some();
    let about_ports = !names_port(&incident.subject);
    for f in members {
        let subject = f.subject.describe();
        let message = if about_ports && names_port(&f.subject) {
            f.message.as_str()
        } else {
            f.message
                .strip_prefix(&subject)
                .map_or(f.message.as_str(), |m| {
                    m.trim_start_matches(':').trim_start()
                })
        };
        let line = format!(
            "           {} {} {} {message}",
            p.dim("+"),
            p.severity(f.severity),
            f.rule
        );
        let _ = writeln!(s, "{}", fit(&line, width));
        if options.verbose {
            finding_details(f, "                        ", p, s);
        }
    }
}

/// Renders the report as text.
///
/// ```
/// use fabricscope::report::text::{self, TextOptions};
/// let paste = "$ ibstat\nCA 'mlx5_0'\n\tCA type: MT4123\n\tPort 1:\n\t\tState: Down\n\t\tPhysical state: Polling\n\t\tLink layer: InfiniBand\n";
/// let doc = fabricscope::read(paste, &Default::default()).unwrap();
/// let report = fabricscope::analyze(&[doc], &Default::default());
/// let plain = text::render(&report, &TextOptions::default());
/// assert!(plain.starts_with("critical"));
/// assert!(plain.contains("IB001"));
/// let short = text::render(&report, &TextOptions::default().with_verbose(false));
/// assert!(short.len() < plain.len());
/// ```
#[must_use]
pub fn render(report: &Report, options: &TextOptions) -> String {
    let p = Paint(options.color);
    let mut s = String::new();
    let head = match report.verdict.level {
        VerdictLevel::Problem(sev) => p.severity(sev).trim_end().to_owned(),
        VerdictLevel::Healthy => p.wrap("1;32", "healthy"),
        VerdictLevel::NotEnoughToJudge => p.wrap("1;33", VerdictLevel::NotEnoughToJudge.name()),
    };
    let rest = &report.verdict.detail;
    let _ = writeln!(s, "{}", fit(&format!("{head}: {rest}"), options.max_width));

    let hide_info = report.summary.info > options.max_info;
    let hosts = by_host(report, hide_info);
    if report.hosts > 1 || options.summary_only {
        summary(report, &hosts, options, &p, &mut s);
    }
    if !options.summary_only {
        for (host, list) in &hosts {
            let _ = writeln!(s);
            let _ = writeln!(
                s,
                "{}",
                p.bold(&format!(
                    "== {}",
                    host.as_deref().unwrap_or("(host not named)")
                ))
            );
            for &n in list {
                if let Some(incident) = report.incidents.get(n) {
                    incident_block(report, incident, options, &p, &mut s);
                }
            }
        }
    }
    if hide_info {
        let mut per_rule: Vec<(&str, usize)> = Vec::new();
        for f in report
            .findings
            .iter()
            .filter(|f| f.severity == Severity::Info)
        {
            match per_rule.iter_mut().find(|(r, _)| *r == f.rule) {
                Some((_, n)) => *n += 1,
                None => per_rule.push((f.rule, 1)),
            }
        }
        let list: Vec<String> = per_rule.iter().map(|(r, n)| format!("{r} ×{n}")).collect();
        let _ = writeln!(s);
        let _ = writeln!(
            s,
            "{}",
            p.dim(&fit(
                &format!(
                    "{} info findings not listed: {} (--format json lists them)",
                    report.summary.info,
                    list.join(", ")
                ),
                options.max_width
            ))
        );
    }
    if !report.skipped_inputs.is_empty() {
        let _ = writeln!(s);
        let _ = writeln!(s, "{}", p.bold("== inputs skipped"));
        const SHOWN: usize = 10;
        for i in report.skipped_inputs.iter().take(SHOWN) {
            let _ = writeln!(
                s,
                "{}",
                fit(&format!("  {}: {}", i.input, i.reason), options.max_width)
            );
        }
        if report.skipped_inputs.len() > SHOWN {
            let _ = writeln!(
                s,
                "  … and {} more (use --format json for the full list)",
                report.skipped_inputs.len() - SHOWN
            );
        }
    }
    if !report.skipped_rules.is_empty() {
        let _ = writeln!(s);
        let ids: Vec<&str> = report.skipped_rules.iter().map(|r| r.rule).collect();
        let _ = writeln!(
            s,
            "{}",
            p.dim(&fit(
                &format!(
                    "not checked for lack of data: {} (use --format json for the reasons)",
                    ids.join(" ")
                ),
                options.max_width
            ))
        );
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analyze::{analyze, AnalyzeOptions};

    fn report(text: &str) -> Report {
        let doc = crate::input::read_all(text, &crate::ReadOptions::default()).unwrap();
        analyze(&[doc], &AnalyzeOptions::default())
    }

    #[test]
    fn verdict_first_then_hosts_worst_first() {
        let text = "n1: CA 'mlx5_0'\nn1: \tCA type: MT4129\nn1: \tPort 1:\nn1: \t\tState: Active\nn1: \t\tPhysical state: LinkUp\nn1: \t\tBase lid: 0\nn1: \t\tSM lid: 1\nn1: \t\tLink layer: InfiniBand\nn2: CA 'mlx5_0'\nn2: \tCA type: MT4129\nn2: \tPort 1:\nn2: \t\tState: Down\nn2: \t\tPhysical state: Polling\nn2: \t\tLink layer: InfiniBand\n";
        let out = render(&report(text), &TextOptions::default().with_color(false));
        let lines: Vec<&str> = out.lines().collect();
        assert!(lines[0].starts_with("critical: "), "{out}");
        let n2 = out.find("== n2").unwrap();
        let n1 = out.find("== n1").unwrap();
        assert!(n2 < n1, "{out}");
        assert!(
            out.contains("evidence: ibstat: State: Down, Physical state: Polling (lines 11–14)"),
            "{out}"
        );
        assert!(!out.contains('\x1b'));
    }

    /// The host is named beside the headline: a message that opens with
    /// the host and subject loses the host, a whole-host subject adds no
    /// `host: `, and a message not about its subject gets the subject.
    #[test]
    fn headlines_say_the_host_and_subject_once() {
        use crate::rules::Subject;
        let on = |subject: Subject, message: &str| {
            headline(
                &crate::rules::registry::by_id("NV005")
                    .unwrap()
                    .finding(subject, message),
            )
        };
        let gpu = Subject {
            host: Some("gpu00154".into()),
            gpu: Some(1),
            ..Subject::default()
        };
        assert_eq!(
            on(gpu.clone(), "gpu00154 GPU 1: crc_errors 48213 stands out"),
            "GPU 1: crc_errors 48213 stands out"
        );
        assert_eq!(on(gpu.clone(), "GPU 1: link 3 down"), "GPU 1: link 3 down");
        assert_eq!(on(gpu, "crc_errors 48213"), "GPU 1: crc_errors 48213");
        let host = Subject {
            host: Some("gpu00059".into()),
            ..Subject::default()
        };
        assert_eq!(
            on(host, "mlx5_3 runs firmware 28.36.1010"),
            "mlx5_3 runs firmware 28.36.1010"
        );
    }

    #[test]
    fn colour_only_when_asked() {
        let text = "CA 'mlx5_0'\n\tCA type: MT4129\n\tPort 1:\n\t\tState: Down\n\t\tPhysical state: Polling\n\t\tLink layer: InfiniBand\n";
        let out = render(
            &report(text),
            &TextOptions::default().with_color(true).with_verbose(false),
        );
        assert!(out.contains("\x1b[1;35m"));
    }

    #[test]
    fn many_info_findings_are_summed_up_per_rule() {
        // Six ports alike but one, whose four counters stand out while
        // staying under their limits: four FL004 findings at info.
        let mut text = String::new();
        for lid in 1..=6 {
            let n = if lid == 6 { 9 } else { 0 };
            text.push_str(&format!(
                "# Port counters: Lid {lid} port 1 (CapMask: 0x5A00)\nPortSelect:......................1\nSymbolErrorCounter:..............{n}\nLinkErrorRecoveryCounter:........{n}\nLinkDownedCounter:...............{n}\nPortRcvErrors:...................{n}\n{}",
                crate::parse::perfquery::PORT_COUNTERS_AFTER_RCV_ERRORS
            ));
        }
        let r = report(&text);
        assert_eq!(r.summary.info, 4, "{r:#?}");
        let listed = render(&r, &TextOptions::default());
        assert_eq!(listed.matches("FL004").count(), 4, "{listed}");
        let summed = render(&r, &TextOptions::default().with_max_info(3));
        assert!(
            summed.contains("4 info findings not listed: FL004 ×4"),
            "{summed}"
        );
        assert!(!summed.contains("PortRcvErrors 9"), "{summed}");
    }

    #[test]
    fn the_fleet_summary_counts_only_the_incidents_it_lists() {
        // n1: four ports' counters stand out under their limits (four
        // info incidents); n2: one port down (an error).
        let mut text = String::new();
        for lid in 1..=6 {
            let n = if lid == 6 { 9 } else { 0 };
            let block = format!(
                "# Port counters: Lid {lid} port 1 (CapMask: 0x5A00)\nPortSelect:......................1\nSymbolErrorCounter:..............{n}\nLinkErrorRecoveryCounter:........{n}\nLinkDownedCounter:...............{n}\nPortRcvErrors:...................{n}\n{}",
                crate::parse::perfquery::PORT_COUNTERS_AFTER_RCV_ERRORS
            );
            for line in block.lines() {
                text.push_str(&format!("n1: {line}\n"));
            }
        }
        text.push_str("n2: CA 'mlx5_0'\nn2: \tCA type: MT4129\nn2: \tPort 1:\nn2: \t\tState: Down\nn2: \t\tPhysical state: Polling\nn2: \t\tBase lid: 7\nn2: \t\tSM lid: 1\nn2: \t\tLink layer: InfiniBand\n");
        let r = report(&text);
        let info = r
            .incidents
            .iter()
            .filter(|i| i.severity == Severity::Info)
            .count();
        assert!(info >= 1, "{r:#?}");
        let problems = r.incidents.len() - info;
        let summed = render(&r, &TextOptions::default().with_max_info(1));
        let want = format!(
            "== summary: {problems} incident(s) on 1 host(s); 1 healthy; {info} info incident(s) not listed"
        );
        assert!(summed.contains(&want), "{want}\n{summed}");
        let listed = render(&r, &TextOptions::default());
        let want = format!(
            "== summary: {} incident(s) from {} finding(s) on 2 host(s); 0 healthy",
            r.incidents.len(),
            r.findings.len()
        );
        assert!(listed.contains(&want), "{want}\n{listed}");
    }

    #[test]
    fn a_rule_on_many_hosts_names_eight_and_counts_the_rest() {
        let text = crate::report::hosts::ports_down_on(10);
        let r = report(&text);
        let row = |out: &str| {
            out.lines()
                .find(|l| l.trim_start().starts_with("IB0") && l.contains("node0"))
                .map(str::to_owned)
                .unwrap_or_else(|| panic!("no rule row naming hosts in:\n{out}"))
        };
        let short = row(&render(&r, &TextOptions::default()));
        assert_eq!(short.matches("node").count(), 8, "{short}");
        assert!(
            short.contains("… and 2 more (--verbose lists them)"),
            "{short}"
        );
        let all = row(&render(&r, &TextOptions::default().with_list_healthy(true)));
        assert_eq!(all.matches("node").count(), 10, "{all}");
        assert!(!all.contains("more"), "{all}");
    }
}
