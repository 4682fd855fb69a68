//! Input rules (`IN0xx`): what the paste itself says about how far it can
//! be trusted.
//!
//! Absence of data is never evidence. Parsers mark every row, port or block
//! the paste did not hold in full ([`Partial`]); the other rules skip those
//! parts in every comparison and count. `IN001` says so once per input, so
//! the operator knows what was not judged and why.

use super::context::{Context, HostKey, SectionRef};
use super::{Coverage, Evidence, Finding, Severity, Subject, Threshold};
use crate::declare_rule;
use crate::diag::{Warning, WarningKind};
use crate::model::partial::{Partial, PartialReason};
use crate::model::topo::{Device, TopoMatrix};
use crate::parse::{Kind, SectionData};
use crate::span::LineSpan;
use std::collections::{BTreeMap, HashMap, HashSet};

declare_rule! {
    /// ### What it detects
    /// An input that looks cut: a `topo -m` row with fewer cells than the
    /// header has columns, a device the header names without a row, a
    /// header that lost its NIC columns above NIC rows with a cell per GPU
    /// column (the NIC-to-NIC cells are unknown; the GPU–NIC ones are
    /// judged), a CPU affinity cut at the left (`-31,64-95`), a port
    /// or counter block that stops before fields the tool always prints, an
    /// `nvidia-smi nvlink` listing whose last GPU shows fewer links than a
    /// GPU of its model before it, or that the input ends in right after a
    /// GPU header (its links are unknown; a header with nothing under it in
    /// the middle of a listing is a GPU without NVLink and is whole), a
    /// block pasted without its header (an
    /// `ibv_devinfo` that begins inside a port block: that port names no
    /// device or number and is not judged; `nvlink` link lines without
    /// their `GPU N:` line: the GPU is unknown), an `nvidia-smi -L` whose
    /// last line the input ends in before its closing `)`, a
    /// last line cut mid-word, a `dcgmi diag` table that the input ends in
    /// before its closing rule (its last row, cut without its closing `|`,
    /// is not read), an `mlxlink` output whose last line stops inside a
    /// record's name, an input whose last line no parser could read but
    /// which begins like the line before it (`Link 2: Remote Device 00`
    /// under whole `nvlink -R` rows) or ends inside a `[` it opened (an
    /// `ibqueryerrors` entry, `[PortRcvData ==`), an elision (`...`, `[... 40 lines
    /// omitted ...]`) in or next to a section, `nvidia-smi -q -x` XML that
    /// ends with elements still open, `ibqueryerrors` output
    /// without its closing `## Summary:` line (it lists only the ports
    /// beyond its thresholds, so without the summary that says the run
    /// finished, a port it does not list is unknown, not clean), or output its prompt's
    /// command filtered (`iblinkinfo | grep Up`, `nvidia-smi -q | head`):
    /// a listing of the Up links says nothing of the others.
    ///
    /// ### Why it matters
    /// Issue threads, chat tools and `…` elisions cut pastes constantly. A
    /// cell that is not in the paste is not a missing NVLink, a port block
    /// that stops after `State:` is not a port without a rate. fabricscope
    /// judges only what is there: the parts listed here are left out of
    /// every comparison and count (peer counts, NUMA consistency, nearest
    /// NIC, rate and state checks), while what they do show is still read.
    ///
    /// ### Evidence
    /// The line where the input looks cut, and each part not judged with
    /// what it lacks (`GPU6 row: row cut short (missing GPU7, CPU Affinity)`).
    ///
    /// ### What to do
    /// Paste the whole output again (for `nvidia-smi topo -m`, every row
    /// down to the legend; for `ibstat`, every port block to `Link layer`)
    /// if the parts listed matter to the question.
    ///
    /// ### Thresholds and sources
    /// Any part lacking what its tool always prints: the layouts of
    /// infiniband-diags (`ibstat.c`, `perfquery.c`), rdma-core
    /// `ibv_devinfo` and `nvidia-smi` as documented in the parsers.
    pub static IN001 = {
        id: "IN001",
        name: "input-looks-cut",
        family: Input,
        severity: Info,
        summary: "The paste looks cut: the parts it lacks are listed and not judged",
        needs: "any supported tool output",
        check: check_cut,
    }
}

declare_rule! {
    /// ### What it detects
    /// Lines inside a supported tool's output that could not be read: a
    /// field before the header that says whose it is (`ibstat | grep
    /// State` keeps the `State:` lines and drops the `CA '…'` and `Port N:`
    /// lines), a value in a form the parser does not know, a field printed
    /// without its value where the output goes on (a GUID blanked before
    /// sharing: not a cut paste), a tool's error in place of its table.
    ///
    /// ### Why it matters
    /// Absence of data is never evidence, and neither is data that could not
    /// be read: a `State: Down` line that cannot be tied to a port is not
    /// judged. A verdict of "not enough to judge", or "healthy", over such a
    /// paste must say which lines it left out and why.
    ///
    /// ### Evidence
    /// Each run of unread lines, with why it could not be read.
    ///
    /// ### What to do
    /// Paste the tool's whole output, or filter it so that the headers stay
    /// (`ibstat | grep -E "CA '|Port |State"`); for a tool's error, run the
    /// command again as it asks.
    ///
    /// ### Thresholds and sources
    /// Any line a parser could not read: the layouts of infiniband-diags,
    /// rdma-core and `nvidia-smi` as documented in the parsers.
    pub static IN002 = {
        id: "IN002",
        name: "input-unread",
        family: Input,
        severity: Info,
        summary: "Lines of a tool's output could not be read: listed, not judged",
        needs: "any supported tool output",
        check: check_unread,
    }
}

declare_rule! {
    /// ### What it detects
    /// A tool that stopped with an error instead of printing what it reads:
    /// `ibstatus`'s `Fatal error: … sys files not found`, `ibpanic:` and
    /// `iberror:` lines, `Failed to open device`, `NVIDIA-SMI has failed
    /// because it couldn't communicate with the NVIDIA driver`, `Failed to
    /// initialize NVML: …`, NVML's `Unable to determine the device handle
    /// for GPU…: Unknown Error` and `GPU is lost`, the firmware tools'
    /// `-E- …` (mlxlink), `Not
    /// supported on the device(s)` (`nvidia-smi dmon`); and a tool that
    /// never ran, as the shell says (`-bash: ibstat: command not found`,
    /// Ubuntu's `Command 'ibv_devinfo' not found, but can be installed
    /// with:`).
    ///
    /// ### Why it matters
    /// In a support thread the tool's failure is often the fault itself: no
    /// RDMA device registered (the driver not loaded, the adapter not
    /// detected, a container without the device), a GPU the driver cannot
    /// reach. Without this rule the message was a line of the section (or
    /// an unread line) and the verdict "not enough to judge".
    ///
    /// ### Evidence
    /// The tool's message and its line. An `error` where NVML says it lost
    /// a GPU (`GPU is lost`, `Unknown Error` for a GPU's handle, `GPU
    /// requires reset`): the GPU has fallen off the bus, and every job on
    /// it fails until a reset. A `warning` where the message says
    /// the tool found no device or could not reach its driver; `info` where
    /// it says the command line was wrong, permission was denied, the
    /// device does not support what was asked, a query got no answer, or
    /// the tool is not installed (no fault of the host, or another rule's),
    /// and where
    /// it says nothing we know (or is cut short).
    ///
    /// ### What to do
    /// As the cause says. A lost GPU: read `dmesg` for its Xid (79: fallen
    /// off the bus), drain the node, reset the GPU or reboot, and reseat it
    /// or open a hardware case if it is lost again. Otherwise check that
    /// the device is present (`lspci`), its
    /// driver loaded (`lsmod | grep -e mlx5_ib -e nvidia`), and for a
    /// container that the device is passed in; rerun as root, or with the
    /// options the tool's help shows; install a tool the shell did not
    /// find.
    ///
    /// ### Thresholds and sources
    /// Any error-level message of a supported tool: infiniband-diags'
    /// `ibpanic`/`iberror` (`ibdiag_common.c`), `ibstatus`'s `Fatal error`,
    /// nvidia-smi's and NVML's error lines (NVML's `GPU is lost` and a
    /// handle's `Unknown Error` are Xid 79, "GPU has fallen off the bus",
    /// in NVIDIA's Xid catalog), the firmware tools' `-E-`
    /// (mlxlink, mstflint), the shell's `command not found` (bash, zsh,
    /// dash, Ubuntu's `command-not-found`).
    pub static IN003 = {
        id: "IN003",
        name: "tool-failed",
        family: Input,
        severity: Warning,
        summary: "A tool stopped with an error instead of printing what it reads",
        needs: "any supported tool output",
        check: check_tool_failed,
    }
}

/// The cause of a message [`tool_failure_cause`] does not know.
const GENERIC_FAILURE: &str = "the tool stopped before printing what it reads";

/// The cause of a tool that found no device or could not reach its driver.
const NO_DEVICE: &str = "the tool found no device to read, or could not reach its driver: the driver is not loaded, the adapter or GPU is not detected, or a container does not see it";

/// The cause of an NVML error that says a GPU was lost.
const GPU_LOST: &str = "NVML cannot reach a GPU it knows: the GPU has most often fallen off the bus (Xid 79), and every job on it fails until it is reset";

