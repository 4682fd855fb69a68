//! Verdicts NVIDIA's own diagnostics already printed: `dcgmi diag` and
//! `dcgmi health` (`DG0xx`), and `mlxlink`'s view of a port (`ML0xx`).
//!
//! These tools judge the hardware themselves; the rules carry their verdicts
//! into the report with the evidence lines, and add what a reader needs: the
//! threshold behind a BER verdict and what to do next.

use super::context::{Context, SectionRef};
use super::{Coverage, Evidence, Finding, Severity, Subject, Threshold};
use crate::declare_rule;
use crate::model::dcgmi_diag::{DcgmiDiag, DcgmiHealth, DiagOutcome, DiagTest, HealthState};
use crate::model::mlxlink::{Mlxlink, ModuleQuantity, ModuleRange, ModuleReading};
use crate::parse::SectionData;
use crate::span::LineSpan;

declare_rule! {
    /// ### What it detects
    /// A `dcgmi diag` test that failed (`Fail`), or that warned (`Warn`).
    /// A failed Deployment check (`-r 1` software checks) is judged by what
    /// it checks: configuration and software (`Denylist`, `NVML Library`,
    /// `CUDA Main Library`, `CUDA Toolkit Library`, `Permissions and OS
    /// Blocks`, `Persistence Mode`, `Environment Variables`, `Graphics
    /// Processes`, `Fabric Manager`) apart from the checks that read the
    /// hardware (`Page Retirement/Row Remap`, `Inforom`, `Memory Health`,
    /// `SRAM Threshold Count`, `GPU Recovery State`).
    ///
    /// ### Why it matters
    /// The DCGM diagnostic (`-r 1` deployment checks up to `-r 4` stress)
    /// is NVIDIA's own acceptance test: a `Fail` of a hardware test (memory
    /// errors, PCIe or NVLink bandwidth, a stress test) or of a Deployment
    /// check that reads the hardware (pending or failed row remapping,
    /// retired pages, a corrupt InfoROM) means the GPU failed a check DCGM
    /// considers disqualifying, so it is an `error`. A failed configuration
    /// or software check (persistence mode off, a CUDA variable set, a
    /// graphics process running, a library that does not load) is not a
    /// hardware fault: the node is set up wrong, and it is a `warning` (DCGM
    /// 4 itself reports persistence mode, variables and graphics processes
    /// as `Warn`). In DCGM 4's `software` test the message names the check
    /// (`Persistence Mode: …`); a failure is a `warning` only when every
    /// message names a configuration or software check (cut before its
    /// messages, it is a `warning`: which check failed is not in the
    /// paste). A `Warn` is a
    /// `warning`. `Skip` is not a finding (the test does not apply or was
    /// not allowed on this system). A table that is not closed is partial:
    /// tests after the last row read are unknown.
    ///
    /// ### Evidence
    /// The test's row, the per-GPU results and DCGM's message, unwrapped.
    ///
    /// ### What to do
    /// Read DCGM's message: it names the error (DCGM_FR_…) and usually the
    /// next step. For a hardware failure drain the GPU, fix the cause (reset
    /// the GPU, reseat, replace), and run the same level again before
    /// returning it to service. For a configuration check fix the node:
    /// `nvidia-smi -pm 1` or `nvidia-persistenced` for persistence mode,
    /// unset the variables DCGM names, stop graphics processes, reinstall
    /// the driver or CUDA for a library, fix device permissions, unload
    /// nouveau, start the fabric manager; then run `dcgmi diag -r 1` again.
    ///
    /// ### Thresholds and sources
    /// DCGM's own verdicts (NVIDIA/DCGM `dcgmi/Diag.cpp`; the DCGM
    /// diagnostics user guide defines each test's limits). Which Deployment
    /// checks are configuration: NVIDIA/DCGM `nvvs/src/Software.cpp` (the
    /// checks and their results) and `dcgmlib/src/dcgm_errors.c` (each
    /// error's class: DCGM_FR_PERSISTENCE_MODE, DCGM_FR_BAD_CUDA_ENV,
    /// DCGM_FR_DENYLISTED_DRIVER, DCGM_FR_FILE_CREATE_PERMISSIONS are
    /// DCGM_ERROR_CONFIG; DCGM_FR_CANNOT_OPEN_LIB, DCGM_FR_GRAPHICS_PROCESSES
    /// are software; row remap, page retirement and InfoROM errors are
    /// DCGM_FR_EC_HARDWARE_MEMORY / _OTHER).
    pub static DG001 = {
        id: "DG001",
        name: "dcgm-diag-failed",
        family: Diagnostics,
        severity: Error,
        summary: "A dcgmi diag test failed (error; a configuration check: warning) or warned (warning)",
        needs: "dcgmi diag -r N",
        check: check_diag,
    }
}

declare_rule! {
    /// ### What it detects
    /// An incident in `dcgmi health -c`: a subsystem (PCIe, NVLink, memory,
    /// thermal, power…) of a GPU or switch in `Failure` or `Warning`.
    ///
    /// ### Why it matters
    /// DCGM's health watches compare live counters with NVIDIA's limits
    /// (PCIe replays per minute, NVLink CRC and replay errors, double-bit
    /// ECC, thermal violations). A `Failure` is an `error`; a `Warning` is a
    /// `warning`.
    ///
    /// ### Evidence
    /// The entity's row, the subsystem's row and DCGM's message.
    ///
    /// ### What to do
    /// Follow DCGM's message; for NVLink and PCIe incidents check the link
    /// (`nvidia-smi nvlink -e`, `lspci -vv`), for memory the retired pages
    /// and row remapping (`nvidia-smi -q -d PAGE_RETIREMENT,ROW_REMAPPER`).
    ///
    /// ### Thresholds and sources
    /// DCGM's own verdicts (NVIDIA/DCGM `dcgmi/Health.cpp`,
    /// `modules/health/DcgmHealthWatch.cpp`).
    pub static DG002 = {
        id: "DG002",
        name: "dcgm-health-incident",
        family: Diagnostics,
        severity: Error,
        summary: "dcgmi health reports a subsystem in Failure (error) or Warning (warning)",
        needs: "dcgmi health -c",
        check: check_health,
    }
}

declare_rule! {
    /// ### What it detects
    /// A port `mlxlink` shows not `Active`, or with a troubleshooting
    /// `Recommendation` other than "No issue was observed".
    ///
    /// ### Why it matters
    /// mlxlink reads the port's physical-layer state machine from the
    /// adapter firmware: a state other than `Active` means the link is not
    /// carrying traffic (`error`), and a recommendation is the firmware's
    /// own diagnosis of why the link is unhealthy or down (bad cable,
    /// speed mismatch, peer problem): a `warning` on an Active port.
    ///
    /// ### Evidence
    /// `State`, `Physical state`, `Status Opcode` and `Recommendation`.
    ///
    /// ### What to do
    /// Follow the recommendation; `mlxlink -d <dev> -m` shows the cable and
    /// module, `-c` the counters and BER.
    ///
    /// ### Thresholds and sources
    /// NVIDIA mlxlink (mstflint `mlxlink_commander.cpp`
    /// `showTroubleshootingInfo`): "No issue was observed" is the healthy
    /// recommendation.
    pub static ML001 = {
        id: "ML001",
        name: "mlxlink-port-state",
        family: LinkDiagnostics,
        severity: Warning,
        summary: "mlxlink shows a port not Active (error) or a troubleshooting recommendation (warning)",
        needs: "mlxlink -d <device>",
        check: check_mlxlink_state,
    }
}

declare_rule! {
    /// ### What it detects
    /// A port whose `Effective Physical BER` (after FEC) is above 1e-12, or
    /// whose `Raw Physical BER` (before FEC) is above what its FEC can
    /// correct, or above the early-warning pre-FEC limit.
    ///
    /// ### Why it matters
    /// The effective BER is what the link delivers: above 1e-12 it is out
    /// of the InfiniBand spec and errors reach the packets (`error`). A
    /// healthy PAM4 link shows the `15E-255` floor. The raw BER is the margin:
    /// HDR/NDR links normally sit near 1e-8…1e-7; above the FEC's limit
    /// errors escape (`error`), above 1e-6 the margin is eroding
    /// (`warning`).
    ///
    /// ### Evidence
    /// `Effective Physical BER`, `Raw Physical BER` and `FEC`.
    ///
    /// ### What to do
    /// Clean or replace the cable and transceiver (`mlxlink -m` for the
    /// optics), then clear the counters (`mlxlink -pc`) and read again.
    ///
    /// ### Thresholds and sources
    /// Effective BER 1e-12 (IBTA; DCGM DCGM_FR_NVLINK_EFFECTIVE_BER_THRESHOLD
    /// uses the same figure). Raw BER: 2.4e-4 for RS-FEC (544,514) (IEEE
    /// 802.3 KP4 FEC pre-FEC BER limit); 1e-6 early warning otherwise (the
    /// statistics' pre-FEC limit, `corrected_ber_threshold`).
    pub static ML002 = {
        id: "ML002",
        name: "mlxlink-ber",
        family: LinkDiagnostics,
        severity: Error,
        summary: "mlxlink effective BER above 1e-12, or raw BER above the FEC's limit",
        needs: "mlxlink -d <device> -c (or plain mlxlink with BER lines)",
        check: check_mlxlink_ber,
    }
}

