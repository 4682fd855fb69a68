//! What an NVIDIA Xid code means and what to do about it: a small table
//! after NVIDIA's Xid catalog (docs.nvidia.com/deploy/xid-errors, its
//! "Resolution Bucket (Immediate Action)" column: RESTART_APP, RESET_GPU,
//! RESTART_BM, CONTACT_SUPPORT) and the pages it links to (Dynamic Page
//! Retirement, GPU Memory Error Management, the NVSwitch SXid page).
//!
//! The table holds the codes fleets see; a code not in it is reported as
//! such, never guessed. Severity is what one line of the code says about
//! the GPU: codes NVIDIA attributes to the application are `info` (a busy
//! cluster logs Xid 13, 31 and 43 every day, and each was a job's fault);
//! memory, NVLink, bus and firmware codes say the GPU needs a reset or
//! more.

use crate::rules::Severity;

/// What NVIDIA says about one Xid code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct XidSpec {
    /// The first code of the entry.
    pub first: u32,
    /// The last code of the entry (equal to `first` for one code).
    pub last: u32,
    /// Severity of the code on its own. For NVLink codes 144–150 the
    /// line's own `Fatal`/`Nonfatal` word decides ([`Self::by_fatal_word`]).
    pub severity: Severity,
    /// Whether the line's `Fatal` (`error`) or `Nonfatal` (`warning`)
    /// decides the severity.
    pub by_fatal_word: bool,
    /// What the code means, in NVIDIA's words shortened.
    pub meaning: &'static str,
    /// NVIDIA's recommended action.
    pub action: &'static str,
}

const fn one(
    code: u32,
    severity: Severity,
    meaning: &'static str,
    action: &'static str,
) -> XidSpec {
    XidSpec {
        first: code,
        last: code,
        severity,
        by_fatal_word: false,
        meaning,
        action,
    }
}

const APP: &str = "restart the job (RESTART_APP); look at the GPU only if the code recurs on it across different jobs";

/// The table, by code.
pub static XIDS: &[XidSpec] = &[
    one(8, Severity::Info, "GPU stopped processing: a channel timed out (usually the job)", APP),
    one(13, Severity::Info, "graphics engine exception: usually the job (an illegal address or instruction), not the GPU", APP),
    one(31, Severity::Info, "GPU memory page fault (MMU fault): usually the job accessing an invalid address, not the GPU", APP),
    one(43, Severity::Info, "GPU stopped processing a channel: the job's fault or a user stop, the GPU carries on", APP),
    one(45, Severity::Info, "preemptive cleanup: the job's channels were torn down after an earlier error or a user stop; the earlier Xid, if any, says why", "no action of its own (IGNORE); act on the Xid that caused it"),
    one(48, Severity::Error, "uncorrectable double-bit ECC error (DBE) in GPU memory", "drain the GPU and reset it (RESET_GPU) so the page is retired or the row remapped; check nvidia-smi -q -d ROW_REMAPPER (PAGE_RETIREMENT before Ampere) afterwards"),
    one(61, Severity::Warning, "internal micro-controller breakpoint/warning", "reset the GPU (RESET_GPU) if the job hung; collect nvidia-bug-report.sh if it recurs"),
    one(62, Severity::Error, "internal micro-controller halt", "drain and reset the GPU (RESET_GPU); collect nvidia-bug-report.sh and contact support if it recurs"),
    one(63, Severity::Warning, "ECC page retirement or row remapping recorded: a memory row is marked to be replaced", "reset the GPU when it is idle (RESET_GPU) for the remap to take effect"),
    one(64, Severity::Error, "ECC page retirement or row remapping failed", "drain the GPU; run dcgmi diag -r 3 and open an RMA case (CONTACT_SUPPORT)"),
    one(74, Severity::Error, "NVLink error", "check the links (nvidia-smi nvlink -s / -e), reset the GPU (RESET_GPU); if it recurs on the same link, reseat or replace the GPU or baseboard (CONTACT_SUPPORT)"),
    one(79, Severity::Error, "GPU has fallen off the bus: the host can no longer reach it over PCIe", "drain the node and reboot it (RESTART_BM); check PCIe slot, power and thermals; if it recurs, open a hardware case"),
    one(92, Severity::Warning, "high single-bit ECC error rate", "reset the GPU when it is idle; if the rate persists, run dcgmi diag -r 3 and contact support"),
    one(94, Severity::Warning, "contained ECC error: the affected job was stopped, other jobs carry on", "restart the affected job; reset the GPU when it is idle (RESET_GPU) so the row is remapped"),
    one(95, Severity::Error, "uncontained ECC error: every job on the GPU is affected", "drain the GPU and reset it (RESET_GPU); check the row remapper afterwards"),
    one(119, Severity::Error, "GSP RPC timeout: the GPU's system processor stopped answering the driver", "drain and reset the GPU (RESET_GPU) or reboot the node (RESTART_BM); update the driver if it recurs"),
    one(120, Severity::Error, "GSP error", "drain and reset the GPU (RESET_GPU) or reboot the node (RESTART_BM); update the driver if it recurs"),
    one(140, Severity::Error, "unrecovered ECC error", "drain the GPU and reset it (RESET_GPU); check the row remapper afterwards"),
    XidSpec {
        first: 144,
        last: 150,
        severity: Severity::Warning,
        by_fatal_word: true,
        meaning: "NVLink error (Blackwell and later: 144 SAW, 145 RLW, 146 TLW, 147 TREX, 148 NVLPW, 149 NETIR, 150 MSE)",
        action: "a Fatal one: drain and reset the GPU (RESET_GPU) or reboot the node; check the links (nvidia-smi nvlink -s / -e) and the NVLink switch trays; a Nonfatal one: watch whether it recurs on the same link",
    },
    one(154, Severity::Error, "GPU recovery action changed: the driver states the reset or reboot the GPU now needs", "do what the line asks (GPU reset, node reboot) before the GPU runs jobs again"),
];