/// The bus id NVML's message names the lost GPU by (`Unable to determine
/// the device handle for GPU0000:3A:00.0: Unknown Error` → `0000:3A:00.0`;
/// `… for gpu 0000:B3:00.0: GPU is lost …`).
fn lost_gpu_bus_id(text: &str) -> Option<String> {
    const HANDLE_FOR: &str = "device handle for gpu";
    let at = text.to_ascii_lowercase().find(HANDLE_FOR)? + HANDLE_FOR.len();
    let rest = text.get(at..)?.trim_start();
    let id = rest.split(": ").next()?.trim_end_matches(':').trim();
    let is_bus_id = id.contains(':')
        && id
            .bytes()
            .all(|b| b.is_ascii_hexdigit() || b == b':' || b == b'.');
    is_bus_id.then(|| id.to_owned())
}

/// What a tool's error message says went wrong: how serious, why, and
/// what to do. Matched on the words tools print (ASCII case ignored).
fn tool_failure_cause(text: &str) -> (Severity, &'static str, &'static str) {
    let lower = text.to_ascii_lowercase();
    let has = |words: &[&str]| words.iter().any(|w| lower.contains(w));
    // `Unable to determine the device handle for GPU0000:3A:00.0: Unknown
    // Error` (or `: GPU is lost. Reboot the system to recover this GPU`):
    // the driver lists the GPU, and NVML can no longer talk to it. Its
    // handle's other errors (`Insufficient Permissions`) are not this.
    let handle_lost = lower.contains("unable to determine the device handle")
        && has(&["unknown error", "gpu is lost", "requires reset"]);
    if handle_lost || has(&["gpu is lost", "fallen off the bus"]) {
        (
            Severity::Error,
            GPU_LOST,
            "Read `dmesg` for the GPU's Xid (79: fallen off the bus; 48, 74, 94/95 before it), drain the node, and reset the GPU (`nvidia-smi -r`) or reboot; if it is lost again, reseat it and check its power and PCIe slot, or open a hardware case.",
        )
    } else if has(&["command not found", ": not found"])
        || (lower.starts_with("command '") && lower.contains("' not found"))
    {
        (
            Severity::Info,
            "the tool is not installed on the host (or not on the PATH): it never ran, and nothing was read of what it shows",
            "Install it (`infiniband-diags` for ibstat, perfquery and iblinkinfo; `ibverbs-utils` for ibv_devinfo; the NVIDIA driver for nvidia-smi) or run it by its full path, then paste its output.",
        )
    } else if has(&[
        "permission denied",
        "operation not permitted",
        "must be root",
        "insufficient permissions",
    ]) {
        (
            Severity::Info,
            "the tool was denied access to the device: not a fault of the host",
            "Run the command again as root (sudo).",
        )
    } else if has(&[
        "not recognized",
        "unrecognized option",
        "invalid option",
        "is missing its value",
        "must be used in conjunction with",
        "invalid combination",
        "usage:",
        "failed to process command line",
        "failed to find any metric",
    ]) {
        (
            Severity::Info,
            "the command line was not one the tool accepts: nothing was read",
            "Run the command again with the options its help (`-h`) shows.",
        )
    } else if has(&[
        "is not supported for",
        "not supported on the device",
        "not supported by the device",
    ]) {
        (
            Severity::Info,
            "the device does not support what was asked (an option, a monitor): nothing was read of it, and that is no fault",
            "Leave the option out, or use the tool's other options for the same reading (`mlxlink -c` for counters, `nvidia-smi -q` for what `dmon` samples).",
        )
    } else if has(&[
        "_do_madrpc failed",
        "mad_rpc failed",
        "cannot query",
        "query failed",
        "classportinfo query",
        "timed out",
    ]) {
        (
            Severity::Info,
            "its query got no answer: the port asked is down or unreachable, or does not support what was asked",
            "Check the state of the port asked (ibstat, iblinkinfo) and that its LID is right; a counter set a port does not support is no fault.",
        )
    } else if has(&["driver/library version mismatch"]) {
        // The usual state after a driver update without a reboot: the
        // GPUs are fine, and no GPU tool or job runs until it is fixed.
        (
            Severity::Warning,
            "the NVIDIA kernel module and the user-space library are of different versions (most often a driver update without a reboot): no GPU tool or job can reach the GPUs",
            "Reboot the node, or reload the nvidia kernel modules when no process holds the GPUs; `cat /proc/driver/nvidia/version` shows the module's version.",
        )
    } else if named_device(text).is_some_and(is_network_interface_name)
        && has(&["can't be found", "wasn't found", "not found"])
    {
        // `ibstat ib1` → `ibpanic: … 'ib1' IB device can't be found`;
        // `ibv_devinfo -d ib0` → `IB device 'ib0' wasn't found`: the tools
        // take an adapter's name (`mlx5_0`), and `ib1` is the IPoIB
        // interface on it. Before, this was "no device, the driver not
        // loaded" (a warning) beside an ibdev2netdev that lists it.
        (
            Severity::Info,
            "the command named a network interface, not an RDMA adapter: ibstat and ibv_devinfo take the adapter's name (`mlx5_0`), so nothing was read, and that is no fault of the host",
            "Run it with the adapter's name (`ibdev2netdev` maps each interface to its adapter and port), or with no name to show every adapter.",
        )
    } else if has(&[
        "sys files not found",
        "no ib devices",
        "no devices",
        "no such device",
        "failed to open device",
        "can't open umad",
        "couldn't communicate with the nvidia driver",
        "failed to initialize nvml",
        "no such file or directory",
    ]) {
        (
            Severity::Warning,
            NO_DEVICE,
            "Check that the device is present (`lspci`), its driver loaded (`lsmod | grep -e mlx5_ib -e nvidia`; `dmesg` for its errors), and for a container that the device is passed in; then run the tool again.",
        )
    } else {
        // A message we do not know (or one cut short) says nothing of the
        // host we could stand behind: said, not judged.
        (
            Severity::Info,
            GENERIC_FAILURE,
            "Read the message, check `dmesg` for the device's errors, and run the tool again.",
        )
    }
}

/// The name a tool's message quotes (`main: 'ib1' IB device can't be
/// found` → `ib1`; `IB device 'ib0' wasn't found` → `ib0`).
fn named_device(text: &str) -> Option<&str> {
    let (_, rest) = text.split_once('\'')?;
    let (name, _) = rest.split_once('\'')?;
    (!name.is_empty() && !name.contains(' ')).then_some(name)
}

/// A Linux network interface's name, which no RDMA adapter carries: IPoIB's
/// `ib0`, `ib1.8001` (a child), and Ethernet's `eth0`, `ens4f1`,
/// `enp65s0f0np0`, `bond0`. Adapters are `mlx5_0`, `mlx5_bond_0`, `rxe0`,
/// `hfi1_0`, or by the PCI path `ibp65s0`/`rocep65s0f0` where udev renames
/// them: `ib` followed by a digit, and `en`/`eth`/`bond` names, are not
/// among them.
fn is_network_interface_name(name: &str) -> bool {
    let digit_after = |prefix: &str| {
        name.strip_prefix(prefix)
            .and_then(|r| r.bytes().next())
            .is_some_and(|b| b.is_ascii_digit())
    };
    let en = name
        .strip_prefix("en")
        .and_then(|r| r.bytes().next())
        .is_some_and(|b| matches!(b, b'o' | b's' | b'p' | b'x'));
    digit_after("ib") || digit_after("eth") || digit_after("bond") || en
}