declare_rule! {
    /// ### What it detects
    /// A port `mlxlink` shows Active at a speed below the fastest one both
    /// the port enables (`Enabled Link Speed`) and the cable supports
    /// (`Supported Cable Speed`).
    ///
    /// ### Why it matters
    /// When port and cable can both run faster, the slower speed comes from
    /// the far end (a slower or differently configured switch port) or from
    /// a link that trained down; either way the host gets less bandwidth
    /// than its hardware offers. One end's view cannot tell which, so this
    /// is `info`: on a fabric built alike it points at the far end.
    ///
    /// ### Evidence
    /// `Speed`, `Enabled Link Speed (Ext.)` and `Supported Cable Speed (Ext.)`.
    ///
    /// ### What to do
    /// Look at the far end (`iblinkinfo` marks it `Could be …`), its enabled
    /// speeds and firmware; retrain the link (`mlxlink -d <dev> -a TG`) after
    /// fixing the cause.
    ///
    /// ### Thresholds and sources
    /// The first speed of the enabled list that the cable also supports
    /// (mlxlink lists speeds fastest first); iblinkinfo's `Could be` rule is
    /// the same comparison made from both ends.
    pub static ML003 = {
        id: "ML003",
        name: "mlxlink-speed-below-capability",
        family: LinkDiagnostics,
        severity: Info,
        summary: "mlxlink port runs slower than both the port and its cable support",
        needs: "mlxlink -d <device> (Operational and Supported Info)",
        check: check_mlxlink_speed,
    }
}

declare_rule! {
    /// ### What it detects
    /// A reading of `mlxlink -m`'s `Module Info` (temperature, supply
    /// voltage, each lane's laser bias current, Rx and Tx optical power)
    /// outside the range the module itself prints after it in brackets
    /// (`[low..high]`, its alarm thresholds). Lanes are counted from 0, as
    /// mlxlink counts them.
    ///
    /// ### Why it matters
    /// A failing cable or transceiver shows here before the link drops.
    /// Readings past the point where light stops getting through are an
    /// `error`: Rx power below the low alarm (the receiver is short of
    /// light: dirty or damaged fibre, a failing far-end laser), Tx power
    /// below it or a bias current out of range (the module's own laser is
    /// failing), temperature above the high alarm (the laser runs outside
    /// its rating, and modules shut down there). Readings the link still
    /// runs through are a `warning`: Rx or Tx power above the high alarm
    /// (too much light: a short single-mode link without an attenuator),
    /// temperature below the low alarm, supply voltage out of range (the
    /// host's cage, not the light path).
    ///
    /// Only the module's printed range is used: no default range is
    /// assumed, so a reading printed without one, `N/A` (no diagnostics,
    /// passive copper) or against `[0..0]` (a module that stores no
    /// thresholds) is not judged, and its absence is not a fault. On a port
    /// that is not Active, a dark lane (`-40` dBm, mlxlink's floor for no
    /// light, or zero bias: the laser is off) is the down port's symptom,
    /// which ML001 reports, not a second finding; light that is there but
    /// weak is still named, as the likely cause. One finding per module,
    /// at its worst reading's severity.
    ///
    /// ### Evidence
    /// The `Module Info` lines out of range.
    ///
    /// ### What to do
    /// Rx power low: clean and inspect both fibre ends, reseat both ends,
    /// read the far end's Tx power (`mlxlink -m` there), then replace the
    /// cable or the far-end transceiver. Tx power or bias: replace the
    /// transceiver (or the active cable). Temperature: check the cooling
    /// (fans, airflow, blanking panels), then the module. Voltage: reseat,
    /// try another port, check the adapter's or switch's power.
    ///
    /// ### Thresholds and sources
    /// The module's own alarm thresholds (SFF-8636 / CMIS, as the firmware's
    /// PDDR module info page reports them: `temperature_high_th`,
    /// `rx_power_low_th`, …), printed by mlxlink (mstflint
    /// `mlxlink_commander.cpp` `prepareDDMSection`).
    pub static ML004 = {
        id: "ML004",
        name: "mlxlink-module-out-of-range",
        family: LinkDiagnostics,
        severity: Error,
        summary: "a cable or transceiver reading in mlxlink -m is outside the module's own alarm range",
        needs: "mlxlink -d <device> -m",
        check: check_mlxlink_module,
    }
}

declare_rule! {
    /// ### What it detects
    /// A port whose `mlxlink -c` `Link Down Counter` or `Link Error
    /// Recovery Counter` is above the limit perfquery's `LinkDownedCounter`
    /// and `LinkErrorRecoveryCounter` are held to.
    ///
    /// ### Why it matters
    /// They count the same events perfquery's counters do, read by the
    /// adapter firmware from the physical layer: each `Link Down` is the
    /// link dropping (jobs lose their connections, the subnet manager
    /// reroutes), each recovery the link retraining to survive errors, the
    /// step before it drops. A few are reboots and maintenance; more point
    /// at a flapping link or a marginal cable even when the BER, measured
    /// over the whole time since the counters were cleared, still looks
    /// fine. Counts since a clear are history (of unknown age unless
    /// `Time Since Last Clear` is printed), so this is a `warning`.
    ///
    /// ### Evidence
    /// `Link Down Counter`, `Link Error Recovery Counter` and, when printed,
    /// `Time Since Last Clear [Min]`.
    ///
    /// ### What to do
    /// Correlate with reboots and maintenance; clear the counters
    /// (`mlxlink -d <dev> -pc`) and read them again: if they grow, check the
    /// cable and module (`mlxlink -m`) and the switch port, then reseat or
    /// replace the cable.
    ///
    /// ### Thresholds and sources
    /// The `LinkDownedCounter` and `LinkErrorRecoveryCounter` limits
    /// (infiniband-diags `error_thresholds`; `--thresholds` overrides both
    /// tools at once): mlxlink prints the firmware's physical-layer counts
    /// of the same events (mstflint `mlxlink_commander.cpp` `showBer`).
    pub static ML005 = {
        id: "ML005",
        name: "mlxlink-link-counters",
        family: LinkDiagnostics,
        severity: Warning,
        summary: "mlxlink -c shows the link went down or retrained more often than the perfquery limits",
        needs: "mlxlink -d <device> -c",
        check: check_mlxlink_counters,
    }
}

/// Effective (post-FEC) BER limit: IBTA.
const EFFECTIVE_BER_LIMIT: f64 = 1e-12;
/// Pre-FEC BER a KP4 RS(544,514) FEC corrects (IEEE 802.3).
const KP4_RAW_BER_LIMIT: f64 = 2.4e-4;
/// Pre-FEC early warning (the statistics' corrected-error limit).
const RAW_BER_WARNING: f64 = 1e-6;
/// mlxlink's healthy recommendation.
const NO_ISSUE: &str = "No issue was observed";

fn host_subject(at: SectionRef<'_>) -> Subject {
    Subject::host(at.host().name())
}

fn evidence(at: SectionRef<'_>, text: impl Into<String>, span: LineSpan) -> Evidence {
    Evidence::new(
        format!("{}: {}", at.section.kind.name(), text.into()),
        span,
        at.source(),
    )
}

fn diag_sections<'a>(ctx: &Context<'a>) -> Vec<(SectionRef<'a>, &'a DcgmiDiag)> {
    ctx.sections()
        .filter_map(|at| match &at.section.data {
            SectionData::DcgmiDiag(d) => Some((at, d)),
            _ => None,
        })
        .collect()
}