/// The entry of `code`, if the table has one.
#[must_use]
pub fn xid_spec(code: u32) -> Option<&'static XidSpec> {
    XIDS.iter().find(|s| (s.first..=s.last).contains(&code))
}

impl XidSpec {
    /// The severity of one line of this code, given its `Fatal` word.
    #[must_use]
    pub fn severity_of(&self, fatal: Option<bool>) -> Severity {
        match (self.by_fatal_word, fatal) {
            (true, Some(true)) => Severity::Error,
            _ => self.severity,
        }
    }
}

/// The severity of one NVSwitch SXid line, by its `Fatal`/`Non-fatal`
/// word (`info` when it has none) (NVIDIA's SXid page: a fatal SXid stops the switch's traffic and
/// needs a reset of the GPUs and switches; a non-fatal one is corrected).
#[must_use]
pub fn sxid_severity(fatal: Option<bool>) -> Severity {
    // A line that does not say (cut, or a continuation line) is the least
    // it could be: no more is known.
    match fatal {
        Some(true) => Severity::Error,
        Some(false) | None => Severity::Info,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_are_ordered_and_do_not_overlap() {
        for pair in XIDS.windows(2) {
            assert!(pair[0].first <= pair[0].last && pair[0].last < pair[1].first);
        }
    }

    #[test]
    fn application_codes_are_info_and_hardware_codes_are_not() {
        for code in [13, 31, 43, 45] {
            assert_eq!(xid_spec(code).unwrap().severity, Severity::Info, "{code}");
        }
        for code in [48, 62, 64, 74, 79, 95, 119, 120] {
            assert_eq!(xid_spec(code).unwrap().severity, Severity::Error, "{code}");
        }
        assert!(xid_spec(12345).is_none());
        let nvlink = xid_spec(149).unwrap();
        assert_eq!(nvlink.severity_of(Some(true)), Severity::Error);
        assert_eq!(nvlink.severity_of(Some(false)), Severity::Warning);
    }
}