fn check_tool_failed(ctx: &Context<'_>, out: &mut Vec<Finding>) -> Coverage {
    if ctx.sections().next().is_none() && ctx.documents.iter().all(|d| d.messages.is_empty()) {
        return Coverage::Skipped("no tool output in the input".to_owned());
    }
    // One failure per section (a usage error and the `Please run … -h`
    // line after it are one failure), and per document-level message.
    struct Failure<'a> {
        doc: usize,
        host: HostKey<'a>,
        tool: &'a str,
        /// The file of a message outside any section (a section's own
        /// messages are found in their document's file).
        source: Option<&'a str>,
        messages: Vec<(usize, &'a str)>,
        /// Devices the tool read beside the ones it failed on
        /// (`ibv_devinfo` goes on after `Failed to open device`).
        devices_read: usize,
    }
    let mut failures: Vec<Failure<'_>> = Vec::new();
    for at in ctx.sections() {
        let tool = at.section.kind.name();
        let mut messages: Vec<(usize, &str)> = at
            .section
            .messages
            .iter()
            .filter(|m| m.level == crate::input::MessageLevel::Error)
            .map(|m| (m.line, m.text.as_str()))
            .collect();
        if let SectionData::Ibstatus(s) = &at.section.data {
            if let Some(reason) = &s.fatal_error {
                // The parser's warning about it holds the line.
                let line = at
                    .section
                    .warnings
                    .iter()
                    .find(|w| w.message.contains(reason.as_str()))
                    .map_or(at.section.span.first_line, |w| w.span.first_line);
                messages.push((line, reason));
            }
        }
        if !messages.is_empty() {
            let devices_read = match &at.section.data {
                SectionData::IbvDevinfo(d) => d.devices.len(),
                _ => 0,
            };
            failures.push(Failure {
                doc: at.doc,
                host: at.host(),
                tool,
                source: at.source(),
                messages,
                devices_read,
            });
        }
    }
    for (doc, d) in ctx.documents.iter().enumerate() {
        for m in d.failures() {
            failures.push(Failure {
                doc,
                host: m
                    .host
                    .as_deref()
                    .map_or(HostKey::Unnamed(doc), HostKey::Named),
                tool: m.program.as_deref().unwrap_or("a tool"),
                source: m.source.as_deref(),
                messages: vec![(m.line, &m.text)],
                devices_read: 0,
            });
        }
    }
    // In input order: of two tools that failed with the same message
    // (`nvidia-smi`, then `nvidia-smi topo -m`), the first is said.
    failures.sort_by_key(|f| (f.doc, f.messages.first().map(|(line, _)| *line)));
    let mut said: Vec<(HostKey<'_>, &str)> = Vec::new();
    for mut failure in failures {
        let host = failure.host;
        failure
            .messages
            .retain(|(_, text)| !said.contains(&(host, *text)));
        said.extend(failure.messages.iter().map(|(_, text)| (host, *text)));
        // The most serious cause the messages name; of equals, the first
        // that names one (the generic cause is the last resort).
        let Some((severity, cause, todo)) = failure
            .messages
            .iter()
            .map(|(_, text)| tool_failure_cause(text))
            .enumerate()
            .max_by_key(|(i, (severity, cause, _))| {
                (*severity, *cause != GENERIC_FAILURE, std::cmp::Reverse(*i))
            })
            .map(|(_, c)| c)
        else {
            continue;
        };
        let source = failure.source.or_else(|| {
            ctx.sections()
                .find(|at| at.doc == failure.doc)
                .and_then(|at| at.source())
        });
        // Devices read beside the failed ones: the tool did reach its
        // driver, and what it read is judged as usual.
        let message = if cause == NO_DEVICE && failure.devices_read > 0 {
            format!(
                "{} could not open {} device(s) and read {}: those it could not open are not judged (a container or VM not given them, such as SR-IOV virtual functions, or a device whose driver failed)",
                failure.tool,
                failure.messages.len(),
                failure.devices_read
            )
        } else {
            format!("{} failed: {cause}", failure.tool)
        };
        let mut subject = Subject::host(host.name());
        if cause == GPU_LOST {
            subject.bus_id = failure
                .messages
                .iter()
                .find_map(|(_, text)| lost_gpu_bus_id(text));
        }
        let mut finding = IN003.finding(subject, message).severity(severity);
        for (line, text) in &failure.messages {
            // `perfquery: iberror: …` names its tool already.
            let named = text
                .strip_prefix(failure.tool)
                .is_some_and(|rest| rest.starts_with(": "));
            let said = if named {
                (*text).to_owned()
            } else {
                format!("{}: {text}", failure.tool)
            };
            finding = finding.evidence(Evidence::new(said, LineSpan::line(*line), source));
        }
        out.push(
            finding
                .threshold(Threshold::new(
                    "no error-level message from the tool",
                    "infiniband-diags ibpanic/iberror, ibstatus Fatal error, nvidia-smi and NVML errors, firmware tools' -E-",
                ))
                .remediation(todo),
        );
    }
    Coverage::Checked(ctx.sections().count())
}

/// Runs of unread lines listed as evidence at most, per input: the rest
/// are counted in the message (a garbled file can have thousands).
const UNREAD_EVIDENCE: usize = 20;

/// What of a `topo -m` row is not judged: its affinity cells when they
/// are all it lost (its link cells were read and judged), else the row.
fn topo_row_part(m: &TopoMatrix, d: &Device) -> String {
    let missing = d.partial.as_ref().map(|p| p.missing.as_slice());
    match missing {
        Some(titles)
            if !titles.is_empty() && titles.iter().all(|t| m.affinity_columns.contains(t)) =>
        {
            format!(
                "{}{ROW_CELLS}{AFFINITY_CELLS} ({})",
                d.name,
                titles.join("; ")
            )
        }
        _ => format!("{} row", d.name),
    }
}

/// The parts named once each, in input order, and the same cells of
/// several rows (`GPU0's affinity cells (…)`, `GPU1's affinity cells (…)`)
/// named once with their rows: a mangled matrix whose every row lost its
/// affinity cells reads as one clause, not eight.
fn list_parts<'p>(names: impl Iterator<Item = &'p str>) -> String {
    // Each clause: the cells (or the whole part) and the rows that lack them.
    let mut clauses: Vec<(&str, Vec<&str>)> = Vec::new();
    let mut at: HashMap<&str, usize> = HashMap::new();
    let mut seen: HashSet<&str> = HashSet::new();
    for name in names {
        if !seen.insert(name) {
            continue;
        }
        let row_cells = name
            .split_once(ROW_CELLS)
            .filter(|(_, cells)| cells.starts_with(AFFINITY_CELLS));
        let (owner, part) = match row_cells {
            Some((owner, cells)) => (Some(owner), cells),
            None => (None, name),
        };
        let slot = *at.entry(part).or_insert_with(|| {
            clauses.push((part, Vec::new()));
            clauses.len() - 1
        });
        if let (Some(owner), Some((_, owners))) = (owner, clauses.get_mut(slot)) {
            owners.push(owner);
        }
    }
    let texts: Vec<String> = clauses
        .into_iter()
        .map(|(part, owners)| match owners.as_slice() {
            [] => part.to_owned(),
            [one] => format!("{one}{ROW_CELLS}{part}"),
            many => format!("{part} of {}", many.join(", ")),
        })
        .collect();
    texts.join(", ")
}

/// Between a row's name and the cells of it that were cut, in the parts
/// [`topo_row_part`] names.
const ROW_CELLS: &str = "'s ";

/// The cells [`topo_row_part`] names: a row's affinity cells.
const AFFINITY_CELLS: &str = "affinity cells";

/// How IN001 names what an ibdiagnet summary counts and the paste does
/// not show: the `-E-`/`-W-` lines of a stage.
const UNSHOWN_PROBLEM_LINES: &str = "the -E-/-W- lines of";

/// Whether `f` is an IN001 finding that names errors or warnings
/// ibdiagnet's summary counts and the paste does not show. Such a paste
/// (the `Summary` table alone, its lines left in `ibdiagnet2.log`) is no
/// clean fabric: the verdict says the fabric was not judged, never
/// "healthy". Read from the finding's evidence, so a report read back from
/// JSON says the same.
pub(crate) fn counts_unshown_problems(f: &Finding) -> bool {
    f.rule == IN001.id
        && f.evidence
            .iter()
            .any(|e| e.text.contains(UNSHOWN_PROBLEM_LINES))
}

/// Whether an `IN001` finding says the paste itself looks cut (or its
/// author left lines out), not only that a tool printed part of what it
/// found and said so ([`PartialReason::NotShown`]). Read from the
/// finding's evidence, as [`counts_unshown_problems`] is.
pub(crate) fn says_paste_looks_cut(f: &Finding) -> bool {
    let by_tool = PartialReason::NotShown.describe();
    f.rule == IN001.id && f.evidence.iter().any(|e| !e.text.contains(by_tool))
}

/// Whether a part is problems ibdiagnet counted and the paste does not
/// show ([`counts_unshown_problems`]): not a paste cut short.
fn is_unshown_count(part: &PartialPart<'_>) -> bool {
    part.partial
        .missing
        .iter()
        .any(|m| m.starts_with(UNSHOWN_PROBLEM_LINES))
}

/// One part of the input that is not judged, and where it was read.
pub(crate) struct PartialPart<'a> {
    /// Where it was read.
    pub at: SectionRef<'a>,
    /// `GPU6 row`, `mlx5_0 port 1`, `GPU 3 link listing`.
    pub what: String,
    /// What it lacks.
    pub partial: Partial,
}