/// DG001.
fn check_diag(ctx: &Context<'_>, out: &mut Vec<Finding>) -> Coverage {
    let sections = diag_sections(ctx);
    if sections.is_empty() {
        return Coverage::Skipped("no dcgmi diag output in the input".to_owned());
    }
    let mut gpu_results = 0;
    let mut reported = 0;
    for (at, d) in &sections {
        gpu_results += d.tests.iter().filter(|t| tests_the_gpus(t)).count();
        for test in &d.tests {
            let setup = setup_checks(test);
            let cut = message_cut(d, test);
            let severity = match test.outcome {
                Some(DiagOutcome::Fail) if setup.is_empty() && !cut => Severity::Error,
                Some(DiagOutcome::Fail | DiagOutcome::Warn) => Severity::Warning,
                _ => continue,
            };
            reported += 1;
            out.push(diag_finding(*at, d, test, severity, &setup, cut));
        }
    }
    // Only the software checks passed, every test was skipped, or the
    // table is cut before its GPU tests: the run says nothing of the GPUs,
    // and "healthy" would be concluded from tests that are not there.
    if gpu_results == 0 && reported == 0 {
        return Coverage::Skipped(
            "dcgmi diag output holds no GPU test result (only software checks or skipped tests, or the table is cut before its GPU tests)"
                .to_owned(),
        );
    }
    Coverage::Checked(gpu_results + reported)
}

/// A Deployment check that tests the node's configuration or software,
/// not the GPU's hardware, and how to fix it.
struct SetupCheck {
    /// The subtest's name as dcgmi prints it (nvvs/src/Software.cpp
    /// `SW_SUBTEST_*`).
    name: &'static str,
    /// What to do, after DCGM's `*_NEXT` advice (dcgmlib/dcgm_errors.h).
    fix: &'static str,
}

/// What to do when DCGM found a denylisted driver loaded.
const DENYLIST_FIX: &str = "unload the denylisted driver DCGM names (nouveau: blacklist it in modprobe.d and rebuild the initramfs) and load the NVIDIA driver";

/// The configuration and software checks of DCGM's software plugin
/// (NVIDIA/DCGM nvvs/src/Software.cpp); their errors are DCGM_ERROR_CONFIG
/// or DCGM_FR_EC_SOFTWARE_* in dcgmlib/src/dcgm_errors.c. Left out on
/// purpose: `Page Retirement/Row Remap`, `Inforom`, `Memory Health`, `SRAM
/// Threshold Count` and `GPU Recovery State` read the hardware (their
/// errors are DCGM_FR_EC_HARDWARE_*), and stay errors.
const SETUP_CHECKS: &[SetupCheck] = &[
    SetupCheck {
        name: "Denylist",
        fix: DENYLIST_FIX,
    },
    // The same check's name before DCGM 3.
    SetupCheck {
        name: "Blacklist",
        fix: DENYLIST_FIX,
    },
    SetupCheck {
        name: "NVML Library",
        fix: "reinstall the NVIDIA driver so libnvidia-ml.so loads (its version must match the loaded kernel module)",
    },
    SetupCheck {
        name: "CUDA Main Library",
        fix: "reinstall the NVIDIA driver so libcuda.so loads (its version must match the loaded kernel module)",
    },
    SetupCheck {
        name: "CUDA Toolkit Library",
        fix: "install the CUDA toolkit libraries DCGM names, or put them on the library path of nv-hostengine",
    },
    SetupCheck {
        name: "Permissions and OS Blocks",
        fix: "give dcgmi / nv-hostengine access to every /dev/nvidia* node (container device list, cgroup, file permissions) and a writable working directory",
    },
    SetupCheck {
        name: "Persistence Mode",
        fix: "enable persistence mode: `nvidia-smi -pm 1` as root, or enable the nvidia-persistenced service so it survives a reboot",
    },
    SetupCheck {
        name: "Environment Variables",
        fix: "unset the variable DCGM names (NSIGHT_CUDA_DEBUGGER, CUDA_INJECTION64_PATH, CUDA_AUTO_BOOST, CUDA_ENABLE_COREDUMP_ON_EXCEPTION, CUDA_PROFILE, COMPUTE_PROFILE, OPENCL_PROFILE …) in the environment of nv-hostengine and dcgmi",
    },
    SetupCheck {
        name: "Graphics Processes",
        fix: "stop the graphics processes on the GPU (X server, display manager) before running the diagnostic or workloads",
    },
    SetupCheck {
        name: "Fabric Manager",
        fix: "start nvidia-fabricmanager (its version must match the driver) and check its log",
    },
];

/// The configuration checks a failed or warned Deployment test names: its
/// own name (DCGM 2/3 print one row per check), or, for DCGM 4's single
/// `software` test, the check each message starts with (`Persistence
/// Mode: …`, Software.cpp `addError`). Empty when any part of it is a
/// hardware check or a check not known, or when no message says which
/// check failed: then the failure stays an error.
fn setup_checks(t: &DiagTest) -> Vec<&'static SetupCheck> {
    let find = |name: &str| {
        SETUP_CHECKS
            .iter()
            .find(|c| c.name.eq_ignore_ascii_case(name.trim()))
    };
    if t.name.eq_ignore_ascii_case("software") {
        let mut found: Vec<&'static SetupCheck> = Vec::new();
        for m in t.messages.iter().filter(|m| m.level != "info") {
            let Some(check) = m.text.split_once(':').and_then(|(name, _)| find(name)) else {
                return Vec::new();
            };
            if !found.iter().any(|c| std::ptr::eq(*c, check)) {
                found.push(check);
            }
        }
        return found;
    }
    let deployment = t
        .category
        .as_deref()
        .is_some_and(|c| c.eq_ignore_ascii_case("Deployment"));
    match find(&t.name) {
        Some(check) if deployment => vec![check],
        _ => Vec::new(),
    }
}

/// Whether DCGM 4's `software` test failed at the end of a table the paste
/// cut before any of its messages: which check failed (configuration or
/// hardware) is not in the paste, and the missing message is not evidence
/// of a hardware fault, so the failure is a `warning` (DCGM prints a
/// message with every failure, Software.cpp `addError`).
fn message_cut(d: &DcgmiDiag, test: &DiagTest) -> bool {
    !d.complete
        && test.name.eq_ignore_ascii_case("software")
        && d.tests.last().is_some_and(|last| std::ptr::eq(last, test))
        && test.messages.iter().all(|m| m.level == "info")
}

/// Whether a diag test's result says something of the GPUs: a test that
/// ran (passed, warned or failed) outside the software checks (DCGM 2/3's
/// `Metadata` and `Deployment` groups, DCGM 4's `software` test).
fn tests_the_gpus(t: &DiagTest) -> bool {
    let software = t.category.as_deref().is_some_and(|c| {
        c.eq_ignore_ascii_case("Metadata") || c.eq_ignore_ascii_case("Deployment")
    }) || t.name.eq_ignore_ascii_case("software");
    !software
        && matches!(
            t.outcome,
            Some(DiagOutcome::Pass | DiagOutcome::Warn | DiagOutcome::Fail)
        )
}

