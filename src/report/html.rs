//! The report as one self-contained HTML file, to attach to a ticket or mail:
//! no script, no external request (styles inline), readable offline and
//! printable. What `--format html` prints and what the web page's "Download
//! HTML" saves.
//!
//! Content: the verdict and counts, findings grouped by host (worst first,
//! as in the text report) with their evidence lines, threshold and remedy,
//! then the rules that could not run and the inputs left out. Everything taken
//! from the input is escaped: a paste cannot inject markup into the file.

use super::{NamedDocument, Report};
use crate::rules::{Finding, Severity};
use std::fmt::Write as _;

/// Styles of the file: system fonts, light and dark, severity colours.
const STYLE: &str = "\
:root{color-scheme:light dark;--b:#d9dde3;--m:#5c6570;--critical:#a0106b;--error:#c4281c;--warning:#9a6200;--info:#2a62a8}\
@media(prefers-color-scheme:dark){:root{--b:#323942;--m:#98a2ad;--critical:#f27ac0;--error:#ff7b6e;--warning:#f0b443;--info:#7fb0ee}}\
body{font:15px/1.45 system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem}\
code,pre{font-family:ui-monospace,'DejaVu Sans Mono',monospace;font-size:13px}\
pre{border:1px solid var(--b);border-radius:6px;padding:.5rem;overflow-x:auto}\
.sev{display:inline-block;min-width:5.5em;font-weight:600;text-transform:uppercase;font-size:12px}\
.critical{color:var(--critical)}.error{color:var(--error)}.warning{color:var(--warning)}.info{color:var(--info)}\
.counts span{margin-right:1rem}.muted{color:var(--m)}\
section.finding{border-left:4px solid var(--b);padding:.2rem .8rem;margin:.8rem 0}\
section.finding.critical{border-color:var(--critical)}section.finding.error{border-color:var(--error)}\
section.finding.warning{border-color:var(--warning)}section.finding.info{border-color:var(--info)}\
h3{margin:.2rem 0;font-size:15px}";