/// Every part the parsers (or the context, for listings shorter than
/// their peers) marked partial, in input order.
pub(crate) fn partial_parts<'a>(ctx: &Context<'a>) -> Vec<PartialPart<'a>> {
    let mut out = Vec::new();
    for at in ctx.sections() {
        // Output the command line filtered (`iblinkinfo | grep Up`): the
        // lines the filter hid are not in the paste, and a listing of the
        // Up links says nothing of the others.
        // A kernel log filtered for its Xid or adapter lines (`dmesg | grep
        // -i xid`, `dmesg | grep mlx5`) left out only lines this format
        // does not judge.
        let filter = at
            .section
            .command
            .as_deref()
            .and_then(output_filter)
            .filter(|f| !(at.section.kind == Kind::KernelLog && filters_for_read_lines(f)))
            // `curl …/metrics | grep node_infiniband` keeps the metrics
            // node_exporter's reader reads and leaves out the others (whose
            // lines it would set aside anyway).
            .filter(|f| {
                !(at.section.kind == Kind::NodeExporter
                    && f.to_ascii_lowercase().contains("infiniband"))
            })
            // `| grep DCGM_FI` likewise keeps dcgm-exporter's GPU metrics.
            .filter(|f| {
                !(at.section.kind == Kind::DcgmExporter && f.to_ascii_lowercase().contains("dcgm"))
            })
            // `curl …/metrics | grep -v '^#'` leaves out the exporters'
            // `# HELP`/`# TYPE` comments only: every metric is there.
            .filter(|_| {
                !(matches!(at.section.kind, Kind::NodeExporter | Kind::DcgmExporter)
                    && at
                        .section
                        .command
                        .as_deref()
                        .is_some_and(filters_drop_only_comments))
            });
        if let Some(filter) = filter {
            out.push(PartialPart {
                at,
                what: format!("lines `{filter}` left out"),
                partial: Partial::new(
                    PartialReason::Elided,
                    Vec::new(),
                    at.section.span.first_line,
                ),
            });
        }
        // A line of the tool's the input ends inside: the section's parser
        // read none of it (each parser's own cut parts are below).
        for w in at.section.warnings.iter().filter(|w| {
            w.kind == WarningKind::Truncated && w.message.starts_with(crate::input::CUT_LINE)
        }) {
            out.push(PartialPart {
                at,
                what: format!("cut line {}", w.span.first_line),
                partial: Partial::new(
                    PartialReason::CutLine,
                    vec!["the rest of the line".to_owned()],
                    w.span.first_line,
                ),
            });
        }
        out.extend(headerless_ports_part(at));
        // Most parts are whole: their words are written only for the cut ones.
        let mut push = |what: &dyn Fn() -> String, partial: &Option<Partial>| {
            if let Some(partial) = partial {
                out.push(PartialPart {
                    at,
                    what: what(),
                    partial: partial.clone(),
                });
            }
        };
        match &at.section.data {
            SectionData::TopoMatrix(m) => {
                push(
                    &|| match &m.partial {
                        // Every cell shown was read; what is not known is
                        // the NICs left out, and so each GPU's nearest.
                        Some(p) if p.reason == PartialReason::NotShown => {
                            "the NICs not shown, and so each GPU's nearest NIC".to_owned()
                        }
                        _ => "topo -m matrix".to_owned(),
                    },
                    &m.partial,
                );
                for d in &m.devices {
                    push(&|| topo_row_part(m, d), &d.partial);
                }
            }
            SectionData::Ibstat(ibstat) => {
                for ca in &ibstat.cas {
                    push(&|| ca.name.clone(), &ca.partial);
                    for port in &ca.ports {
                        push(
                            &|| format!("{} port {}", ca.name, port.number),
                            &port.partial,
                        );
                    }
                }
            }
            SectionData::Ibstatus(status) => {
                for port in &status.ports {
                    push(
                        &|| format!("{} port {}", port.device, port.port),
                        &port.partial,
                    );
                }
            }
            SectionData::IbvDevinfo(info) => {
                for dev in &info.devices {
                    push(&|| ibv_devinfo_part(dev), &dev.partial);
                }
            }
            SectionData::Portinfo(info) => {
                for p in &info.ports {
                    push(&|| format!("{} port {}", p.target, p.port), &p.partial);
                }
            }
            // ibqueryerrors lists only some ports and always ends with its
            // summary: without it, the ports it did not list are unknown.
            SectionData::Ibqueryerrors(iq) => {
                push(
                    &|| {
                        "ports ibqueryerrors did not list (no summary line: the output \
                         was cut or the run failed, so only the listed ports were judged \
                         and the others cannot be called clean)"
                            .to_owned()
                    },
                    &iq.partial,
                );
            }
            SectionData::KernelLog(log) => {
                for e in &log.events {
                    push(
                        &|| format!("kernel log line {}", e.span.first_line),
                        &e.partial,
                    );
                }
                for e in &log.aer_events {
                    push(
                        &|| match &e.device {
                            Some(d) => {
                                format!("kernel log line {} (PCIe AER {d})", e.span.first_line)
                            }
                            None => format!("kernel log line {} (PCIe AER)", e.span.first_line),
                        },
                        &e.partial,
                    );
                }
                for e in &log.gpu_init_events {
                    push(
                        &|| {
                            format!(
                                "kernel log line {} (NVRM, GPU {})",
                                e.span.first_line,
                                e.bus_id.as_deref().unwrap_or("?")
                            )
                        },
                        &e.partial,
                    );
                }
                for e in &log.nic_events {
                    push(
                        &|| match &e.pci {
                            Some(pci) => format!(
                                "kernel log line {} ({} {pci})",
                                e.span.first_line, e.driver
                            ),
                            None => format!("kernel log line {} ({})", e.span.first_line, e.driver),
                        },
                        &e.partial,
                    );
                }
            }
            SectionData::NcclLog(log) => {
                for e in &log.ib_async_events {
                    push(
                        &|| format!("NCCL IB async event line {}", e.at.span.first_line),
                        &e.partial,
                    );
                }
                for v in &log.verbs_failures {
                    push(
                        &|| format!("NCCL failed {} line {}", v.call, v.at.span.first_line),
                        &v.partial,
                    );
                }
            }
            SectionData::SmiTable(t) => {
                // nvidia-smi prints its banner only above GPU blocks (with
                // no GPU it prints `No devices were found` instead): a
                // banner with none under it is a paste cut in the header.
                let headless = (t.gpus.is_empty() && t.driver_version.is_some()).then(|| {
                    Partial::new(
                        PartialReason::MissingFields,
                        vec!["every GPU block".to_owned()],
                        at.section.span.last_line,
                    )
                });
                push(&|| "nvidia-smi table GPU blocks".to_owned(), &headless);
                for g in &t.gpus {
                    push(&|| format!("nvidia-smi table GPU {}", g.index), &g.partial);
                }
            }
            SectionData::SmiQuery(q) => {
                push(
                    &|| "nvidia-smi -q XML after the last element read".to_owned(),
                    &q.partial,
                );
            }
            SectionData::Mlxlink(m) if ctx.ends_input(at) => {
                push(&|| "the rest of the mlxlink output".to_owned(), &m.partial);
            }
            // A table without its closing rule at the end of the input: the
            // paste ended inside it (its last row, if cut, is not read).
            SectionData::DcgmiDiag(d) if !d.complete && ctx.ends_input(at) => {
                out.push(PartialPart {
                    at,
                    what: "dcgmi diag rows after the last one read".to_owned(),
                    partial: Partial::new(
                        PartialReason::MissingFields,
                        vec!["the table's closing rule".to_owned()],
                        at.section.span.last_line,
                    ),
                });
            }
            // show_gids ends with its count: without it at the end of the
            // input, the last port's table may go on past the paste (NC005
            // leaves that port unjudged).
            SectionData::ShowGids(g)
                if g.gids_found.is_none() && !g.gids.is_empty() && ctx.ends_input(at) =>
            {
                out.push(PartialPart {
                    at,
                    what: "show_gids rows after the last one read".to_owned(),
                    partial: Partial::new(
                        PartialReason::MissingFields,
                        vec!["the closing n_gids_found line".to_owned()],
                        at.section.span.last_line,
                    ),
                });
            }
            SectionData::Nvlink(nv) => {
                // Link lines pasted without their `GPU N:` header: which
                // GPU they belong to (its product, and so how many links
                // it has) is unknown; a prompt's `-i N` names its index.
                let named = at.section.command.as_deref().and_then(gpu_option);
                for g in nv.gpus.iter().filter(|g| g.headerless) {
                    let gpu = named.map_or_else(
                        || "an unnamed GPU".to_owned(),
                        |i| format!("GPU {i} (named by the command's `-i`)"),
                    );
                    out.push(PartialPart {
                        at,
                        what: format!("links of {gpu} without its header ({})", g.span),
                        partial: Partial::new(
                            PartialReason::NoHeader,
                            vec!["the `GPU N: NAME (UUID: …)` line".to_owned()],
                            g.span.first_line,
                        ),
                    });
                }
                if ctx.ends_input(at) {
                    if let Some((what, partial)) = counter_listing_cut(nv) {
                        out.push(PartialPart { at, what, partial });
                    }
                }
            }
            // A last GPU line that stops before the `)` closing its UUID,
            // at the end of the input: the paste was cut there, and GPUs
            // listed after it are unknown.
            SectionData::SmiList(list) if ctx.ends_input_mid_output(at) => {
                if let Some(g) = list
                    .gpus
                    .last()
                    .filter(|g| g.unclosed && g.line >= at.section.span.last_line)
                {
                    out.push(PartialPart {
                        at,
                        what: format!("nvidia-smi -L GPUs after GPU {}", g.index),
                        partial: Partial::new(
                            PartialReason::CutLine,
                            vec![format!("the `)` closing GPU {}'s line", g.index)],
                            g.line,
                        ),
                    });
                }
            }
            // ibdiagnet's summary counts problems whose `-E-`/`-W-` lines
            // the paste does not hold (they are in ibdiagnet2.log): what
            // they said is unknown, and the fabric cannot be called clean.
            SectionData::IbdiagnetLog(log) if !log.has_problem_lines() => {
                for s in log.stages.iter().filter(|s| s.errors + s.warnings > 0) {
                    out.push(PartialPart {
                        at,
                        what: format!(
                            "ibdiagnet's {} error(s) and {} warning(s) of stage \"{}\"",
                            s.errors, s.warnings, s.stage
                        ),
                        partial: Partial::new(
                            PartialReason::MissingFields,
                            vec![format!(
                                "{UNSHOWN_PROBLEM_LINES} \"{}\" (in ibdiagnet2.log)",
                                s.stage
                            )],
                            s.span.first_line,
                        ),
                    });
                }
            }
            SectionData::IbdiagnetPm(pq) => {
                // A port's blocks (one per attribute) share its partial:
                // said once.
                let mut last: Option<(&str, Option<u32>, Option<u32>)> = None;
                for b in &pq.blocks {
                    let port = (b.port_id.as_str(), b.lid, b.port);
                    if last.replace(port) == Some(port) {
                        continue;
                    }
                    let what = || {
                        let port = b.port.map_or_else(|| "?".to_owned(), |p| p.to_string());
                        format!("ibdiagnet2.pm counters of {} port {port}", b.port_id)
                    };
                    push(&what, &b.partial);
                }
            }
            SectionData::SysfsCounters(pq) => {
                // A port's PortCountersExtended block follows its
                // PortCounters block with the same partial: said once.
                let mut last: Option<(&str, Option<u32>)> = None;
                for b in &pq.blocks {
                    let port = (b.port_id.as_str(), b.port);
                    if last.replace(port) == Some(port) {
                        continue;
                    }
                    let what = || {
                        let port = b.port.map_or_else(|| "?".to_owned(), |p| p.to_string());
                        format!("sysfs counters of {} port {port}", b.port_id)
                    };
                    push(&what, &b.partial);
                }
                if let Some((line, word)) =
                    cut_word_after(ctx, at, crate::parse::sysfs_counters::may_begin_file_line)
                {
                    out.push(PartialPart {
                        at,
                        what: format!("the sysfs counter file of line {line}"),
                        partial: Partial::new(PartialReason::CutLine, vec![word], line),
                    });
                }
            }
            SectionData::DcgmExporter(m) => {
                for h in &m.hosts {
                    for g in &h.gpus {
                        let what = || {
                            let gpu = g.index.map_or_else(|| "?".to_owned(), |i| i.to_string());
                            format!("dcgm-exporter metrics of GPU {gpu}")
                        };
                        push(&what, &g.partial);
                    }
                }
                let line = m.cut.as_ref().map(|c| c.line);
                push(
                    &|| format!("the dcgm-exporter metric of line {}", line.unwrap_or(0)),
                    &m.cut,
                );
                if let Some((line, word)) =
                    cut_word_after(ctx, at, crate::parse::dcgm_exporter::may_begin_metric_line)
                {
                    out.push(PartialPart {
                        at,
                        what: format!("the dcgm-exporter metric of line {line}"),
                        partial: Partial::new(PartialReason::CutLine, vec![word], line),
                    });
                }
            }
            SectionData::NodeExporter(m) => {
                // As sysfs's: a port's two blocks share its partial.
                for scrape in &m.scrapes {
                    let mut last: Option<(&str, Option<u32>)> = None;
                    for b in &scrape.counters.blocks {
                        let port = (b.port_id.as_str(), b.port);
                        if last.replace(port) == Some(port) {
                            continue;
                        }
                        let what = || {
                            let port = b.port.map_or_else(|| "?".to_owned(), |p| p.to_string());
                            format!("node_exporter metrics of {} port {port}", b.port_id)
                        };
                        push(&what, &b.partial);
                    }
                }
                let line = m.cut.as_ref().map(|c| c.line);
                push(
                    &|| format!("the node_exporter metric of line {}", line.unwrap_or(0)),
                    &m.cut,
                );
                if let Some((line, word)) =
                    cut_word_after(ctx, at, crate::parse::node_exporter::may_begin_metric_line)
                {
                    out.push(PartialPart {
                        at,
                        what: format!("the node_exporter metric of line {line}"),
                        partial: Partial::new(PartialReason::CutLine, vec![word], line),
                    });
                }
            }
            SectionData::Perfquery(pq) => {
                // ibcheckerrors lists only what is over its threshold: its
                // blocks are partial by design, not cut.
                for b in pq
                    .blocks
                    .iter()
                    .filter(|b| !b.port_id.starts_with("ibcheckerrors"))
                {
                    let what = || {
                        let port = b.port.map(|p| format!(" port {p}")).unwrap_or_default();
                        format!("perfquery {}{port}", b.port_id)
                    };
                    push(&what, &b.partial);
                }
            }
            _ => {}
        }
    }
    for g in ctx.nvlink_gpus() {
        let Some(partial) = g.listing_cut.clone() else {
            continue;
        };
        let at = g
            .cut_at_header
            .or_else(|| g.status.values().map(|(at, _)| *at).next());
        if let Some(at) = at {
            out.push(PartialPart {
                at,
                what: format!("GPU {} link listing", g.index),
                partial,
            });
        }
    }
    elided_parts(ctx, &mut out);
    out.sort_by_key(|p| (p.at.doc, p.partial.line));
    out
}

