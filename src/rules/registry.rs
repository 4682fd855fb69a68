//! The list of every rule, sorted by id.
//!
//! # Adding a rule
//! 1. Declare it with [`declare_rule!`](crate::declare_rule) in its family's
//!    file, with the five documentation sections, and write its check with
//!    unit tests right below.
//! 2. Add it to [`RULES`] at its place in id order. Ids are never reused.
//! 3. Add `tests/fixtures/rules/<ID>/fires_*.txt` (input that must trigger it)
//!    and `quiet_*.txt` (a near miss that must not).
//! 4. Regenerate the catalogue: `UPDATE_DOCS=1 cargo test --lib registry`.

use super::{
    cross, diag, fabric_links, gpu_init, gpu_memory, gpu_pcie, gpu_state, gpu_xid, ib_counters,
    ib_fleet, ib_port, input, nccl, nic_log, nvlink, nvlink_totals, pcie_aer, roce_gid,
    subnet_manager, switch_vitals, topology, Rule,
};
use std::fmt::Write as _;

/// Every rule, sorted by id.
pub static RULES: &[&Rule] = &[
    &diag::DG001,
    &diag::DG002,
    &gpu_memory::DG003,
    &gpu_state::DG004,
    &gpu_memory::DG005,
    &gpu_xid::DG006,
    &gpu_init::DG008,
    &ib_fleet::FL001,
    &ib_fleet::FL002,
    &ib_fleet::FL003,
    &ib_fleet::FL004,
    &ib_port::IB001,
    &ib_port::IB002,
    &ib_port::IB003,
    &ib_port::IB004,
    &ib_fleet::IB005,
    &ib_port::IB006,
    &subnet_manager::IB007,
    &fabric_links::IB008,
    &switch_vitals::IB009,
    &fabric_links::IB010,
    &nic_log::IB011,
    &nic_log::IB012,
    &pcie_aer::IB015,
    &ib_counters::IB101,
    &ib_counters::IB102,
    &ib_counters::IB103,
    &ib_counters::IB104,
    &ib_counters::IB105,
    &ib_counters::IB106,
    &ib_counters::IB107,
    &ib_counters::IB108,
    &ib_counters::IB109,
    &ib_counters::IB110,
    &ib_counters::IB111,
    &ib_counters::IB112,
    &ib_counters::IB113,
    &ib_counters::IB114,
    &ib_counters::IB115,
    &ib_counters::IB116,
    &input::IN001,
    &input::IN002,
    &input::IN003,
    &diag::ML001,
    &diag::ML002,
    &diag::ML003,
    &diag::ML004,
    &diag::ML005,
    &nccl::NC001,
    &nccl::NC002,
    &nccl::NC003,
    &nccl::NC004,
    &roce_gid::NC005,
    &nvlink::NV001,
    &nvlink::NV002,
    &nvlink::NV003,
    &nvlink::NV004,
    &nvlink::NV005,
    &nvlink::NV006,
    &nvlink::NV007,
    &nvlink::NV008,
    &nvlink::NV009,
    &nvlink::NV010,
    &nvlink_totals::NV011,
    &topology::TP001,
    &topology::TP002,
    &topology::TP003,
    &topology::TP004,
    &gpu_pcie::TP005,
    &cross::XS001,
];

/// The rule with this id (any case), if there is one.
#[must_use]
pub fn by_id(id: &str) -> Option<&'static Rule> {
    RULES
        .iter()
        .copied()
        .find(|r| r.id.eq_ignore_ascii_case(id.trim()))
}

/// The rule catalogue as Markdown: the text of `docs/rules.md`.
#[must_use]
pub fn catalogue_markdown() -> String {
    let mut s = String::new();
    s.push_str("# Rule catalogue\n\n");
    s.push_str(
        "Generated from the rule registry (`src/rules/registry.rs`); do not edit by hand.\n\
         Regenerate with `UPDATE_DOCS=1 cargo test --lib registry`.\n\n",
    );
    s.push_str("| id | name | severity | summary |\n|---|---|---|---|\n");
    for r in RULES {
        let _ = writeln!(
            s,
            "| [{id}](#{anchor}) | `{name}` | {sev} | {summary} |",
            id = r.id,
            anchor = r.id.to_ascii_lowercase(),
            name = r.name,
            sev = r.severity,
            summary = r.summary
        );
    }
    let mut family = None;
    for r in RULES {
        if family != Some(r.family) {
            family = Some(r.family);
            let _ = write!(s, "\n## {}\n", r.family.title());
        }
        let _ = write!(
            s,
            "\n### {}\n\n`{}` · severity **{}** · needs: {}\n\n",
            r.id, r.name, r.severity, r.needs
        );
        // Rule docs use `###` headings; nest them one level deeper here.
        for line in r.explanation().lines() {
            if let Some(h) = line.strip_prefix("### ") {
                let _ = writeln!(s, "#### {h}");
            } else {
                let _ = writeln!(s, "{line}");
            }
        }
    }
    s
}