/// Renders the report as a complete HTML document.
///
/// ```
/// use fabricscope::report::html;
/// let paste = "$ ibstat\nCA 'mlx5_0'\n\tCA type: MT4123\n\tPort 1:\n\t\tState: Down\n\t\tPhysical state: Polling\n\t\tLink layer: InfiniBand\n";
/// let doc = fabricscope::read(paste, &Default::default()).unwrap();
/// let report = fabricscope::analyze(&[doc], &Default::default());
/// let page = html::render(&report, &[]);
/// assert!(page.starts_with("<!DOCTYPE html>") || page.starts_with("<!doctype html>"));
/// assert!(page.contains("IB001"));
/// ```
#[must_use]
pub fn render(report: &Report, documents: &[NamedDocument<'_>]) -> String {
    let mut s = String::with_capacity(4096 + report.findings.len() * 512);
    let title = format!("fabricscope report: {}", report.verdict);
    let _ = write!(
        s,
        "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <meta name=\"generator\" content=\"fabricscope {}\">\n<title>{}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n",
        env!("CARGO_PKG_VERSION"),
        esc(&title)
    );
    let status = report.status.map_or("healthy", Severity::name);
    let _ = writeln!(
        s,
        "<h1>fabricscope report</h1>\n<p class=\"verdict {status}\"><strong>{}</strong></p>",
        esc(&report.verdict)
    );
    s.push_str("<p class=\"counts\">");
    for sev in Severity::WORST_FIRST {
        let _ = write!(
            s,
            "<span class=\"{0}\">{1} {0}</span>",
            sev.name(),
            report.summary.count(sev)
        );
    }
    s.push_str("</p>\n");
    let inputs: Vec<&str> = documents.iter().map(|d| d.input).collect();
    let _ = writeln!(
        s,
        "<p class=\"muted\">{} rules ran over {} tool outputs from {} hosts ({}).</p>",
        report.rules_run,
        report.sections,
        report.hosts,
        esc(&inputs.join(", "))
    );

    s.push_str("<h2>Findings</h2>\n");
    if report.findings.is_empty() {
        s.push_str("<p>No findings.</p>\n");
    }
    for (host, findings) in by_host(&report.findings) {
        let _ = writeln!(
            s,
            "<h2 class=\"host\">{}</h2>",
            esc(host.as_deref().unwrap_or("(host not named)"))
        );
        for f in findings {
            finding(&mut s, f);
        }
    }

    if !report.skipped_rules.is_empty() {
        s.push_str("<h2>Rules that could not run</h2>\n<ul>\n");
        for r in &report.skipped_rules {
            let _ = writeln!(
                s,
                "<li><code>{}</code> {}</li>",
                esc(r.rule),
                esc(&r.reason)
            );
        }
        s.push_str("</ul>\n");
    }
    if !report.skipped_inputs.is_empty() {
        s.push_str("<h2>Inputs left out</h2>\n<ul>\n");
        for i in &report.skipped_inputs {
            let _ = writeln!(
                s,
                "<li><code>{}</code>: {}</li>",
                esc(&i.input),
                esc(&i.reason)
            );
        }
        s.push_str("</ul>\n");
    }
    let unrecognised: usize = documents
        .iter()
        .map(|d| d.document.unrecognised.len())
        .sum();
    if unrecognised > 0 {
        let _ = writeln!(
            s,
            "<p class=\"muted\">{unrecognised} range(s) of input lines were not recognised and were not judged.</p>"
        );
    }
    s.push_str("</body>\n</html>\n");
    s
}

fn finding(s: &mut String, f: &Finding) {
    let sev = f.severity.name();
    let _ = writeln!(
        s,
        "<section class=\"finding {sev}\">\n<h3><span class=\"sev {sev}\">{sev}</span> <code>{}</code> {}</h3>",
        esc(f.rule),
        esc(&f.message)
    );
    let subject = f.subject.describe();
    let _ = writeln!(s, "<p class=\"muted\">{}</p>", esc(&subject));
    if !f.evidence.is_empty() {
        s.push_str("<pre>");
        for e in &f.evidence {
            let source = e
                .source
                .as_deref()
                .map(|src| format!("{src}:"))
                .unwrap_or_default();
            let lines = if e.span.last_line == e.span.first_line {
                format!("L{}", e.span.first_line)
            } else {
                format!("L{}-{}", e.span.first_line, e.span.last_line)
            };
            let _ = writeln!(s, "{}{}  {}", esc(&source), lines, esc(&e.text));
        }
        s.push_str("</pre>\n");
    }
    if let Some(t) = &f.threshold {
        let _ = writeln!(
            s,
            "<p><strong>Threshold:</strong> {} <span class=\"muted\">({})</span></p>",
            esc(&t.value),
            esc(&t.source)
        );
    }
    if !f.remediation.is_empty() {
        let _ = writeln!(
            s,
            "<p><strong>What to do:</strong> {}</p>",
            esc(&f.remediation)
        );
    }
    s.push_str("</section>\n");
}

/// Findings grouped by host, the worst host first, then by name.
fn by_host(findings: &[Finding]) -> Vec<(Option<String>, Vec<&Finding>)> {
    let mut hosts: Vec<(Option<String>, Vec<&Finding>)> = Vec::new();
    for f in findings {
        // As the text report labels them: an unnamed dump by its file, a
        // finding over several files (IB001's fleet finding) as the fleet's.
        let host = super::text::host_label(f);
        match hosts.iter_mut().find(|(h, _)| *h == host) {
            Some((_, list)) => list.push(f),
            None => hosts.push((host, vec![f])),
        }
    }
    for (_, list) in &mut hosts {
        list.sort_by_key(|f| std::cmp::Reverse(f.severity));
    }
    hosts.sort_by(|(ha, fa), (hb, fb)| {
        let worst = |fs: &Vec<&Finding>| fs.iter().map(|f| f.severity).max();
        worst(fb).cmp(&worst(fa)).then_with(|| ha.cmp(hb))
    });
    hosts
}

/// Escapes text for HTML element content and attribute values.
fn esc(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analyze::{analyze, AnalyzeOptions};

    fn html_of(text: &str) -> String {
        let doc = crate::input::read_all(text, &crate::ReadOptions::default()).unwrap();
        let report = analyze(std::slice::from_ref(&doc), &AnalyzeOptions::default());
        render(
            &report,
            &[NamedDocument {
                input: "paste",
                document: &doc,
            }],
        )
    }

    #[test]
    fn a_down_port_is_a_critical_finding_with_its_evidence_lines() {
        let html = html_of(
            "[root@node01 ~]# ibstat\nCA 'mlx5_0'\n\tCA type: MT4129\n\tPort 1:\n\t\tState: Down\n\t\tPhysical state: Polling\n\t\tLink layer: InfiniBand\n",
        );
        assert!(html.starts_with("<!doctype html>"));
        assert!(html.ends_with("</html>\n"));
        assert!(html.contains("<h2 class=\"host\">node01</h2>"));
        assert!(html.contains("<section class=\"finding critical\">"));
        assert!(html.contains("<code>IB001</code>"));
        assert!(html.contains("<span class=\"critical\">1 critical</span>"));
        assert!(html.contains("L4-7"), "evidence lines of the port block");
        assert!(!html.contains("<script"), "no script in the file");
        assert!(
            !html.contains(" src=") && !html.contains(" href="),
            "nothing loaded from elsewhere"
        );
    }

    #[test]
    fn pasted_markup_is_escaped() {
        let html = html_of(
            "[root@node01 ~]# ibstat\nCA '<img src=x onerror=alert(1)>'\n\tCA type: MT4129\n\tPort 1:\n\t\tState: Down\n\t\tPhysical state: Polling\n",
        );
        assert!(!html.contains("<img"), "{html}");
        assert!(html.contains("&lt;img src=x onerror=alert(1)&gt;"));
    }

    /// Findings that name no host are listed as the text report lists
    /// them: each unnamed dump under its file (two dumps are not one
    /// machine), and a finding over several files as the fleet's. Before,
    /// all of them were one "(host not named)".
    #[test]
    fn unnamed_findings_are_grouped_by_file_and_the_fleets_apart() {
        use crate::rules::{Evidence, Subject};
        use crate::span::LineSpan;
        let rule = &crate::rules::input::IN003;
        let in_file = |file: &str| {
            rule.finding(Subject::host(None), "failed")
                .evidence(Evidence::new("x", LineSpan::line(1), Some(file)))
        };
        let fleet = rule
            .finding(Subject::host(None), "on most hosts")
            .evidence(Evidence::new("x", LineSpan::line(1), Some("a/ibstat.txt")))
            .evidence(Evidence::new("x", LineSpan::line(1), Some("b/ibstat.txt")));
        let findings = [in_file("a/ibstat.txt"), in_file("b/ibstat.txt"), fleet];
        let labels: Vec<Option<String>> = by_host(&findings).into_iter().map(|(h, _)| h).collect();
        assert_eq!(
            labels,
            [
                Some("(fleet)".to_owned()),
                Some("(host not named: a/ibstat.txt)".to_owned()),
                Some("(host not named: b/ibstat.txt)".to_owned()),
            ]
        );
    }
}