fn diag_finding(
    at: SectionRef<'_>,
    d: &DcgmiDiag,
    test: &DiagTest,
    severity: Severity,
    setup: &[&SetupCheck],
    message_cut: bool,
) -> Finding {
    let bad: Vec<&str> = test
        .entities
        .iter()
        .filter(|e| e.outcome >= DiagOutcome::Warn)
        .map(|e| e.entity.as_str())
        .collect();
    let gpus: Vec<u32> = test
        .entities
        .iter()
        .filter(|e| e.outcome >= DiagOutcome::Warn)
        .filter_map(|e| e.gpu)
        .collect();
    // DCGM 2/3 Deployment rows name no GPU; their message may
    // (`GPU 1 had uncorrectable memory errors …`).
    let message_gpus: Vec<u32> = test
        .messages
        .iter()
        .filter(|m| m.level != "info")
        .filter_map(|m| m.gpu)
        .collect();
    let mut subject = host_subject(at);
    // A test cut before its messages may be cut before its other GPUs'
    // rows too: one GPU read is not "only this GPU".
    match (gpus.as_slice(), message_gpus.as_slice()) {
        ([gpu], _) if !message_cut => subject.gpu = Some(*gpu),
        ([], [gpu, rest @ ..]) if rest.iter().all(|g| g == gpu) => subject.gpu = Some(*gpu),
        _ => {}
    }
    let word = if test.outcome == Some(DiagOutcome::Fail) {
        "failed"
    } else {
        "warned"
    };
    let mut message = format!(
        "dcgmi diag test `{}`{} {word}",
        test.name,
        test.category
            .as_deref()
            .map(|c| format!(" ({c})"))
            .unwrap_or_default()
    );
    if !bad.is_empty() {
        message.push_str(&format!(" on {}", bad.join(", ")));
    }
    if !setup.is_empty() {
        message.push_str(" (a configuration check, not a hardware fault)");
    } else if message_cut {
        message.push_str(" (which check failed is not in the paste: DCGM's message is cut off)");
    }
    if let Some(m) = test.messages.iter().find(|m| m.level != "info") {
        message.push_str(&format!(": {}", m.text));
    }
    if !d.complete {
        message.push_str(" (the table is not closed: tests after it were not in the paste)");
    }
    let mut f = DG001
        .finding(subject, message)
        .severity(severity)
        .evidence(evidence(
            at,
            format!(
                "{}: {}",
                test.name,
                test.outcome.map_or("?", DiagOutcome::word)
            ),
            test.span,
        ));
    for m in &test.messages {
        f = f.evidence(evidence(at, format!("{}: {}", m.level, m.text), m.span));
    }
    let version = d.metadata("DCGM Version").unwrap_or("unknown");
    if setup.is_empty() {
        return f.threshold(Threshold::new(
            "DCGM's verdict (Fail: error, Warn: warning)",
            format!("NVIDIA DCGM {version} diagnostic"),
        ))
        .remediation("Read DCGM's message (it names the DCGM_FR error); drain the GPU, fix the cause (reset, reseat, replace) and run the same diag level again before returning it to service.");
    }
    let fixes: Vec<String> = setup
        .iter()
        .map(|c| format!("{}: {}", c.name, c.fix))
        .collect();
    f.threshold(Threshold::new(
        "DCGM's verdict; a configuration or software check that fails is a warning",
        format!("NVIDIA DCGM {version} diagnostic; check classes from NVIDIA/DCGM nvvs/src/Software.cpp and dcgmlib/src/dcgm_errors.c (DCGM_ERROR_CONFIG, DCGM_FR_EC_SOFTWARE_*)"),
    ))
    .remediation(format!(
        "Fix the node's configuration, not the GPU. {}. Then run `dcgmi diag -r 1` again.",
        fixes.join("; ")
    ))
}

/// DG002.
fn check_health(ctx: &Context<'_>, out: &mut Vec<Finding>) -> Coverage {
    let sections: Vec<(SectionRef<'_>, &DcgmiHealth)> = ctx
        .sections()
        .filter_map(|at| match &at.section.data {
            SectionData::DcgmiHealth(h) => Some((at, h)),
            _ => None,
        })
        .collect();
    if sections.is_empty() {
        return Coverage::Skipped("no dcgmi health -c output in the input".to_owned());
    }
    let mut checked = 0;
    for (at, h) in &sections {
        checked += 1;
        for e in &h.entities {
            for i in &e.incidents {
                let severity = match i.state.or(e.state) {
                    Some(HealthState::Failure) => Severity::Error,
                    Some(HealthState::Warning | HealthState::InternalError) => Severity::Warning,
                    _ => continue,
                };
                let mut subject = host_subject(*at);
                if e.group.eq_ignore_ascii_case("GPU") {
                    subject.gpu = e.id.parse().ok();
                } else {
                    subject.device = Some(format!("{} {}", e.group, e.id));
                }
                out.push(
                    DG002
                        .finding(
                            subject,
                            format!(
                                "dcgmi health: {} {} {} is in {}: {}",
                                e.group,
                                e.id,
                                i.system,
                                if severity == Severity::Error { "Failure" } else { "Warning" },
                                i.message
                            ),
                        )
                        .severity(severity)
                        .evidence(evidence(
                            *at,
                            format!("{} {}: {}", e.group, e.id, i.system),
                            e.span,
                        ))
                        .evidence(evidence(*at, i.message.clone(), i.span))
                        .threshold(Threshold::new(
                            "DCGM's verdict (Failure: error, Warning: warning)",
                            "NVIDIA DCGM health watches",
                        ))
                        .remediation("Follow DCGM's message: for NVLink or PCIe check the link (nvidia-smi nvlink -e, lspci -vv); for memory the retired pages and row remapping (nvidia-smi -q -d PAGE_RETIREMENT,ROW_REMAPPER)."),
                );
            }
        }
    }
    Coverage::Checked(checked)
}

fn mlxlink_sections<'a>(ctx: &Context<'a>) -> Vec<(SectionRef<'a>, &'a Mlxlink)> {
    ctx.sections()
        .filter_map(|at| match &at.section.data {
            SectionData::Mlxlink(m) => Some((at, m)),
            _ => None,
        })
        .collect()
}

fn mlx_subject(at: SectionRef<'_>, m: &Mlxlink) -> Subject {
    Subject {
        device: m.device.clone(),
        ..host_subject(at)
    }
}

fn field_evidence(at: SectionRef<'_>, m: &Mlxlink, name: &str) -> Option<Evidence> {
    m.field(name).map(|f| {
        evidence(
            at,
            format!("{}: {}", f.name, f.value),
            LineSpan::line(f.line),
        )
    })
}

/// ML001.
fn check_mlxlink_state(ctx: &Context<'_>, out: &mut Vec<Finding>) -> Coverage {
    let sections = mlxlink_sections(ctx);
    let mut checked = 0;
    for (at, m) in &sections {
        let (state, recommendation) = (m.state.as_deref(), m.recommendation.as_deref());
        if state.is_none() && recommendation.is_none() {
            continue;
        }
        checked += 1;
        let down = state.is_some_and(|s| !s.eq_ignore_ascii_case("Active"));
        let advice = recommendation.filter(|r| {
            !r.trim_end_matches('.')
                .trim()
                .eq_ignore_ascii_case(NO_ISSUE)
        });
        if !down && advice.is_none() {
            continue;
        }
        let who = m.device.as_deref().unwrap_or("the port");
        let mut message = if down {
            format!(
                "mlxlink: {who} is {} (physical state {}), not Active",
                state.unwrap_or("?"),
                m.physical_state.as_deref().unwrap_or("?")
            )
        } else if state.is_some() {
            format!("mlxlink: {who} is Active but the firmware recommends action")
        } else {
            // Only the recommendation was pasted (`mlxlink -m`, a grep):
            // the port's state is not known, and not said.
            format!("mlxlink: the firmware recommends action on {who} (port state not shown)")
        };
        if let Some(r) = advice {
            message.push_str(&format!(": \"{r}\""));
        }
        let mut f = ML001
            .finding(mlx_subject(*at, m), message)
            .severity(if down {
                Severity::Error
            } else {
                Severity::Warning
            });
        for name in ["State", "Physical state", "Status Opcode", "Recommendation"] {
            if let Some(e) = field_evidence(*at, m, name) {
                f = f.evidence(e);
            }
        }
        out.push(
            f.threshold(Threshold::new(
                format!("State Active and Recommendation \"{NO_ISSUE}\""),
                "NVIDIA mlxlink troubleshooting info (mstflint mlxlink_commander.cpp)",
            ))
            .remediation("Follow the recommendation; check the cable and module (mlxlink -d <dev> -m) and the counters and BER (mlxlink -d <dev> -c)."),
        );
    }
    if checked == 0 {
        return Coverage::Skipped("no mlxlink output with State or Recommendation".to_owned());
    }
    Coverage::Checked(checked)
}

