//! Running a set of rules over a context.

use super::{Context, Coverage, Finding, Rule, SkippedRule};

/// The outcome of running rules over some input.
#[derive(Debug, Clone, Default)]
pub struct RuleRun {
    /// Every finding, in rule order.
    pub findings: Vec<Finding>,
    /// Rules that lacked their data.
    pub skipped: Vec<SkippedRule>,
    /// Ids of the rules that ran, with how many subjects each looked at.
    pub checked: Vec<(&'static str, usize)>,
}

/// Runs `rules` over the context.
#[must_use]
pub fn run(rules: &[&'static Rule], ctx: &Context<'_>) -> RuleRun {
    let mut out = RuleRun::default();
    for rule in rules {
        match run_one(rule, ctx, &mut out.findings) {
            Coverage::Checked(n) => out.checked.push((rule.id, n)),
            Coverage::Skipped(reason) => out.skipped.push(SkippedRule {
                rule: rule.id,
                reason,
            }),
        }
    }
    out
}

/// Runs one rule, adding its findings to `findings`: for callers that keep
/// their own list (a batch unit adds every rule's findings to one).
pub fn run_one(rule: &Rule, ctx: &Context<'_>, findings: &mut Vec<Finding>) -> Coverage {
    let before = findings.len();
    let coverage = (rule.check)(ctx, findings);
    // A check must label its findings with its own id; anything else is a
    // bug in the rule, caught by the registry tests.
    debug_assert!(findings
        .get(before..)
        .unwrap_or_default()
        .iter()
        .all(|f| f.rule == rule.id));
    coverage
}