/// The catalogue as JSON: `[{id, name, family, severity, summary, needs,
/// explanation}]`, for `fabricscope rules --format json` and the web page.
#[must_use]
pub fn catalogue_json() -> serde_json::Value {
    serde_json::Value::Array(
        RULES
            .iter()
            .map(|r| {
                serde_json::json!({
                    "id": r.id,
                    "name": r.name,
                    "family": r.family,
                    "family_title": r.family.title(),
                    "severity": r.severity,
                    "summary": r.summary,
                    "needs": r.needs,
                    "explanation": r.explanation(),
                })
            })
            .collect(),
    )
}

/// The text `fabricscope explain ID` prints.
#[must_use]
pub fn explain_text(rule: &Rule) -> String {
    format!(
        "{} {} ({}; severity {}; needs {})\n{}\n\n{}",
        rule.id,
        rule.name,
        rule.family.title(),
        rule.severity,
        rule.needs,
        rule.summary,
        rule.explanation()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Sections every rule's documentation must have.
    const SECTIONS: &[&str] = &[
        "### What it detects",
        "### Why it matters",
        "### Evidence",
        "### What to do",
        "### Thresholds and sources",
    ];

    #[test]
    fn ids_are_well_formed_unique_and_sorted() {
        let mut previous = "";
        for r in RULES {
            let (prefix, digits) = r.id.split_at(2);
            assert_eq!(prefix, r.family.prefix(), "{}", r.id);
            assert!(
                digits.len() == 3 && digits.bytes().all(|b| b.is_ascii_digit()),
                "{}",
                r.id
            );
            assert!(
                previous < r.id,
                "{} after {previous}: keep RULES sorted",
                r.id
            );
            previous = r.id;
        }
    }

    #[test]
    fn names_are_unique_kebab_case() {
        let mut names = std::collections::HashSet::new();
        for r in RULES {
            assert!(names.insert(r.name), "duplicate name {}", r.name);
            assert!(
                r.name
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-'),
                "{}",
                r.name
            );
        }
    }

    #[test]
    fn every_rule_is_documented_in_every_section() {
        for r in RULES {
            let doc = r.explanation();
            for section in SECTIONS {
                assert!(doc.contains(section), "{} lacks {section}", r.id);
            }
            assert!(!r.summary.is_empty() && !r.needs.is_empty(), "{}", r.id);
        }
    }

    #[test]
    fn every_threshold_placeholder_names_a_built_in_threshold() {
        for r in RULES {
            let doc = r.explanation();
            assert!(
                !doc.contains("{limit:") && !doc.contains("{percent:"),
                "{}: a threshold placeholder names no built-in threshold",
                r.id
            );
        }
    }

    /// Rules name their counters by typed id (a misspelt id does not
    /// compile); the limits are the one place left where counters are
    /// named by strings. Every counter a rule in the registry asks for must
    /// be in the counter tables and, for the InfiniBand counter rules, have
    /// a built-in limit (a missing one would silently become 0); every
    /// built-in limit must name a counter the tables know, or be one of
    /// fabricscope's own names.
    #[test]
    fn every_counter_a_rule_asks_for_exists_and_has_its_limit() {
        use crate::model::KnownCounter;
        use crate::rules::thresholds::{Thresholds, OWN_NAMES};
        let limits = Thresholds::default();
        let mut asked = 0;
        for r in RULES {
            for c in r.counters {
                asked += 1;
                assert_eq!(
                    KnownCounter::from_name(c.name()),
                    Some(*c),
                    "{}: {} is not in the counter tables",
                    r.id,
                    c.name()
                );
                if r.family == crate::rules::Family::IbCounters {
                    assert!(
                        limits.get(c.name()).is_some(),
                        "{}: {} has no built-in limit",
                        r.id,
                        c.name()
                    );
                }
            }
        }
        assert!(asked >= 15, "the counter rules declare their counters");
        for c in ib_counters::ERROR_COUNTERS {
            assert!(limits.get(c.name()).is_some(), "{} has no limit", c.name());
        }
        for (name, _) in limits.iter() {
            assert!(
                KnownCounter::from_name(name).is_some() || OWN_NAMES.contains(&name),
                "built-in limit {name} names no known counter"
            );
        }
    }

    #[test]
    fn by_id_finds_every_rule_in_any_case() {
        for r in RULES {
            assert_eq!(by_id(&r.id.to_ascii_lowercase()).map(|x| x.id), Some(r.id));
        }
        assert!(by_id("IB999").is_none());
    }

    /// The README's count of rules is the registry's: it went stale
    /// unnoticed once (57 written, 66 registered).
    #[test]
    fn readme_counts_the_registered_rules() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/README.md");
        let readme = std::fs::read_to_string(path).unwrap_or_default();
        let want = format!("{} rules with stable ids", RULES.len());
        assert!(
            readme.contains(&want),
            "README.md should say `{want}` (it counts the rules of the registry)"
        );
    }

    #[test]
    fn docs_rules_md_is_up_to_date() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/rules.md");
        let want = catalogue_markdown();
        if std::env::var_os("UPDATE_DOCS").is_some() {
            std::fs::write(path, &want).unwrap();
            return;
        }
        let have = std::fs::read_to_string(path).unwrap_or_default();
        assert!(
            have == want,
            "docs/rules.md is stale: run `UPDATE_DOCS=1 cargo test --lib registry`"
        );
    }
}