/// ML002.
fn check_mlxlink_ber(ctx: &Context<'_>, out: &mut Vec<Finding>) -> Coverage {
    let sections = mlxlink_sections(ctx);
    let mut checked = 0;
    for (at, m) in &sections {
        if m.effective_ber.is_none() && m.raw_ber.is_none() {
            continue;
        }
        checked += 1;
        let who = m.device.as_deref().unwrap_or("the port");
        let kp4 = m.fec.as_deref().is_some_and(|f| f.contains("544"));
        let verdict = if let Some(ber) = m.effective_ber.filter(|b| *b > EFFECTIVE_BER_LIMIT) {
            Some((
                Severity::Error,
                format!("mlxlink: {who} effective (post-FEC) BER {ber:.1e} is above 1e-12: errors reach the packets"),
                Threshold::new("effective BER > 1e-12", "IBTA; DCGM effective BER limit"),
            ))
        } else if let Some(ber) = m.raw_ber.filter(|b| kp4 && *b > KP4_RAW_BER_LIMIT) {
            Some((
                Severity::Error,
                format!("mlxlink: {who} raw (pre-FEC) BER {ber:.1e} is above what RS-FEC (544,514) corrects (2.4e-4)"),
                Threshold::new("raw BER > 2.4e-4 with RS-FEC (544,514)", "IEEE 802.3 KP4 FEC pre-FEC BER limit"),
            ))
        } else {
            m.raw_ber.filter(|b| *b > RAW_BER_WARNING).map(|ber| {
                (
                    Severity::Warning,
                    format!("mlxlink: {who} raw (pre-FEC) BER {ber:.1e} is above 1e-6: the link's margin is eroding (healthy HDR/NDR links sit near 1e-8)"),
                    Threshold::new("raw BER > 1e-6", "fabricscope pre-FEC early warning (statistics' corrected_ber_threshold)"),
                )
            })
        };
        let Some((severity, message, threshold)) = verdict else {
            continue;
        };
        let mut f = ML002
            .finding(mlx_subject(*at, m), message)
            .severity(severity);
        for name in ["Effective Physical BER", "Raw Physical BER", "FEC"] {
            if let Some(e) = field_evidence(*at, m, name) {
                f = f.evidence(e);
            }
        }
        out.push(
            f.threshold(threshold)
                .remediation("Clean or replace the cable and transceiver (mlxlink -m for the optics), clear the counters (mlxlink -pc) and read the BER again."),
        );
    }
    if checked == 0 {
        return Coverage::Skipped("no mlxlink output with BER lines (run mlxlink -c)".to_owned());
    }
    Coverage::Checked(checked)
}

/// `0x000007f2 (NDR,HDR,EDR)` or `0x000017f2(200G,100G_2X)` → the names.
fn speed_list(value: &str) -> Vec<&str> {
    let Some(inner) = value
        .split_once('(')
        .and_then(|(_, rest)| rest.rsplit_once(')'))
        .map(|(inner, _)| inner)
    else {
        return Vec::new();
    };
    inner
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .collect()
}

/// `IB-NDR` → `NDR`; `100G_2X` → `100G`: the speed without lanes or prefix.
fn speed_name(s: &str) -> &str {
    let s = s.trim();
    let s = s.strip_prefix("IB-").unwrap_or(s);
    s.split('_').next().unwrap_or(s)
}

/// ML003.
fn check_mlxlink_speed(ctx: &Context<'_>, out: &mut Vec<Finding>) -> Coverage {
    let mut checked = 0;
    for (at, m) in mlxlink_sections(ctx) {
        let (Some(speed), Some(enabled), Some(cable)) = (
            m.speed.as_deref(),
            m.field("Enabled Link Speed (Ext.)")
                .or_else(|| m.field("Enabled Link Speed")),
            m.field("Supported Cable Speed (Ext.)")
                .or_else(|| m.field("Supported Cable Speed")),
        ) else {
            continue;
        };
        if !m
            .state
            .as_deref()
            .is_some_and(|s| s.eq_ignore_ascii_case("Active"))
        {
            continue;
        }
        let cable_speeds: Vec<&str> = speed_list(&cable.value)
            .into_iter()
            .map(speed_name)
            .collect();
        let common: Vec<&str> = speed_list(&enabled.value)
            .into_iter()
            .map(speed_name)
            .filter(|s| cable_speeds.contains(s))
            .collect();
        let current = speed_name(speed);
        let (Some(best), Some(at_index)) = (
            common.first(),
            common.iter().position(|s| s.eq_ignore_ascii_case(current)),
        ) else {
            continue;
        };
        checked += 1;
        if at_index == 0 {
            continue;
        }
        let who = m.device.as_deref().unwrap_or("the port");
        let mut f = ML003
            .finding(
                mlx_subject(at, m),
                format!("mlxlink: {who} runs at {current} while the port and its cable both support {best}: the far end is slower, or the link trained down"),
            )
            .severity(Severity::Info);
        for name in ["Speed", &enabled.name, &cable.name] {
            if let Some(e) = field_evidence(at, m, name) {
                f = f.evidence(e);
            }
        }
        out.push(
            f.threshold(Threshold::new(
                format!("{best} (fastest speed enabled on the port and supported by the cable)"),
                "mlxlink Supported Info; iblinkinfo `Could be` rule",
            ))
            .remediation("Check the far end (iblinkinfo shows `Could be …`), its enabled speeds and firmware; retrain the link after fixing the cause."),
        );
    }
    if checked == 0 {
        return Coverage::Skipped(
            "no mlxlink output of an Active port with its speed, enabled speeds and cable speeds"
                .to_owned(),
        );
    }
    Coverage::Checked(checked)
}

/// mlxlink's optical power for no light at all (`getPower` of 0 µW).
const DARK_DBM: f64 = -40.0;

/// Which side of its range a reading fell.
#[derive(Clone, Copy, PartialEq)]
enum Side {
    Low,
    High,
}

/// How bad a reading past one side of its range is (see ML004's doc).
fn module_severity(quantity: ModuleQuantity, side: Side) -> Severity {
    match (quantity, side) {
        (ModuleQuantity::RxPower | ModuleQuantity::TxPower, Side::Low)
        | (ModuleQuantity::BiasCurrent, _)
        | (ModuleQuantity::Temperature, Side::High) => Severity::Error,
        _ => Severity::Warning,
    }
}

/// What a reading past one side of its range most often means.
fn module_cause(quantity: ModuleQuantity, side: Side) -> &'static str {
    match (quantity, side) {
        (ModuleQuantity::RxPower, Side::Low) => {
            "too little light arrives: dirty or damaged fibre, or a failing far-end laser"
        }
        (ModuleQuantity::RxPower, Side::High) => {
            "too much light arrives: the receiver is overloaded"
        }
        (ModuleQuantity::TxPower, Side::Low) => "the module's laser sends too little light",
        (ModuleQuantity::TxPower, Side::High) => "the module's laser sends too much light",
        (ModuleQuantity::BiasCurrent, _) => "the module's laser is failing",
        (ModuleQuantity::Temperature, Side::High) => "the module runs too hot",
        (ModuleQuantity::Temperature, Side::Low) => "the module reads too cold",
        (ModuleQuantity::Voltage, _) => "the module's supply voltage is out of its range",
    }
}

/// What to do about a reading past one side of its range.
fn module_remedy(quantity: ModuleQuantity, side: Side) -> &'static str {
    match (quantity, side) {
        (ModuleQuantity::RxPower, Side::Low) => "Rx power low: clean and inspect both fibre ends, reseat both ends of the cable, read the far end's Tx power and bias (mlxlink -m there); replace the cable, or the far-end transceiver if its Tx is low.",
        (ModuleQuantity::RxPower, Side::High) => "Rx power high: on a short single-mode link add an attenuator or use an optic rated for the length.",
        (ModuleQuantity::TxPower | ModuleQuantity::BiasCurrent, _) => "Tx power or bias out of range: replace the transceiver (or the active cable).",
        (ModuleQuantity::Temperature, _) => "Temperature: check the cooling (fans, airflow, blanking panels, hot neighbours), reseat the module, replace it if it alone runs out of range.",
        (ModuleQuantity::Voltage, _) => "Voltage: reseat the module and try another port; if several modules show it, check the adapter's or switch's power.",
    }
}

/// Whether a value is the reading of a lane with its light or laser off.
fn is_dark(quantity: ModuleQuantity, value: f64) -> bool {
    match quantity {
        ModuleQuantity::RxPower | ModuleQuantity::TxPower => value <= DARK_DBM,
        ModuleQuantity::BiasCurrent => value <= 0.0,
        _ => false,
    }
}

/// `Rx power -14.31 dBm on lane 1 is below the module's low alarm -10.41
/// dBm: …`: the values of one reading past one side of its range.
fn describe_out_of_range(
    r: &ModuleReading,
    range: ModuleRange,
    side: Side,
    lanes: &[(usize, f64)],
) -> String {
    let unit = if r.unit.is_empty() {
        String::new()
    } else {
        format!(" {}", r.unit)
    };
    let values = lanes
        .iter()
        .map(|(lane, v)| {
            if r.quantity.per_lane() {
                format!("{v}{unit} on lane {lane}")
            } else {
                format!("{v}{unit}")
            }
        })
        .collect::<Vec<_>>()
        .join(", ");
    let (word, limit) = match side {
        Side::Low => ("below the module's low alarm", range.low),
        Side::High => ("above the module's high alarm", range.high),
    };
    format!(
        "{} {values} is {word} {limit}{unit}: {}",
        r.quantity.label(),
        module_cause(r.quantity, side)
    )
}