/// IN001's part for the header-less ports of an `ibstat` or `ibstatus`
/// section ([`headerless_part`]).
fn headerless_ports_part<'a>(at: SectionRef<'a>) -> Option<PartialPart<'a>> {
    match &at.section.data {
        SectionData::Ibstat(ibstat) => {
            let ports = &ibstat.headerless_ports;
            let shown = |has: fn(&crate::model::ibstat::Port) -> bool| ports.iter().any(has);
            let fields = [
                ("State", shown(|p| p.state.is_some())),
                ("Physical state", shown(|p| p.physical_state.is_some())),
                ("Rate", shown(|p| p.rate_gbps.is_some())),
                ("Base lid", shown(|p| p.base_lid.is_some())),
                ("LMC", shown(|p| p.lmc.is_some())),
                ("SM lid", shown(|p| p.sm_lid.is_some())),
                ("Capability mask", shown(|p| p.capability_mask.is_some())),
                ("Port GUID", shown(|p| p.port_guid.is_some())),
                ("Link layer", shown(|p| p.link_layer.is_some())),
            ];
            // `Port N:` blocks pasted without their `CA '…'` line show
            // their numbers: only the adapter is unknown.
            let (unknown, header) = if ports.iter().all(|p| p.number != 0) {
                ("which adapter", "the `CA '…'` line")
            } else {
                (BOTH_UNKNOWN, "the `CA '…'` and `Port N:` lines")
            };
            headerless_part(at, (unknown, header), ports.iter().map(|p| p.span), &fields)
        }
        SectionData::Ibstatus(status) => {
            let ports = &status.headerless_ports;
            let shown =
                |has: fn(&crate::model::ibstatus::IbstatusPort) -> bool| ports.iter().any(has);
            let fields = [
                ("default gid", shown(|p| p.default_gid.is_some())),
                ("base lid", shown(|p| p.base_lid.is_some())),
                ("sm lid", shown(|p| p.sm_lid.is_some())),
                ("state", shown(|p| p.state.is_some())),
                ("phys state", shown(|p| p.physical_state.is_some())),
                ("rate", shown(|p| p.rate.is_some())),
                ("link_layer", shown(|p| p.link_layer.is_some())),
            ];
            headerless_part(
                at,
                (
                    BOTH_UNKNOWN,
                    "the `Infiniband device '…' port N status:` line",
                ),
                ports.iter().map(|p| p.span),
                &fields,
            )
        }
        _ => None,
    }
}

/// What a header-less port does not show, as [`headerless_part`] says it.
const BOTH_UNKNOWN: &str = "which adapter and port number";

/// IN001's part for the ports of a section read from fields pasted
/// without their headers (`ibstat | grep State`): which adapter and port
/// each is, and the port fields (`(label, shown)`, in the tool's order)
/// none of them shows. A field the paste lacks is unknown, never absent:
/// a grep that kept the `State` lines says nothing of rates or LIDs.
/// `None` when the section has no such port.
fn headerless_part<'a>(
    at: SectionRef<'a>,
    (unknown, header): (&str, &str),
    spans: impl Iterator<Item = LineSpan>,
    fields: &[(&str, bool)],
) -> Option<PartialPart<'a>> {
    let (count, span) = spans.fold((0usize, None::<LineSpan>), |(n, all), s| {
        (n + 1, Some(all.map_or(s, |a| a.join(s))))
    });
    let span = span?;
    let mut missing = vec![header.to_owned()];
    missing.extend(
        fields
            .iter()
            .filter(|(_, shown)| !shown)
            .map(|(label, _)| (*label).to_owned()),
    );
    let ports = if count == 1 {
        format!("the header-less port ({span}) is")
    } else {
        format!("the {count} header-less ports ({span}) are")
    };
    let fields = if missing.len() > 1 {
        ", and the port fields the paste does not show"
    } else {
        ""
    };
    Some(PartialPart {
        at,
        what: format!("{unknown} {ports}{fields}"),
        partial: Partial::new(PartialReason::NoHeader, missing, span.first_line),
    })
}

/// The GPU index an `nvidia-smi nvlink` command line selects (`-i 1`,
/// `--id 1`, `--id=1`); `None` without one, or for a bus id or UUID.
fn gpu_option(command: &str) -> Option<u32> {
    let mut words = command.split_whitespace();
    while let Some(word) = words.next() {
        let value = match word {
            "-i" | "--id" => words.next(),
            _ => word.strip_prefix("--id="),
        };
        if let Some(value) = value {
            return value.parse().ok();
        }
    }
    None
}

/// An `ibv_devinfo` device as IN001 names it: a port the paste begins
/// inside has no name, so it is named by where it stands, with its state
/// (a `PORT_DOWN` there is not judged, and must not go unsaid); a device
/// whose only partial part is one port block (cut by the end of the
/// paste) is named by that port, `mlx5_0 port 1`, as ibstat's are.
fn ibv_devinfo_part(dev: &crate::model::ibv_devinfo::IbvDevice) -> String {
    match dev.ports.first().filter(|_| dev.begins_inside_a_port()) {
        Some(port) => {
            let state = match port.state {
                None => "no state shown".to_owned(),
                Some(crate::model::ib::PortState::Unknown) => "state not read".to_owned(),
                Some(s) => format!("state {}", crate::parse::ibv_devinfo::state_text(s)),
            };
            format!("the port before the first hca_id ({state})")
        }
        None => match dev.partial_port() {
            Some(port) => format!("{} port {}", dev.hca_id, port.number),
            None => dev.hca_id.clone(),
        },
    }
}

