//! The diagnosis engine: rules with stable ids, and the findings they produce.
//!
//! A [`Rule`] is one small check with its user documentation attached. Rules
//! are declared with [`declare_rule!`](crate::declare_rule) in one file per
//! family (`ib_port.rs`, `ib_counters.rs`, …) and listed in
//! [`registry::RULES`], sorted by id. Ids are never reused: a retired rule
//! keeps its id out of circulation.
//!
//! A check reads the parsed documents through a [`Context`] and pushes
//! [`Finding`]s. When the data it needs is absent it returns
//! [`Coverage::Skipped`] with the reason, so a report never passes a rule
//! silently for lack of input.

mod context;
pub mod cross;
pub mod diag;
pub mod fabric_links;
mod finding;
mod fleet;
pub mod gpu_init;
pub mod gpu_memory;
pub mod gpu_pcie;
pub mod gpu_state;
pub mod gpu_xid;
pub mod ib_counters;
pub mod ib_fleet;
pub mod ib_port;
pub mod input;
pub mod nccl;
pub mod nic_log;
pub mod nvlink;
pub mod nvlink_totals;
pub mod pcie_aer;
mod port_info;
pub mod registry;
pub mod roce_gid;
mod rule;
mod run;
pub mod subnet_manager;
pub mod switch_vitals;
pub mod thresholds;
pub mod topology;
mod wording;

pub use context::{
    subject_of, AdapterRef, Context, HostKey, IbPortRef, NvGpuRef, PerfPortRef, PortReadings,
    Reading, SectionRef,
};
pub use registry::{by_id, RULES};
pub use thresholds::{ThresholdEntry, Thresholds, ThresholdsError};

pub(crate) use finding::WHOLE_HOST;
pub use finding::{Evidence, Finding, SkippedRule, Subject, Threshold};
pub use fleet::{AdapterFacts, Fleet, FleetCheck, FleetFacts, NeverLinkedFacts, PortFacts};
pub use rule::{Check, Coverage, Family, Rule, Scope, Severity};
pub use run::{run, run_one, RuleRun};
pub(crate) use wording::{gbps, outlier_evidence, outlier_threshold};

/// How many counters of the unit were compared with their peers by growth
/// rate (NVLink ones with `nvlink`, InfiniBand ones without): the peer
/// outlier rules (FL004, NV005) checked these even where every group read
/// 0 and the statistics left it out.
pub(crate) fn rates_compared(ctx: &Context<'_>, nvlink: bool) -> usize {
    ctx.measurements
        .counter_rates
        .iter()
        .filter(|r| r.subject.gpu.is_some() == nvlink && r.compared_by_rate())
        .count()
}

/// Helpers for rule unit tests: read a paste, run one rule.
#[cfg(test)]
pub(crate) mod testing {
    use super::{run, Context, Coverage, Finding, Rule, Thresholds};

    /// The findings of `rule` on `text` (read as a paste).
    pub(crate) fn findings_of(rule: &'static Rule, text: &str) -> Vec<Finding> {
        let doc = crate::input::read_all(text, &crate::ReadOptions::default()).unwrap();
        let docs = [doc];
        let thresholds = Thresholds::default();
        let m = measurements(&docs);
        run(&[rule], &Context::new(&docs, &thresholds, &m)).findings
    }

    /// Measurements with a 10 s interval, so two snapshots give rates.
    fn measurements(docs: &[crate::Document]) -> crate::stats::Measurements {
        crate::stats::measure_many(
            docs,
            &crate::stats::StatsOptions {
                interval_seconds: Some(10.0),
                ..Default::default()
            },
        )
    }

    /// Why `rule` skipped `text`, or `None` when it ran.
    pub(crate) fn skipped_reason(rule: &'static Rule, text: &str) -> Option<String> {
        let doc = crate::input::read_all(text, &crate::ReadOptions::default()).unwrap();
        let docs = [doc];
        let thresholds = Thresholds::default();
        let m = measurements(&docs);
        match (rule.check)(&Context::new(&docs, &thresholds, &m), &mut Vec::new()) {
            Coverage::Checked(_) => None,
            Coverage::Skipped(reason) => Some(reason),
        }
    }
}