/// One reading past one side of its range, as ML004 reports it.
struct OutOfRange {
    severity: Severity,
    text: String,
    quantity: ModuleQuantity,
    side: Side,
    line: usize,
}

/// The readings of one module outside their printed range. On a port known
/// not to be Active, dark lanes are the down port's (ML001), not the
/// module's.
fn out_of_range(m: &Mlxlink) -> Vec<OutOfRange> {
    let down = m
        .state
        .as_deref()
        .is_some_and(|s| !s.eq_ignore_ascii_case("Active"));
    let mut found = Vec::new();
    for r in &m.module {
        let Some(range) = r.range.filter(|range| range.is_set()) else {
            continue;
        };
        for side in [Side::Low, Side::High] {
            let lanes: Vec<(usize, f64)> = r
                .values
                .iter()
                .enumerate()
                .filter_map(|(lane, v)| v.map(|v| (lane, v)))
                .filter(|(_, v)| !(down && is_dark(r.quantity, *v)))
                .filter(|(_, v)| match side {
                    Side::Low => *v < range.low,
                    Side::High => *v > range.high,
                })
                .collect();
            if !lanes.is_empty() {
                found.push(OutOfRange {
                    severity: module_severity(r.quantity, side),
                    text: describe_out_of_range(r, range, side, &lanes),
                    quantity: r.quantity,
                    side,
                    line: r.line,
                });
            }
        }
    }
    found
}

/// ML004.
fn check_mlxlink_module(ctx: &Context<'_>, out: &mut Vec<Finding>) -> Coverage {
    let mut checked = 0;
    for (at, m) in mlxlink_sections(ctx) {
        if !m
            .module
            .iter()
            .any(|r| r.range.is_some_and(ModuleRange::is_set))
        {
            continue;
        }
        checked += 1;
        let problems = out_of_range(m);
        let Some(severity) = problems.iter().map(|p| p.severity).max() else {
            continue;
        };
        let who = m.device.as_deref().unwrap_or("the port");
        let message = format!(
            "mlxlink: {who}'s module: {}",
            problems
                .iter()
                .map(|p| p.text.as_str())
                .collect::<Vec<_>>()
                .join("; ")
        );
        let mut f = ML004
            .finding(mlx_subject(at, m), message)
            .severity(severity);
        let lines: Vec<usize> = problems.iter().map(|p| p.line).collect();
        for field in m
            .sections
            .iter()
            .flat_map(|s| &s.fields)
            .filter(|field| lines.contains(&field.line))
        {
            f = f.evidence(evidence(
                at,
                format!("{}: {}", field.name, field.value),
                LineSpan::line(field.line),
            ));
        }
        let mut remedies: Vec<&str> = Vec::new();
        for p in &problems {
            let remedy = module_remedy(p.quantity, p.side);
            if !remedies.contains(&remedy) {
                remedies.push(remedy);
            }
        }
        out.push(
            f.threshold(Threshold::new(
                "the module's own range, printed after each reading as [low..high]",
                "the module's alarm thresholds (SFF-8636 / CMIS, printed by mlxlink)",
            ))
            .remediation(remedies.join(" ")),
        );
    }
    if checked == 0 {
        return Coverage::Skipped(
            "no mlxlink Module Info reading with the module's range (run mlxlink -m; modules without diagnostics print none)"
                .to_owned(),
        );
    }
    Coverage::Checked(checked)
}

/// The mlxlink link counters ML005 reads: the record's name, the
/// perfquery counter whose limit it is held to, and what a count means.
const LINK_COUNTERS: &[(&str, &str, &str)] = &[
    (
        "Link Down Counter",
        "LinkDownedCounter",
        "the link went down repeatedly (flapping, unless reboots explain it)",
    ),
    (
        "Link Error Recovery Counter",
        "LinkErrorRecoveryCounter",
        "the link retrained repeatedly to survive errors (a marginal cable or port)",
    ),
];