/// The line the input ends in, when its only word was set aside as cut
/// right after the section `at` and `may_begin` says it begins like one of
/// its lines (a sysfs counter file's `…/counters/port_rcv_er`, a metric's
/// `node_infiniband_symbol_error_total{dev`): the paste stopped inside the
/// next line, which the section's parser never saw.
fn cut_word_after(
    ctx: &Context<'_>,
    at: SectionRef<'_>,
    may_begin: fn(&str) -> bool,
) -> Option<(usize, String)> {
    if !ctx.ends_input(at) {
        return None;
    }
    let doc = ctx.documents.get(at.doc)?;
    let cut = doc.unrecognised.iter().find(|u| {
        u.span.first_line > at.section.span.last_line
            && u.reason.starts_with(crate::input::CUT_WORD)
    })?;
    let word = cut.reason.split_once("(`")?.1.rsplit_once("`)")?.0;
    may_begin(word).then(|| (cut.span.first_line, word.to_owned()))
}

/// The last GPU of an `nvidia-smi nvlink` counter listing (`-e`, `-gt`,
/// `-c`) that the input ends in, when it lists fewer links than a GPU of
/// the same model before it in the same listing: the paste was cut inside
/// it, and its links after the last one listed were not judged. (Status
/// listings, `-s`, are checked across the whole run: see
/// [`Context::nvlink_gpus`].) Only the last GPU: a GPU in the middle of a
/// listing that shows fewer links is what the tool printed.
fn counter_listing_cut(nv: &crate::model::nvlink::Nvlink) -> Option<(String, Partial)> {
    let last = nv.gpus.last()?;
    let counters = |g: &crate::model::nvlink::NvlinkGpu| {
        !g.links.is_empty() && g.links.iter().all(|l| !l.counters.is_empty())
    };
    if !counters(last) {
        return None;
    }
    let before = nv.gpus.len().checked_sub(1)?;
    let longest = nv
        .gpus
        .iter()
        .take(before)
        .filter(|g| g.name == last.name && counters(g))
        .map(|g| g.links.len())
        .max()?;
    let shown = last.links.iter().map(|l| l.link).max()?;
    (last.links.len() < longest).then(|| {
        (
            format!("GPU {} link counters", last.index),
            Partial::new(
                PartialReason::MissingFields,
                vec![format!(
                    "links after Link {shown}: {} of {longest} listed",
                    last.links.len()
                )],
                last.span.last_line,
            ),
        )
    })
}

/// How far from a section an elision line may be and still stand for its
/// lines: the line before its first (`ibstat`, `...`, then `CA 'mlx5_5'`)
/// or after its last (`...` closing the block), a blank line between.
const ELISION_REACH: usize = 2;

/// A part for each elision (`...`, `[snip]`: lines the author left out)
/// in a section or next to it: the section shows only some of the output,
/// and what the left-out lines held was not judged. Before, an ibstat of
/// two CAs closed by `...` (of sixteen) was judged as the whole.
fn elided_parts<'a>(ctx: &Context<'a>, out: &mut Vec<PartialPart<'a>>) {
    use crate::input::repair::RepairKind;
    for (doc, d) in ctx.documents.iter().enumerate() {
        let mut elisions = d
            .repairs
            .iter()
            .filter(|r| r.kind == RepairKind::Elision)
            .peekable();
        if elisions.peek().is_none() {
            continue;
        }
        // The document's sections, gathered once for all its elisions.
        let sections: Vec<SectionRef<'a>> = ctx.sections().filter(|at| at.doc == doc).collect();
        for r in elisions {
            let line = r.span.first_line;
            let near = sections
                .iter()
                .copied()
                .filter(|at| {
                    let s = at.section.span;
                    line + ELISION_REACH >= s.first_line && line <= s.last_line + ELISION_REACH
                })
                .min_by_key(|at| {
                    let s = at.section.span;
                    s.first_line.abs_diff(line).min(s.last_line.abs_diff(line))
                });
            if let Some(at) = near {
                out.push(PartialPart {
                    at,
                    what: format!("{} output left out", at.section.kind.name()),
                    partial: Partial::new(PartialReason::Elided, Vec::new(), line),
                });
            }
        }
    }
}

/// Programs that print only some of the lines piped into them.
const LINE_FILTERS: &[&str] = &[
    "grep", "egrep", "fgrep", "zgrep", "rg", "head", "tail", "awk", "sed", "cut",
];

/// Programs that print every line piped into them (or reorder them): a
/// filter before them still filters what the paste shows.
const PASS_THROUGH: &[&str] = &[
    "tee", "cat", "less", "more", "column", "sort", "uniq", "nl", "tr", "dshbak",
];

/// The program a pipeline stage runs, without its directory.
fn stage_program(stage: &str) -> &str {
    let program = stage.split_whitespace().next().unwrap_or_default();
    program.rsplit('/').next().unwrap_or(program)
}

/// Whether a filter keeps the kernel log's lines this format reads: Xid
/// (or NVRM) lines, `grep -i xid`, `grep -E 'NVRM|SXid'`; the adapter's,
/// `grep mlx5`, `grep -E 'mlx5|ib0'`, `grep -i link`.
fn filters_for_read_lines(filter: &str) -> bool {
    let lower = filter.to_ascii_lowercase();
    ["xid", "nvrm", "mlx", "link", "ib", "port module", "pcie"]
        .iter()
        .any(|w| lower.contains(w))
}

/// Whether every line filter of `command` is a `grep -v` of comment
/// lines (`grep -v '^#'`, `grep -v "^ *#"`, `egrep -v '^# (HELP|TYPE)'`)
/// or of blank lines (`grep -v '^$'`): output without its comments. A filter of anything else, or a pattern
/// given by `-e`/`-f` (there may be several), is no such filter.
fn filters_drop_only_comments(command: &str) -> bool {
    let mut filters = pipe_stages(command)
        .map(str::trim)
        .filter(|s| LINE_FILTERS.contains(&stage_program(s)))
        .peekable();
    filters.peek().is_some() && filters.all(grep_v_of_comments)
}

/// [`filters_drop_only_comments`] of one stage.
fn grep_v_of_comments(stage: &str) -> bool {
    if !matches!(stage_program(stage), "grep" | "egrep") {
        return false;
    }
    // The words after the program: its options, then one pattern.
    let mut rest = stage.split_once(char::is_whitespace).map_or("", |(_, r)| r);
    let mut inverted = false;
    loop {
        rest = rest.trim_start();
        let Some(option) = rest.strip_prefix('-') else {
            break;
        };
        let (word, after) = option
            .split_once(char::is_whitespace)
            .unwrap_or((option, ""));
        if word.starts_with('-') || word.contains(['e', 'f']) {
            // `--regexp=…`, `-e PATTERN`, `-f FILE`: patterns elsewhere.
            return false;
        }
        inverted |= word.contains('v');
        rest = after;
    }
    let pattern = rest.trim();
    let pattern = ['\'', '"']
        .iter()
        .find_map(|&q| pattern.strip_prefix(q).and_then(|p| p.strip_suffix(q)))
        .unwrap_or(pattern);
    let mut body = pattern.strip_prefix('^').unwrap_or(pattern);
    for space in [" *", "\\s*", "[[:space:]]*", "[ \\t]*"] {
        body = body.strip_prefix(space).unwrap_or(body);
    }
    inverted && (body.starts_with('#') || body == "$")
}

/// The filter a command line pipes its output through (`grep Up` of
/// `iblinkinfo | grep Up`), if any: the first stage whose program prints
/// only some of its input ([`LINE_FILTERS`]) after the last stage that
/// prints output of its own. A filter before that stage filters only that
/// stage's input: `lspci -n | awk '{print $1}' | xargs -I{} sh -c 'echo {};
/// mlxlink -d {} -c | grep -e Raw'` shows what `grep -e Raw` kept of
/// mlxlink's output, not what `awk` kept of lspci's. When nothing filters
/// that stage's output, the script it runs (`sh -c '…'`, `ssh host '…'`)
/// is looked into the same way.
pub(crate) fn output_filter(command: &str) -> Option<&str> {
    let stages: Vec<&str> = pipe_stages(command).map(str::trim).collect();
    let is_filter = |stage: &str| LINE_FILTERS.contains(&stage_program(stage));
    let producer = stages
        .iter()
        .rposition(|s| !is_filter(s) && !PASS_THROUGH.contains(&stage_program(s)))
        .unwrap_or(0);
    let after = stages.get(producer + 1..).unwrap_or_default();
    if let Some(filter) = after.iter().find(|s| is_filter(s)) {
        return Some(filter);
    }
    // Only a stage that runs something else has a script of its own (the
    // quoted pattern of a filter is no script).
    stages
        .get(producer)
        .filter(|s| !is_filter(s))
        .and_then(|s| quoted_script(s))
        .and_then(output_filter)
}

/// The last quoted text of `stage` that holds a pipeline (`'echo {} &&
/// mlxlink -d {} -c | grep Raw'` of `xargs -I{} sh -c '…'`), quotes of
/// the other kind inside it kept.
fn quoted_script(stage: &str) -> Option<&str> {
    let bytes = stage.as_bytes();
    let mut found = None;
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        if b == b'\'' || b == b'"' {
            let close = bytes
                .get(i + 1..)
                .and_then(|rest| memchr::memchr(b, rest))
                .map(|j| i + 1 + j);
            let Some(close) = close else { break };
            let inner = stage.get(i + 1..close).unwrap_or_default();
            if inner.contains('|') {
                found = Some(inner);
            }
            i = close + 1;
        } else {
            i += 1;
        }
    }
    found
}

/// The stages of a shell pipeline: `command` split at each `|` outside
/// quotes (`grep -E "CA '|Port |State"` is one stage) and not part of
/// `||`.
fn pipe_stages(command: &str) -> impl Iterator<Item = &str> {
    let bytes = command.as_bytes();
    let mut quote: Option<u8> = None;
    let mut cuts = Vec::new();
    for (i, &b) in bytes.iter().enumerate() {
        match (quote, b) {
            (Some(q), _) if b == q => quote = None,
            (Some(_), _) => {}
            (None, b'"' | b'\'') => quote = Some(b),
            (None, b'|')
                if bytes.get(i + 1) != Some(&b'|')
                    && (i == 0 || bytes.get(i - 1) != Some(&b'|')) =>
            {
                cuts.push(i);
            }
            _ => {}
        }
    }
    let starts = std::iter::once(0).chain(cuts.iter().map(|c| c + 1));
    let ends = cuts.iter().copied().chain(std::iter::once(command.len()));
    let stages: Vec<&str> = starts
        .zip(ends)
        .map(|(a, b)| command.get(a..b).unwrap_or_default())
        .collect();
    stages.into_iter()
}