/// ML005.
fn check_mlxlink_counters(ctx: &Context<'_>, out: &mut Vec<Finding>) -> Coverage {
    let mut checked = 0;
    for (at, m) in mlxlink_sections(ctx) {
        let counts = [m.link_down_counter, m.link_error_recovery_counter];
        if counts.iter().all(Option::is_none) {
            continue;
        }
        checked += 1;
        // Each counter over its limit: (record, value, limit, source, meaning).
        let over: Vec<(&str, u64, f64, &str, &str)> = LINK_COUNTERS
            .iter()
            .zip(counts)
            .filter_map(|(&(record, limit_name, meaning), count)| {
                let count = count?;
                let (limit, source) = ctx
                    .thresholds
                    .value_and_source(limit_name, (10.0, super::thresholds::IB_DIAGS_SOURCE));
                #[allow(clippy::cast_precision_loss)]
                let is_over = count as f64 > limit;
                is_over.then_some((record, count, limit, source, meaning))
            })
            .collect();
        if over.is_empty() {
            continue;
        }
        let who = m.device.as_deref().unwrap_or("the port");
        // The age of the counts, when printed: a reader weighs 12 downs in
        // a day differently from 12 in a year.
        let since = m
            .field("Time Since Last Clear [Min]")
            .map(|f| format!(" in the {} min since the counters were cleared", f.value))
            .unwrap_or_default();
        let message = format!(
            "mlxlink: {who}: {}{since}",
            over.iter()
                .map(|(record, count, limit, _, meaning)| format!(
                    "{record} = {count} (limit {limit}): {meaning}"
                ))
                .collect::<Vec<_>>()
                .join("; ")
        );
        let mut f = ML005.finding(mlx_subject(at, m), message);
        for (record, ..) in &over {
            if let Some(e) = field_evidence(at, m, record) {
                f = f.evidence(e);
            }
        }
        if let Some(e) = field_evidence(at, m, "Time Since Last Clear [Min]") {
            f = f.evidence(e);
        }
        let limits = over
            .iter()
            .map(|(record, _, limit, ..)| format!("{record} > {limit}"))
            .collect::<Vec<_>>()
            .join(", ");
        let source = over.first().map_or("", |o| o.3);
        out.push(
            f.threshold(Threshold::new(
                format!("{limits} (the perfquery LinkDownedCounter / LinkErrorRecoveryCounter limits)"),
                source,
            ))
            .remediation("Correlate with reboots and maintenance; clear the counters (mlxlink -d <dev> -pc) and read them again; if they grow, check the cable and module (mlxlink -m) and the switch port, then reseat or replace the cable."),
        );
    }
    if checked == 0 {
        return Coverage::Skipped(
            "no mlxlink Link Down or Link Error Recovery counter in the input (run mlxlink -c)"
                .to_owned(),
        );
    }
    Coverage::Checked(checked)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::testing::{findings_of, skipped_reason};

    fn mlx(state: &str, rec: &str, eff: &str, raw: &str) -> String {
        format!(
            "$ mlxlink -d mlx5_2 -c\n\nOperational Info\n----------------\nState                              : {state}\nPhysical state                     : LinkUp\nSpeed                              : IB-NDR\nWidth                              : 4x\nFEC                                : Standard_RS-FEC - (544,514)\n\nTroubleshooting Info\n--------------------\nStatus Opcode                      : 0\nRecommendation                     : {rec}\n\nPhysical Counters and BER Info\n------------------------------\nEffective Physical Errors          : 0\nEffective Physical BER             : {eff}\nRaw Physical BER                   : {raw}\n"
        )
    }

    /// A DCGM table with the given rows under `Deployment`, each padded to
    /// dcgmi's column widths.
    fn deployment(rows: &[(&str, &str)]) -> String {
        let mut s = String::from("$ dcgmi diag -r 1\nSuccessfully ran diagnostic for group.\n+---------------------------+------------------------------------------------+\n| Diagnostic                | Result                                         |\n+===========================+================================================+\n|-----  Deployment  --------+------------------------------------------------|\n");
        for (name, value) in rows {
            s.push_str(&format!("| {name:<25} | {value:<46} |\n"));
        }
        s.push_str(
            "+---------------------------+------------------------------------------------+\n",
        );
        s
    }

    #[test]
    fn deployment_failures_are_warnings_only_when_every_named_check_is_configuration() {
        // DCGM 4: one message names a configuration check, the other a
        // hardware one: the hardware one decides.
        let mixed = deployment(&[
            ("software", "Fail"),
            ("", "GPU0: Fail"),
            (
                "Warning: GPU0",
                "Persistence Mode: Persistence mode for GPU 0 i",
            ),
            ("", "s disabled."),
            (
                "Warning: GPU0",
                "Page Retirement/Row Remap: GPU 0 had memory e",
            ),
            ("", "rrors and row remappings are pending"),
        ]);
        let f = findings_of(&DG001, &mixed);
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].severity, Severity::Error, "{}", f[0].message);
        // DCGM 4 with no message saying which check failed: not known to be
        // configuration.
        let bare = deployment(&[("software", "Fail"), ("", "GPU0: Fail")]);
        assert_eq!(findings_of(&DG001, &bare)[0].severity, Severity::Error);
        // The same table cut before its message: which check failed is not
        // in the paste.
        let cut = bare.lines().take(8).collect::<Vec<_>>().join("\n");
        let f = findings_of(&DG001, &cut);
        assert_eq!(f[0].severity, Severity::Warning, "{}", f[0].message);
        assert!(f[0].message.contains("cut off"), "{}", f[0].message);
        // DCGM 3: Inforom reads the hardware; Environment Variables and
        // Graphics Processes are configuration.
        let rows = deployment(&[
            ("Environment Variables", "Fail"),
            ("Error", "Found CUDA performance-limiting environment var"),
            ("", "iable 'CUDA_PROFILE'."),
            ("Graphics Processes", "Warn"),
            ("Inforom", "Fail"),
        ]);
        let f = findings_of(&DG001, &rows);
        let by_test: Vec<(Severity, bool)> = f
            .iter()
            .map(|f| (f.severity, f.remediation.contains("unset the variable")))
            .collect();
        assert_eq!(
            by_test,
            [
                (Severity::Warning, true),
                (Severity::Warning, false),
                (Severity::Error, false)
            ]
        );
        assert!(f[1].remediation.contains("graphics processes"));
    }

    /// `dcgmi diag -r 2 --iterations 2` on DCGM 4, both runs failing
    /// `memory` on GPU3, then dcgmi's closing line (dcgmi/Diag.cpp
    /// `RunStartDiag`).
    fn iterations_dcgm4(last: &str) -> String {
        let table = "Successfully ran diagnostic for group.
+---------------------------+------------------------------------------------+
| Diagnostic                | Result                                         |
+===========================+================================================+
|-----  Metadata  ----------+------------------------------------------------|
| DCGM Version              | 4.3.1                                          |
|-----  Deployment  --------+------------------------------------------------|
| software                  | Pass                                           |
|                           | GPU2: Pass                                     |
|                           | GPU3: Pass                                     |
+-----  Hardware  ----------+------------------------------------------------+
| memory                    | Fail                                           |
|                           | GPU2: Pass                                     |
|                           | GPU3: Fail                                     |
| Warning: GPU3             | A DBE has been detected on GPU 3.              |
+---------------------------+------------------------------------------------+
";
        format!(
            "$ dcgmi diag -r 2 --iterations 2\n\nRunning iteration 1 of 2...\n{table}\nRunning iteration 2 of 2...\n{table}{last}\n"
        )
    }

    #[test]
    fn every_iteration_is_a_whole_table_and_dcgmis_own_lines_are_read() {
        for last in [
            "Aborting the iterative runs of the diagnostic due to failure: The diagnostic returned failure",
            "Passed all 2 runs of the diagnostic",
        ] {
            let text = iterations_dcgm4(last);
            let f = findings_of(&DG001, &text);
            assert_eq!(f.len(), 2, "one failure per run: {f:?}");
            for f in &f {
                assert_eq!(f.severity, Severity::Error);
                assert_eq!(f.subject.gpu, Some(3));
                assert!(
                    !f.message.contains("not closed"),
                    "a closed table judged as cut: {}",
                    f.message
                );
            }
            let partial = findings_of(&crate::rules::input::IN001, &text);
            assert!(partial.is_empty(), "not cut: {partial:?}");
            let unread = findings_of(&crate::rules::input::IN002, &text);
            assert!(unread.is_empty(), "dcgmi's own lines: {unread:?}");
        }
    }

    #[test]
    fn a_dcgm4_warned_test_stays_a_warning_though_its_gpu_row_says_fail() {
        // dcgmi prints an entity's warning as `Fail` (Diag.cpp
        // HelperDisplayDiagResult, DDR_NO_DISPLAY_WARN); the test row says Warn.
        let text = iterations_dcgm4("").replace(
            "| memory                    | Fail ",
            "| pcie                      | Warn ",
        );
        let f = findings_of(&DG001, &text);
        assert_eq!(f.len(), 2, "{f:?}");
        assert!(f.iter().all(|f| f.severity == Severity::Warning), "{f:?}");
        assert!(f.iter().all(|f| f.subject.gpu == Some(3)), "{f:?}");
    }

    #[test]
    fn a_diagnostic_that_could_not_run_is_not_a_cut_table() {
        let text = "$ dcgmi diag -r 3\nError: Unable to complete diagnostic for group 2147483647. Return: (-30) The NVVS returned an error.\n";
        let partial = findings_of(&crate::rules::input::IN001, text);
        assert!(partial.is_empty(), "{partial:?}");
        assert!(findings_of(&DG001, text).is_empty());
    }

    #[test]
    fn mlxlink_healthy_port_is_quiet_and_problems_are_reported() {
        let ok = mlx("Active", NO_ISSUE, "15E-255", "2E-8");
        assert!(findings_of(&ML001, &ok).is_empty());
        assert!(findings_of(&ML002, &ok).is_empty());
        let f = findings_of(&ML001, &mlx("Polling", "Cable is unplugged", "N/A", "N/A"));
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].severity, Severity::Error);
        assert!(
            f[0].message.contains("Cable is unplugged"),
            "{}",
            f[0].message
        );
        assert_eq!(f[0].subject.device.as_deref(), Some("mlx5_2"));
        let f = findings_of(&ML002, &mlx("Active", NO_ISSUE, "3E-11", "2E-8"));
        assert_eq!(f[0].severity, Severity::Error);
        let f = findings_of(&ML002, &mlx("Active", NO_ISSUE, "15E-255", "5E-6"));
        assert_eq!(f[0].severity, Severity::Warning);
        let f = findings_of(&ML002, &mlx("Active", NO_ISSUE, "15E-255", "3E-4"));
        assert_eq!(f[0].severity, Severity::Error);
        assert!(skipped_reason(&ML002, "CA 'x'\n\tCA type: MT4129\n").is_some());
    }

    /// `mlxlink -c`'s counter section with the link counters given.
    fn counters(down: u64, recoveries: u64) -> String {
        format!(
            "$ mlxlink -d mlx5_5 -c\n\nPhysical Counters and BER Info\n------------------------------\nTime Since Last Clear [Min]        : 1440.0\nEffective Physical Errors          : 0\nEffective Physical BER             : 15E-255\nRaw Physical BER                   : 3E-9\nLink Down Counter                  : {down}\nLink Error Recovery Counter        : {recoveries}\n"
        )
    }

    #[test]
    fn link_counters_over_the_perfquery_limits_are_a_warning_with_their_age() {
        // At the limits (10 each, as perfquery's): quiet, but checked.
        assert!(findings_of(&ML005, &counters(10, 10)).is_empty());
        let f = findings_of(&ML005, &counters(11, 0));
        assert_eq!(f.len(), 1, "{f:#?}");
        assert_eq!(f[0].severity, Severity::Warning);
        assert_eq!(f[0].subject.device.as_deref(), Some("mlx5_5"));
        assert!(
            f[0].message.contains("Link Down Counter = 11 (limit 10)")
                && f[0]
                    .message
                    .contains("in the 1440.0 min since the counters were cleared"),
            "{}",
            f[0].message
        );
        // The counter's line and the age line (lines 9 and 5).
        let lines: Vec<LineSpan> = f[0].evidence.iter().map(|e| e.span).collect();
        assert_eq!(lines, [LineSpan::line(9), LineSpan::line(5)]);
        // Both over: one finding naming both.
        let f = findings_of(&ML005, &counters(12, 40));
        assert_eq!(f.len(), 1, "{f:#?}");
        assert!(
            f[0].message.contains("Link Error Recovery Counter = 40"),
            "{}",
            f[0].message
        );
        assert_eq!(f[0].evidence.len(), 3);
        // Without the counters (a BER-only grep) there is nothing to judge.
        let ber_only = "$ mlxlink -d mlx5_5 -c | grep BER\nEffective Physical BER             : 15E-255\nRaw Physical BER                   : 3E-9\n";
        assert!(skipped_reason(&ML005, ber_only).is_some());
    }

    #[test]
    fn a_recommendation_without_the_state_does_not_say_active() {
        let text = "$ mlxlink -d mlx5_4 -m\n\nTroubleshooting Info\n--------------------\nStatus Opcode                      : 49\nGroup Opcode                       : N/A\nRecommendation                     : Bad signal integrity\n";
        let f = findings_of(&ML001, text);
        assert_eq!(f.len(), 1, "{f:#?}");
        assert_eq!(f[0].severity, Severity::Warning);
        assert!(!f[0].message.contains("Active"), "{}", f[0].message);
        assert!(
            f[0].message.contains("port state not shown"),
            "{}",
            f[0].message
        );
        let f = findings_of(&ML001, &mlx("Active", "Bad signal integrity", "N/A", "N/A"));
        assert!(f[0].message.contains("is Active but"), "{}", f[0].message);
    }

    fn module(state: &str, temp: &str, bias: &str, rx: &str, tx: &str) -> String {
        format!(
            "$ mlxlink -d mlx5_3 -m\n\nOperational Info\n----------------\nState                              : {state}\nPhysical state                     : LinkUp\n\nModule Info\n-----------\nTemperature [C]                    : {temp}\nVoltage [mV]                       : 3301.5 [2970..3630]\nBias Current [mA]                  : {bias}\nRx Power Current [dBm]             : {rx}\nTx Power Current [dBm]             : {tx}\n"
        )
    }

    const TEMP: &str = "44 [-5..75]";
    const BIAS: &str = "7.9,8.1,8,7.7 [2..15]";
    const RX: &str = "1.1,0.8,1.3,0.9 [-10.41..6]";
    const TX: &str = "1,1.2,0.9,1.1 [-8.508..5]";

    #[test]
    fn a_lane_below_the_modules_rx_alarm_is_an_error_with_its_line() {
        assert!(findings_of(&ML004, &module("Active", TEMP, BIAS, RX, TX)).is_empty());
        let rx = "1.1,-13.5,1.3,0.9 [-10.41..6]";
        let f = findings_of(&ML004, &module("Active", TEMP, BIAS, rx, TX));
        assert_eq!(f.len(), 1, "{f:#?}");
        assert_eq!(f[0].severity, Severity::Error);
        assert_eq!(f[0].subject.device.as_deref(), Some("mlx5_3"));
        assert!(
            f[0].message.contains(
                "Rx power -13.5 dBm on lane 1 is below the module's low alarm -10.41 dBm"
            ),
            "{}",
            f[0].message
        );
        assert_eq!(f[0].evidence.len(), 1);
        assert_eq!(f[0].evidence[0].span, LineSpan::line(13));
        assert!(f[0].remediation.contains("far end"));
        // Exactly at the alarm is still inside the range.
        let rx = "1.1,-10.41,1.3,0.9 [-10.41..6]";
        assert!(findings_of(&ML004, &module("Active", TEMP, BIAS, rx, TX)).is_empty());
    }

    #[test]
    fn severity_follows_the_light_path_and_one_module_is_one_finding() {
        let f = findings_of(&ML004, &module("Active", "81 [-5..75]", BIAS, RX, TX));
        assert_eq!(f[0].severity, Severity::Error);
        assert!(
            f[0].message.contains("temperature 81 C is above"),
            "{}",
            f[0].message
        );
        let f = findings_of(&ML004, &module("Active", "-7 [-5..75]", BIAS, RX, TX));
        assert_eq!(f[0].severity, Severity::Warning);
        let f = findings_of(
            &ML004,
            &module("Active", TEMP, BIAS, "6.5,0.8,1.3,0.9 [-10.41..6]", TX),
        );
        assert_eq!(f[0].severity, Severity::Warning);
        let f = findings_of(
            &ML004,
            &module("Active", TEMP, "7.9,16.2,8,1.1 [2..15]", RX, TX),
        );
        assert_eq!(f[0].severity, Severity::Error);
        assert!(
            f[0].message.contains("1.1 mA on lane 3 is below"),
            "{}",
            f[0].message
        );
        assert!(
            f[0].message.contains("16.2 mA on lane 1 is above"),
            "{}",
            f[0].message
        );
        // Hot and overloaded: one finding at the worse of the two.
        let f = findings_of(
            &ML004,
            &module(
                "Active",
                "80 [-5..75]",
                BIAS,
                "6.5,0.8,1.3,0.9 [-10.41..6]",
                TX,
            ),
        );
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].severity, Severity::Error);
        assert_eq!(f[0].evidence.len(), 2);
    }

    #[test]
    fn dark_lanes_of_a_down_port_are_ml001s_but_weak_light_is_named() {
        let dark = "-40,-40,-40,-40 [-10.41..6]";
        let off = "0,0,0,0 [2..15]";
        let tx_off = "-40,-40,-40,-40 [-8.508..5]";
        let down = module("Polling", TEMP, off, dark, tx_off);
        assert!(findings_of(&ML004, &down).is_empty());
        assert_eq!(findings_of(&ML001, &down).len(), 1);
        // The same dark lane on an Active port is this module's fault.
        let f = findings_of(
            &ML004,
            &module("Active", TEMP, BIAS, "1,1,1,-40.000 [-10.41..6]", TX),
        );
        assert!(
            f[0].message.contains("-40 dBm on lane 3"),
            "{}",
            f[0].message
        );
        // Some light, too little: the likely cause of the port being down.
        let f = findings_of(
            &ML004,
            &module(
                "Polling",
                TEMP,
                off,
                "-18.2,-40,-40,-40 [-10.41..6]",
                tx_off,
            ),
        );
        assert_eq!(f.len(), 1, "{f:#?}");
        assert!(
            f[0].message.contains("-18.2 dBm on lane 0"),
            "{}",
            f[0].message
        );
        assert!(!f[0].message.contains("lane 1"), "{}", f[0].message);
    }

    #[test]
    fn no_printed_range_is_not_judged() {
        let copper = "$ mlxlink -d mlx5_0 -m\n\nModule Info\n-----------\nTemperature [C]                    : 0 [0..0]\nRx Power Current [dBm]             : 0,0,0,0 [0..0]\nBias Current [mA]                  : N/A\n";
        assert!(skipped_reason(&ML004, copper).is_some());
        let bare = "$ mlxlink -d mlx5_0 -m\n\nModule Info\n-----------\nRx Power Current [dBm]             : -30,-30,-30,-30\n";
        assert!(skipped_reason(&ML004, bare).is_some());
    }

    #[test]
    fn speed_lists_read_both_layouts() {
        assert_eq!(
            speed_list("0x000017f2(200G,100G_2X,100G_4X)"),
            ["200G", "100G_2X", "100G_4X"]
        );
        assert_eq!(speed_list("0x000007f2 (NDR,HDR)"), ["NDR", "HDR"]);
        assert!(speed_list("N/A").is_empty());
        assert_eq!(speed_name("IB-NDR"), "NDR");
        assert_eq!(speed_name("100G_2X"), "100G");
    }

    #[test]
    fn a_failed_diag_test_is_an_error_with_its_message_and_a_skip_is_nothing() {
        let text = "$ dcgmi diag -r 3\nSuccessfully ran diagnostic for group.\n+---------------------------+------------------------------------------------+\n| Diagnostic                | Result                                         |\n+===========================+================================================+\n|-----  Deployment  --------+------------------------------------------------|\n| software                  | Pass                                           |\n+-----  Hardware  ----------+------------------------------------------------+\n| memory                    | Fail                                           |\n|                           | GPU0: Pass                                     |\n|                           | GPU5: Fail                                     |\n| Warning: GPU5             | DBE found                                      |\n+-----  Stress  ------------+------------------------------------------------+\n| targeted_stress           | Skip                                           |\n| pcie                      | Warn                                           |\n+---------------------------+------------------------------------------------+\n";
        let f = findings_of(&DG001, text);
        assert_eq!(f.len(), 2, "{f:#?}");
        assert_eq!(f[0].severity, Severity::Error);
        assert_eq!(f[0].subject.gpu, Some(5));
        assert!(f[0].message.contains("DBE found"), "{}", f[0].message);
        assert_eq!(f[1].severity, Severity::Warning);
    }
}