fn check_cut(ctx: &Context<'_>, out: &mut Vec<Finding>) -> Coverage {
    if ctx.sections().next().is_none() {
        return Coverage::Skipped("no tool output in the input".to_owned());
    }
    let mut by_input: BTreeMap<(usize, HostKey<'_>), Vec<PartialPart<'_>>> = BTreeMap::new();
    for p in partial_parts(ctx) {
        by_input.entry((p.at.doc, p.at.host())).or_default().push(p);
    }
    for ((_, host), parts) in &by_input {
        let Some(first) = parts.first() else {
            continue;
        };
        // A matrix nvidia-smi drew with only some of its NICs is not cut:
        // the tool said so above its header.
        let left_out = |p: &PartialPart<'_>| p.partial.reason == PartialReason::NotShown;
        let cut_line = parts
            .iter()
            .filter(|p| !left_out(p))
            .map(|p| p.partial.line)
            .min();
        // ibdiagnet's summary pasted without the lines it counts is not cut
        // short: the author left those lines in ibdiagnet2.log.
        let head = if parts.iter().all(is_unshown_count) {
            "ibdiagnet's summary counts problems the paste does not show".to_owned()
        } else {
            let tool = parts
                .iter()
                .any(left_out)
                .then_some("nvidia-smi left NICs out of the topology matrix");
            let cut = cut_line.map(|l| format!("the paste looks cut at line {l}"));
            match (tool, cut) {
                (Some(tool), Some(cut)) => format!("{tool}, and {cut}"),
                (Some(tool), None) => tool.to_owned(),
                (None, cut) => cut.unwrap_or_default(),
            }
        };
        let mut f = IN001
            .finding(
                Subject::host(host.name()),
                format!(
                    "{head}; not judged: {}",
                    list_parts(parts.iter().map(|p| p.what.as_str()))
                ),
            )
            .threshold(Threshold::new(
                "every field, cell and row the tool always prints",
                "the tool's output layout",
            ))
            .remediation(
                "Paste the whole output again if the parts listed matter; everything else was judged as usual.",
            );
        for p in parts {
            f = f.evidence(Evidence::new(
                format!(
                    "{}: {}: {}",
                    p.at.section.kind.name(),
                    p.what,
                    p.partial.describe()
                ),
                LineSpan::line(p.partial.line),
                first.at.source(),
            ));
        }
        out.push(f);
    }
    Coverage::Checked(ctx.sections().count())
}

fn check_unread(ctx: &Context<'_>, out: &mut Vec<Finding>) -> Coverage {
    if ctx.sections().next().is_none() {
        return Coverage::Skipped("no tool output in the input".to_owned());
    }
    let mut by_input: BTreeMap<(usize, HostKey<'_>), Vec<(SectionRef<'_>, &Warning)>> =
        BTreeMap::new();
    for at in ctx.sections() {
        for w in at
            .section
            .warnings
            .iter()
            .filter(|w| w.kind == WarningKind::Unreadable)
        {
            by_input
                .entry((at.doc, at.host()))
                .or_default()
                .push((at, w));
        }
    }
    for ((_, host), unread) in &by_input {
        let lines: usize = unread.iter().map(|(_, w)| w.span.len()).sum();
        let mut tools: Vec<&str> = Vec::new();
        for (at, _) in unread {
            let tool = at.section.kind.name();
            if !tools.contains(&tool) {
                tools.push(tool);
            }
        }
        let mut f = IN002
            .finding(
                Subject::host(host.name()),
                format!(
                    "{lines} line{} of {} output could not be read and {} not judged{}",
                    if lines == 1 { "" } else { "s" },
                    tools.join(", "),
                    if lines == 1 { "was" } else { "were" },
                    if unread.len() > UNREAD_EVIDENCE {
                        format!(
                            " (the first {UNREAD_EVIDENCE} of {} runs of lines are listed)",
                            unread.len()
                        )
                    } else {
                        String::new()
                    }
                ),
            )
            .threshold(Threshold::new(
                "every line of a tool's output read",
                "the tool's output layout",
            ))
            .remediation(
                "Paste the tool's whole output, or filter it so that its headers stay (`ibstat | grep -E \"CA '|Port |State\"`); for a tool's error, run the command again as it asks.",
            );
        for (at, w) in unread.iter().take(UNREAD_EVIDENCE) {
            f = f.evidence(Evidence::new(
                format!("{}: {}", at.section.kind.name(), w.message),
                w.span,
                at.source(),
            ));
        }
        out.push(f);
    }
    Coverage::Checked(ctx.sections().count())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::testing::findings_of;

    #[test]
    fn the_gpu_an_nvlink_command_selects() {
        assert_eq!(gpu_option("nvidia-smi nvlink --capabilities -i 1"), Some(1));
        assert_eq!(gpu_option("nvidia-smi nvlink -s --id 3"), Some(3));
        assert_eq!(gpu_option("nvidia-smi nvlink --id=12 -e"), Some(12));
        assert_eq!(gpu_option("nvidia-smi nvlink -s"), None);
        assert_eq!(gpu_option("nvidia-smi nvlink -c -i 00000000:18:00.0"), None);
        assert_eq!(gpu_option("nvidia-smi nvlink -c -i"), None);
    }

    #[test]
    fn comment_filters_are_told_from_filters_of_readings() {
        for command in [
            "curl -s gpu07:8080/metrics | grep -v '^#'",
            "curl -s gpu07:8080/metrics | grep -v \"^ *#\" | grep -v '^$'",
            "curl -s gpu07:8080/metrics | egrep -v '^# (HELP|TYPE)'",
            "wget -qO- gpu07:9400/metrics | grep -iv ^#",
        ] {
            assert!(filters_drop_only_comments(command), "{command}");
        }
        for command in [
            "curl -s gpu07:8080/metrics",
            "curl -s gpu07:8080/metrics | grep '^#'",
            "curl -s gpu07:8080/metrics | grep -v '^#' | grep REMAP",
            "curl -s gpu07:8080/metrics | grep -v -e '^#' -e XID",
            "curl -s gpu07:8080/metrics | grep -v XID",
            "curl -s gpu07:8080/metrics | head -50",
        ] {
            assert!(!filters_drop_only_comments(command), "{command}");
        }
    }

    #[test]
    fn a_filter_is_the_first_line_filtering_stage_of_the_pipeline() {
        assert_eq!(
            output_filter(r#"ibstat | grep -E "CA '|Port |State""#),
            Some(r#"grep -E "CA '|Port |State""#)
        );
        assert_eq!(
            output_filter("iblinkinfo | tee out.txt | grep Up"),
            Some("grep Up")
        );
        assert_eq!(output_filter("nvidia-smi -q | less"), None);
        assert_eq!(output_filter("ibstat || echo failed"), None);
        assert_eq!(output_filter("ibstat"), None);
    }

    #[test]
    fn a_filter_before_the_stage_that_prints_the_output_is_not_its_filter() {
        // awk picks lspci's addresses; grep inside the script picks
        // mlxlink's lines: the paste shows what grep kept.
        assert_eq!(
            output_filter(
                "lspci -d 15b3::0207 -n | awk '{print $1}' | xargs -I{} sh -c 'echo {} && mlxlink -d {} -c | grep -e Effective -e Raw' | tee /tmp/out.log"
            ),
            Some("grep -e Effective -e Raw")
        );
        assert_eq!(
            output_filter(r#"pdsh -w gpu[01-04] "ibstat | grep -E 'State|Rate'" | dshbak -c"#),
            Some("grep -E 'State|Rate'")
        );
        assert_eq!(
            output_filter("lspci -n | awk '{print $1}' | xargs -n1 mlxlink -c -d"),
            None
        );
        assert_eq!(output_filter("ssh gpu07 'ibstat mlx5_0'"), None);
        // A loop's body split at its pipe: the filter is still found.
        assert_eq!(
            output_filter("for d in mlx5_0 mlx5_1; do mlxlink -d $d -c | grep BER; done"),
            Some("grep BER; done")
        );
    }

    #[test]
    fn rows_that_lost_the_same_cells_are_named_in_one_clause() {
        let cells = "affinity cells (NUMA Affinity; GPU NUMA ID)";
        let names = [
            "topo -m matrix".to_owned(),
            format!("GPU0's {cells}"),
            format!("GPU1's {cells}"),
            "GPU2 row".to_owned(),
            format!("GPU1's {cells}"),
            "GPU3's affinity cells (GPU NUMA ID)".to_owned(),
        ];
        assert_eq!(
            list_parts(names.iter().map(String::as_str)),
            format!(
                "topo -m matrix, {cells} of GPU0, GPU1, GPU2 row, GPU3's affinity cells (GPU NUMA ID)"
            )
        );
        // One row keeps its own wording; other parts are left whole.
        assert_eq!(
            list_parts([format!("GPU7's {cells}").as_str(), "mlx5_0's port 1"].into_iter()),
            format!("GPU7's {cells}, mlx5_0's port 1")
        );
    }

    /// A tool the shell did not find never ran: one IN003 info per tool,
    /// and its lines (the install advice too) are not unread output.
    #[test]
    fn a_command_the_shell_did_not_find_is_said_not_unread() {
        let text = "admin@gpu3:~$ ibv_devinfo\n\
                    Command 'ibv_devinfo' not found, but can be installed with:\n\
                    sudo apt install ibverbs-utils\n\
                    admin@gpu3:~$ ibstat\n\
                    -bash: ibstat: command not found\n\
                    admin@gpu3:~$ perfquery\n\
                    zsh: command not found: perfquery\n";
        let f = findings_of(&IN003, text);
        assert_eq!(f.len(), 3, "{f:#?}");
        for finding in &f {
            assert_eq!(finding.severity, crate::rules::Severity::Info);
            assert!(
                finding.message.contains("not installed"),
                "{}",
                finding.message
            );
        }
        assert!(findings_of(&IN002, text).is_empty());
        // A device the tool did not find is no missing command.
        let (severity, cause, _) = tool_failure_cause("ibstat: iberror: Device 'mlx5_9' not found");
        assert!(!cause.contains("not installed"), "{cause}");
        assert_eq!(severity, crate::rules::Severity::Info);
    }

    #[test]
    fn an_interface_name_given_for_an_adapter_is_a_wrong_command_not_a_missing_device() {
        // `ibstat ib1` beside an ibdev2netdev that maps mlx5_6 to ib1.
        let text = "ubuntu@gpu3:~$ ibdev2netdev\n\
                    mlx5_6 port 1 ==> ib1 (Down)\n\
                    ubuntu@gpu3:~$ ibstat ib1\n\
                    ibpanic: [5896] main: 'ib1' IB device can't be found: No such file or directory\n";
        let f = findings_of(&IN003, text);
        assert_eq!(f.len(), 1, "{f:?}");
        assert_eq!(f[0].severity, crate::rules::Severity::Info);
        assert!(
            f[0].message.contains("network interface"),
            "{}",
            f[0].message
        );
        for name in ["ib0", "ib1.8001", "eth2", "ens4f1", "enp65s0f0np0", "bond0"] {
            let (severity, cause, _) = tool_failure_cause(&format!(
                "ibpanic: [7] main: '{name}' IB device can't be found: No such file or directory"
            ));
            assert_eq!(severity, crate::rules::Severity::Info, "{name}");
            assert!(cause.contains("network interface"), "{name}: {cause}");
        }
        // An adapter's own name the tool did not find is still no device.
        for name in ["mlx5_9", "ibp65s0", "rocep65s0f0", "rxe0", "mlx5_bond_0"] {
            let (severity, cause, _) = tool_failure_cause(&format!(
                "ibpanic: [7] main: '{name}' IB device can't be found: No such file or directory"
            ));
            assert_eq!(severity, crate::rules::Severity::Warning, "{name}");
            assert_eq!(cause, NO_DEVICE, "{name}");
        }
    }

    #[test]
    fn a_cut_matrix_is_said_once_with_its_rows() {
        let text = "\tGPU0\tGPU1\tGPU2\tCPU Affinity\tNUMA Affinity\n\
                    GPU0\t X \tNV12\tNV12\t0-7\t0\n\
                    GPU1\tNV12\t X \tNV";
        let f = findings_of(&IN001, text);
        assert_eq!(f.len(), 1, "{f:?}");
        assert!(f[0].message.contains("cut at line 3"), "{}", f[0].message);
        assert!(
            f[0].message.contains("GPU1 row, GPU2 row"),
            "{}",
            f[0].message
        );
    }

    #[test]
    fn a_row_cut_in_its_affinity_cells_names_those_cells() {
        // GPU1's link cells were read (and are judged); its affinity cells,
        // which a cut last line cannot vouch for, and the GPU2 row are not.
        let text = "\tGPU0\tGPU1\tGPU2\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID\n\
                    GPU0\t X \tNV12\tNV12\t0-7\t0\tN/A\n\
                    GPU1\tNV12\t X \tNV12\t0-7\t0";
        let f = findings_of(&IN001, text);
        assert_eq!(f.len(), 1, "{f:?}");
        assert!(
            f[0].message.contains("not judged: GPU1's affinity cells ("),
            "{}",
            f[0].message
        );
        assert!(
            f[0].message.ends_with("GPU NUMA ID), GPU2 row"),
            "{}",
            f[0].message
        );
    }

    #[test]
    fn nic_rows_without_header_or_gpu_rows_are_said_not_judged() {
        // A paste that starts at the NIC rows of a wide matrix: nothing in
        // it can be judged, and that is not health.
        let text = "NIC6    NODE    NODE    SYS     SYS     PIX     PIX      X      PIX     SYS\n\
                    NIC7    NODE    NODE    SYS     SYS     PIX     PIX     PIX      X      SYS\n\
                    NIC8    SYS     SYS     PXB     NODE    SYS     SYS     SYS     SYS      X\n";
        let f = findings_of(&IN001, text);
        assert_eq!(f.len(), 1, "{f:?}");
        assert_eq!(f[0].severity, crate::rules::Severity::Info);
        assert!(f[0].message.contains("topo -m matrix"), "{}", f[0].message);
        assert!(
            f[0].evidence[0].text.contains("GPU rows"),
            "{:?}",
            f[0].evidence
        );
    }

    #[test]
    fn state_lines_without_their_headers_are_ports_and_the_headers_are_said_missing() {
        // `ibstat | grep State`: two ports whose adapter and number are not
        // in the paste. Every line is read (no IN002); IN001 says what
        // the grep took away: the headers, and every field but the states.
        let text = "$ ibstat | grep State\n\t\tState: Active\n\t\tPhysical state: LinkUp\n\t\tState: Down\n\t\tPhysical state: Polling\n";
        assert_eq!(findings_of(&IN002, text), []);
        let f = findings_of(&IN001, text);
        assert_eq!(f.len(), 1, "{f:?}");
        assert_eq!(
            f[0].message,
            "the paste looks cut at line 1; not judged: lines `grep State` left out, \
             which adapter and port number the 2 header-less ports (lines 2–5) are, \
             and the port fields the paste does not show"
        );
        let headers = &f[0].evidence[1];
        assert_eq!(headers.span, LineSpan::line(2));
        assert!(
            headers.text.ends_with(
                "header missing (missing the `CA '…'` and `Port N:` lines, Rate, Base lid, \
                 LMC, SM lid, Capability mask, Port GUID, Link layer)"
            ),
            "{}",
            headers.text
        );
    }

    #[test]
    fn many_runs_of_unread_lines_list_the_first_and_count_all() {
        let mut text = "CA 'mlx5_0'\n\tCA type: MT4123\n\tPort 1:\n\t\tState: Active\n".to_owned();
        for _ in 0..25 {
            text.push_str("\t\tnot a field\n\t\tRate: 200\n");
        }
        let f = findings_of(&IN002, &text);
        assert_eq!(f.len(), 1, "{f:?}");
        assert_eq!(f[0].evidence.len(), UNREAD_EVIDENCE);
        let listed = format!("the first {UNREAD_EVIDENCE} of 25 runs");
        assert!(
            f[0].message.starts_with("25 lines of ibstat output") && f[0].message.contains(&listed),
            "{}",
            f[0].message
        );
    }

    #[test]
    fn lines_read_whole_say_nothing() {
        let text = "CA 'mlx5_0'\n\tCA type: MT4123\n\tNumber of ports: 1\n\tPort 1:\n\t\tState: Active\n\t\tPhysical state: LinkUp\n\t\tRate: 200\n";
        assert!(findings_of(&IN002, text).is_empty());
    }

    #[test]
    fn a_complete_matrix_says_nothing() {
        let text = "\tGPU0\tGPU1\tCPU Affinity\tNUMA Affinity\n\
                    GPU0\t X \tNV12\t0-7\t0\n\
                    GPU1\tNV12\t X \t0-7\t0\n";
        assert!(findings_of(&IN001, text).is_empty());
    }
}
