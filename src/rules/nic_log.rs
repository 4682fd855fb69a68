//! IB011 and IB012: what a kernel log's adapter lines (`mlx5_core`,
//! `mlx4_core`) say of a port's link, its cable module and its PCIe slot.
//!
//! When a job hangs, the on-call engineer pastes `dmesg | grep mlx5` or
//! `journalctl -k | grep -E 'mlx5|ib0'`. A healthy, busy, year-old host's
//! log shows a `Link down`/`Link up` pair now and then (a reboot, a cable
//! reseated, a switch upgraded): news, not a page. A port that keeps going
//! down, or one that goes down and stays down until the log ends, is a
//! job's hang; a cable module's error or a slot narrower than the adapter
//! is a fault to fix whatever the jobs say.

use super::context::{Context, HostKey, SectionRef};
use super::{Coverage, Evidence, Finding, Severity, Subject, Threshold};
use crate::declare_rule;
use crate::model::kernel_log::{NicEvent, NicWhat, PcieBandwidth};
use crate::parse::SectionData;
use std::collections::BTreeMap;

declare_rule! {
    /// ### What it detects
    /// A port whose kernel log shows its link going down: the netdev's
    /// `mlx5_core 0000:53:00.0 enp83s0f0np0: Link down` (and `Link up`),
    /// or the RDMA core's `mlx5_core 0000:53:00.0 mlx5_3: Port: 1 Link
    /// DOWN` (and `… Link ACTIVE`), read from `dmesg` (plain, `-T`, `-x`),
    /// `journalctl -k` or syslog. One finding per adapter (PCI address),
    /// named by its RDMA device when a line names it.
    ///
    /// ### Why it matters
    /// A link that goes down under a job stalls its collectives until the
    /// link is back, or for good. One down followed by an up is what a
    /// reboot, a reseated cable or a switch's maintenance leaves in a log:
    /// `info`, nobody is paged. Two or more downs (each after the first
    /// came after an up) are a flapping link (a marginal cable, transceiver
    /// or switch port): `warning`; but when the log's times (dmesg's
    /// seconds since boot, or the time `dmesg -T` and journald print) put
    /// every two downs more than an hour apart, each came back and they
    /// are separate events (a host up for months sees its switch's
    /// maintenance more than once): `info`. A down with no later up in a log that
    /// ran to its end (a shell prompt or other output follows it) is a
    /// port left down: `error`. When the paste may be cut after the down
    /// (it ends with the log), the up may be in what was not pasted: the
    /// down is counted, the missing up is not evidence (`info` for one
    /// down). A down in the first five minutes after boot (by the
    /// `[seconds]` dmesg prints, or by the times printed since the first
    /// line after a journal's `-- Boot … --` / `-- Reboot --` line) is
    /// the port's bring-up and not counted. A journal over several boots
    /// (`journalctl -k -b all`) is judged boot by boot: downs in two boots
    /// are no flapping series, and a down the host rebooted after, with no
    /// up logged before the boot line, is no port left down: `info` (a
    /// shutdown takes the link down), `warning` when it lasted ten minutes
    /// or more before the reboot. Syslog's year-less times (`Dec  7
    /// 10:01:02`) are read in order within the log, a December line
    /// followed by a January one a year on.
    /// When the netdev and the RDMA core both print a change, the one
    /// showing more downs is judged, so one change is not counted twice.
    ///
    /// ### Evidence
    /// Each down line (the first eight) and the up line after it.
    ///
    /// ### What to do
    /// For a port left down: `ibstat`/`ip link` on the host, then the
    /// cable, the transceiver and the switch port (`mlxlink -d <dev> -m -c
    /// -e` shows the cable and the physical errors). For a flapping port:
    /// `mlxlink -d <dev> -c -e` for the physical counters and the cable,
    /// reseat or replace the cable, and compare with the switch port's
    /// link-down counter (`perfquery`'s `LinkDownedCounter`). One down and
    /// up: check it matches a planned event.
    ///
    /// ### Thresholds and sources
    /// fabricscope's own heuristic: one down is `info`, two within an
    /// hour (or of unknown times) are flapping, a down not followed by an up in a log that ran to its end is an
    /// error; bring-up within 300 s of boot is not counted; a down ten
    /// minutes or more before a reboot is a warning. The boot line:
    /// systemd's journalctl (`-- Boot <id> --`, src/journal/
    /// journalctl-show.c; `-- Reboot --` before it). Line shapes:
    /// Linux `mlx5e_update_carrier` (drivers/net/ethernet/mellanox/mlx5/
    /// core/en_main.c) and `ib_cache_update` (drivers/infiniband/core/
    /// cache.c, `Port: %d Link %s`).
    pub static IB011 = {
        id: "IB011",
        name: "kernel-link-down",
        family: IbPort,
        severity: Warning,
        summary: "the kernel log shows an adapter port's link going down (and whether it came back)",
        needs: "the kernel log's adapter lines (dmesg | grep mlx5, journalctl -k)",
        check: check_link,
    }
}

declare_rule! {
    /// ### What it detects
    /// An adapter whose kernel log shows a cable-module error (`mlx5_core
    /// 0000:5c:00.0: Port module event[error]: module 0, Cable error, High
    /// Temperature`), a cable unplugged (`Port module event: module 0,
    /// Cable unplugged`), or a PCIe slot narrower or slower than the
    /// adapter (`63.008 Gb/s available PCIe bandwidth, limited by 8.0 GT/s
    /// PCIe x8 link at 0000:3a:00.0 (capable of 252.048 Gb/s with 16.0
    /// GT/s PCIe x16 link)`). One finding per adapter.
    ///
    /// ### Why it matters
    /// The firmware reports a module error when the cable or transceiver
    /// cannot be used: its power draw exceeds what the port can give, it
    /// runs too hot, its bus is stuck or shorted, it is not a supported
    /// part, or its EEPROM does not answer. The port stays down or drops:
    /// `error`. An unplugged cable is `warning` when the log ran to its end
    /// (a prompt or other output follows) without showing it plugged back,
    /// `info` when it does or when the paste may be cut after the unplug. A PCIe link trained narrower
    /// or slower than the adapter can do caps its bandwidth below what the
    /// adapter was bought for (an x16 adapter at x8 halves it): `warning`,
    /// with the figures. The driver's `Cable plugged` and the full-width
    /// bandwidth line are healthy.
    ///
    /// ### Evidence
    /// Each module event and each bandwidth line.
    ///
    /// ### What to do
    /// Module error: read the module with `mlxlink -d <dev> -m` (its
    /// temperature, power class and part number), check the airflow for a
    /// high temperature, replace the cable or transceiver for a bus,
    /// shorted or EEPROM error, use a supported part for a part-number or
    /// identifier error, and a lower-power one for a power budget. PCIe:
    /// `lspci -vv -s <address>` (`LnkCap` against `LnkSta`); reseat the
    /// adapter or move it to a full-width slot, and check the slot's
    /// BIOS setting and the riser.
    ///
    /// ### Thresholds and sources
    /// Any module error; an unplug not followed by a plug in a log that
    /// ran to its end; any `limited by` line. Module statuses and reasons: Linux `mlx5_pme_status` and
    /// `mlx5_pme_error` (drivers/net/ethernet/mellanox/mlx5/core/events.c).
    /// The bandwidth line: `__pcie_print_link_status` (drivers/pci/pci.c),
    /// printed only when the available bandwidth is below the device's.
    pub static IB012 = {
        id: "IB012",
        name: "kernel-cable-or-pcie",
        family: IbPort,
        severity: Error,
        summary: "the kernel log shows a cable-module error or unplug, or an adapter on a narrower PCIe link than it can use",
        needs: "the kernel log's adapter lines (dmesg | grep mlx5, journalctl -k)",
        check: check_module,
    }
}

/// Seconds after boot within which a down is the port's bring-up.
const BRING_UP_SECONDS: f64 = 300.0;

/// Two downs of a link at most this far apart (by the seconds since boot
/// dmesg prints) make it flapping: a marginal cable or transceiver drops
/// again within minutes, while maintenance, a switch's reboot or a
/// reseated cable leave downs hours or days apart in a long-running
/// host's log (fabricscope's heuristic).
const FLAP_WINDOW_SECONDS: f64 = 3600.0;

/// A down this long (or longer) before the host rebooted was a port left
/// down, the reboot perhaps the fix; a shorter one is what a shutdown
/// prints as it takes the link down (fabricscope's heuristic).
const DOWN_BEFORE_REBOOT_SECONDS: f64 = 600.0;

/// Half a year: a year-less time this far before the line above it is in
/// the next year (a log running past New Year, `Dec 31` then `Jan  1`).
const HALF_YEAR_SECONDS: f64 = 182.0 * 86_400.0;

/// Reads the times printed on one log's lines, in line order, as seconds:
/// a time with its year as a date; syslog's and journalctl's year-less
/// `Dec  7 10:01:02` as in one year, the next one after a line that goes
/// back more than half a year (December to January).
struct WallClock {
    /// The year a year-less time is read in (2001 to start: no year is
    /// printed, only the differences between lines are used).
    year: u32,
    /// The last year-less time read.
    last: Option<f64>,
}

impl WallClock {
    fn new() -> Self {
        Self {
            year: 2001,
            last: None,
        }
    }

    fn read(&mut self, printed: &str, span: crate::span::LineSpan) -> Option<f64> {
        if let Some(d) = crate::parse::date::parse_stamp(printed, span) {
            return Some(d.wall_clock_seconds);
        }
        let mut t = crate::parse::date::yearless_seconds(printed, self.year)?;
        if self.last.is_some_and(|last| t < last - HALF_YEAR_SECONDS) {
            self.year += 1;
            t = crate::parse::date::yearless_seconds(printed, self.year)?;
        }
        self.last = Some(t);
        Some(t)
    }
}

/// The printed times of an adapter's lines and of its host's boots, as
/// seconds ([`WallClock`]), read in line order.
struct Times {
    /// One per line of [`Adapter::events`].
    events: Vec<Option<f64>>,
    /// The first line of each boot after a journal's boot line.
    boots: BTreeMap<usize, Option<f64>>,
}

impl Times {
    fn of(a: &Adapter<'_>) -> Self {
        let mut clock = WallClock::new();
        let mut boots = BTreeMap::new();
        let mut pending = a.boot_starts.iter().peekable();
        let mut events = Vec::with_capacity(a.events.len());
        for (e, epoch) in a.events.iter().zip(&a.epochs) {
            while let Some((b, (first, span))) = pending.next_if(|(b, _)| *b <= epoch) {
                boots.insert(*b, first.and_then(|t| clock.read(t, *span)));
            }
            events.push(e.time.as_deref().and_then(|t| clock.read(t, e.span)));
        }
        for (b, (first, span)) in pending {
            boots.insert(*b, first.and_then(|t| clock.read(t, *span)));
        }
        Self { events, boots }
    }
}

/// The seconds between the two closest downs of a stream, when every
/// down has its time: dmesg's seconds since boot, else the time printed
/// read as a date (`dmesg -T`'s `Mon Dec  7 09:14:02 2026`, ISO, and
/// syslog's year-less `Dec  7 09:14:02` ordered within the log); `None`
/// when one lacks both (then nothing says they were far apart) or there
/// is one down.
fn closest_downs_seconds(s: &Stream<'_>) -> Option<f64> {
    let times: Option<Vec<f64>> = s.down_seconds.iter().copied().collect();
    times?
        .windows(2)
        .filter_map(|w| match w {
            [a, b] => Some((b - a).abs()),
            _ => None,
        })
        .reduce(f64::min)
}

/// A gap in hours (or days beyond two days), in words.
fn hours_words(seconds: f64) -> String {
    let hours = seconds / 3600.0;
    if hours >= 48.0 {
        format!("{:.0} days", hours / 24.0)
    } else {
        format!("{hours:.1} h")
    }
}

/// A gap of seconds in words: seconds, minutes, or hours and days.
fn gap_words(seconds: f64) -> String {
    if seconds < 120.0 {
        format!("{seconds:.0} s")
    } else if seconds < 7200.0 {
        format!("{:.0} min", seconds / 60.0)
    } else {
        hours_words(seconds)
    }
}

/// Evidence lines of downs at most.
const MAX_DOWNS_SHOWN: usize = 8;

/// One adapter's lines of one host.
struct Adapter<'a> {
    at: SectionRef<'a>,
    pci: &'a str,
    events: Vec<&'a NicEvent>,
    /// The boot of each of [`Self::events`]: its host's journal boot lines
    /// before it, over the host's kernel logs in order.
    epochs: Vec<usize>,
    /// The time printed on the first line of each boot after a journal's
    /// boot line (boot 1, 2, … of the host), and that line.
    boot_starts: BTreeMap<usize, (Option<&'a str>, crate::span::LineSpan)>,
    /// Whether the log of its last line ran to its end: a shell prompt or
    /// other output follows it. Else the paste may be cut anywhere after
    /// its last line, and a missing `up` (or `plugged`) is no evidence.
    whole: bool,
}

impl Adapter<'_> {
    /// The adapter's RDMA device (`mlx5_3`) and port, from a `Port: N
    /// Link` line; else a netdev's name; else its address.
    fn subject(&self) -> Subject {
        let mut subject = Subject::host(self.at.host().name());
        let port_line = self
            .events
            .iter()
            .find_map(|e| match (&e.what, &e.interface) {
                (Some(NicWhat::PortState { port, .. }), Some(name)) => Some((name, *port)),
                _ => None,
            });
        match port_line {
            Some((name, port)) => {
                subject.device = Some(name.clone());
                subject.port = Some(port);
            }
            None => {
                let netdev = self.events.iter().find_map(|e| e.interface.as_ref());
                subject.device = Some(netdev.map_or_else(
                    || format!("adapter {}", self.pci),
                    |n| format!("{n} ({})", self.pci),
                ));
            }
        }
        subject
    }

    /// The subject with the adapter's address, once.
    fn named(&self, subject: &Subject) -> String {
        let described = subject.describe();
        if described.contains(self.pci) {
            described
        } else {
            format!("{described} (adapter {})", self.pci)
        }
    }
}

/// The adapters of every kernel log with at least one line that `wanted`
/// keeps, by host and PCI address; and how many such lines were cut.
fn adapters<'a>(
    ctx: &Context<'a>,
    wanted: fn(&NicWhat) -> bool,
) -> (BTreeMap<(HostKey<'a>, &'a str), Adapter<'a>>, usize, usize) {
    let mut out: BTreeMap<(HostKey<'a>, &'a str), Adapter<'a>> = BTreeMap::new();
    let mut cut = 0usize;
    let mut logs = 0usize;
    // A host's boots so far, and the first line of each after a boot line.
    type BootStarts<'a> = BTreeMap<usize, (Option<&'a str>, crate::span::LineSpan)>;
    let mut boots: BTreeMap<HostKey<'a>, (usize, BootStarts<'a>)> = BTreeMap::new();
    for at in ctx.sections() {
        let SectionData::KernelLog(log) = &at.section.data else {
            continue;
        };
        logs += usize::from(!log.nic_events.is_empty());
        let (base, starts) = boots.entry(at.host()).or_default();
        let base_here = *base;
        for (i, b) in log.boots.iter().enumerate() {
            starts.insert(base_here + i + 1, (b.first_time.as_deref(), b.span));
        }
        *base += log.boots.len();
        for e in &log.nic_events {
            let Some(pci) = e.pci.as_deref() else {
                cut += 1;
                continue;
            };
            if e.what.is_none() {
                cut += 1;
                continue;
            }
            let adapter = out.entry((at.host(), pci)).or_insert_with(|| Adapter {
                at,
                pci,
                events: Vec::new(),
                epochs: Vec::new(),
                boot_starts: BTreeMap::new(),
                whole: false,
            });
            adapter.whole = !ctx.ends_input_mid_output(at);
            // Every line names the adapter (its netdev, its RDMA device);
            // `wanted` picks the adapters judged, below.
            adapter.events.push(e);
            adapter
                .epochs
                .push(base_here + usize::try_from(e.boot).unwrap_or(usize::MAX));
        }
    }
    out.retain(|_, a| a.events.iter().any(|e| e.what.as_ref().is_some_and(wanted)));
    for ((host, _), a) in &mut out {
        if let Some((_, starts)) = boots.get(host) {
            a.boot_starts.clone_from(starts);
        }
    }
    (out, cut, logs)
}

/// The link's direction a line says: down, up, or neither (`INIT`,
/// `ARMED`: on its way up).
fn direction(what: &NicWhat) -> Option<bool> {
    match what {
        NicWhat::Carrier { up } => Some(*up),
        NicWhat::PortState { state, .. } => match state.as_str() {
            "DOWN" => Some(false),
            "ACTIVE" | "ACTIVE_DEFER" => Some(true),
            _ => None,
        },
        _ => None,
    }
}

/// A line IB011 judges: a carrier or a port state with a direction.
fn is_link(what: &NicWhat) -> bool {
    direction(what).is_some()
}

/// One stream of link lines of an adapter: the netdev's, or a port's, in
/// one boot.
#[derive(Default)]
struct Stream<'a> {
    /// Downs (after an up, or first), each with the up that followed it.
    downs: Vec<(&'a NicEvent, Option<&'a NicEvent>)>,
    /// Each down's time in seconds: since boot when dmesg prints it, else
    /// the time printed ([`Times`]).
    down_seconds: Vec<Option<f64>>,
    /// When a journal's boot line follows the stream's boot: the next
    /// boot's first line's time in seconds, if printed (`Some(None)` when
    /// not).
    rebooted: Option<Option<f64>>,
    /// The boot (journal boot lines before it).
    epoch: usize,
}

impl Stream<'_> {
    fn came_back(&self) -> usize {
        self.downs.iter().filter(|(_, up)| up.is_some()).count()
    }

    fn ends_down(&self) -> bool {
        self.downs.last().is_some_and(|(_, up)| up.is_none())
    }
}

/// A stream's key: the boot, whether it is the RDMA core's, the
/// interface, the port.
type StreamKey<'a> = (usize, bool, Option<&'a str>, Option<u32>);

/// The adapter's link streams: by boot, interface and port, in line order.
/// A down within [`BRING_UP_SECONDS`] of its boot (by dmesg's seconds
/// since boot, or by the times printed on it and on the first line after
/// the journal's boot line) is the port's bring-up, not counted.
fn streams<'a>(a: &Adapter<'a>) -> Vec<Stream<'a>> {
    let times = Times::of(a);
    let last_boot = a
        .epochs
        .iter()
        .chain(a.boot_starts.keys())
        .copied()
        .max()
        .unwrap_or(0);
    let mut keyed: Vec<(StreamKey<'a>, Stream<'a>)> = Vec::new();
    for (i, e) in a.events.iter().enumerate() {
        let Some(what) = &e.what else { continue };
        let Some(up) = direction(what) else { continue };
        let epoch = a.epochs.get(i).copied().unwrap_or(0);
        let wall = times.events.get(i).copied().flatten();
        let key = match what {
            NicWhat::PortState { port, .. } => (epoch, true, e.interface.as_deref(), Some(*port)),
            _ => (epoch, false, e.interface.as_deref(), None),
        };
        let at = match keyed.iter().position(|(k, _)| *k == key) {
            Some(i) => i,
            None => {
                let rebooted =
                    (epoch < last_boot).then(|| times.boots.get(&(epoch + 1)).copied().flatten());
                keyed.push((
                    key,
                    Stream {
                        rebooted,
                        epoch,
                        ..Stream::default()
                    },
                ));
                keyed.len() - 1
            }
        };
        let Some((_, s)) = keyed.get_mut(at) else {
            continue;
        };
        let since_boot_line = match (wall, times.boots.get(&epoch).copied().flatten()) {
            (Some(t), Some(start)) => Some(t - start),
            _ => None,
        };
        let bring_up = e
            .uptime_seconds
            .or(since_boot_line)
            .is_some_and(|t| (0.0..BRING_UP_SECONDS).contains(&t));
        match (up, s.downs.last_mut()) {
            (false, Some((_, None))) => {}
            (false, _) if bring_up => {}
            (false, _) => {
                s.downs.push((e, None));
                s.down_seconds.push(e.uptime_seconds.or(wall));
            }
            (true, Some((_, pending @ None))) => *pending = Some(e),
            (true, _) => {}
        }
    }
    keyed.into_iter().map(|(_, s)| s).collect()
}

/// The severity and verdict of a stream.
fn verdict(a: &Adapter<'_>, s: &Stream<'_>) -> Option<(Severity, String)> {
    let back = s.came_back();
    let first = s.downs.first()?.0;
    let last_down = s.downs.last()?.0;
    let when = |e: &NicEvent| e.when().map(|w| format!(" at {w}")).unwrap_or_default();
    let between = match (first.when(), last_down.when()) {
        (Some(x), Some(y)) if s.downs.len() > 1 => format!(" from {x} to {y}"),
        _ => String::new(),
    };
    // A down that is the stream's last word is judged as such only when
    // the log ran to its end; in a paste that may be cut after it, the up
    // may be in what was not pasted. When the host rebooted after it (a
    // journal's boot line), the boot ended there: see below.
    if s.ends_down() && a.whole && s.rebooted.is_none() {
        let before = match back {
            0 => String::new(),
            1 => ", after one down that came back up".to_owned(),
            n => format!(", after {n} downs that came back up (flapping)"),
        };
        return Some((
            Severity::Error,
            format!(
                "went down{} and the log, which ran to its end, shows no later up{before}",
                when(last_down)
            ),
        ));
    }
    // How long the last down lasted before the host rebooted, when both
    // times are printed.
    let down_for = match (s.rebooted, s.down_seconds.last()) {
        (Some(Some(boot)), Some(Some(down))) => Some(boot - down),
        _ => None,
    };
    let open = if s.ends_down() && s.rebooted.is_some() {
        format!(
            "; after its last down{} the host rebooted (the journal's boot line){} with no up logged",
            when(last_down),
            down_for
                .map(|d| format!(" {} later", gap_words(d)))
                .unwrap_or_default()
        )
    } else if s.ends_down() {
        format!(
            "; its last down{} is where the paste ends, and whether it came back is not shown",
            when(last_down)
        )
    } else {
        String::new()
    };
    let closest = closest_downs_seconds(s);
    Some(
        if s.downs.len() >= 2 && closest.is_some_and(|gap| gap > FLAP_WINDOW_SECONDS) {
            // Every down came back, and hours or days apart: maintenance,
            // reboots of the switch, a reseated cable, not a marginal link.
            (
            Severity::Info,
            format!(
                "went down {} times{between}, each time back up, the closest two {} apart: separate events (a switch's maintenance or reboot looks like this), not a flapping link{open}",
                s.downs.len(),
                hours_words(closest.unwrap_or_default())
            ),
        )
        } else if s.downs.len() >= 2 {
            // Each down after the first came after an up.
            (
                Severity::Warning,
                format!(
                    "went down {} times{between}: the link is flapping{open}",
                    s.downs.len()
                ),
            )
        } else if s.ends_down() && s.rebooted.is_some() {
            // The boot ended after the down: a shutdown takes the link
            // down; a port down long before the reboot was left down.
            if down_for.is_some_and(|d| d >= DOWN_BEFORE_REBOOT_SECONDS) {
                (
                    Severity::Warning,
                    format!(
                        "went down{} and stayed down for {} until the host rebooted (the journal's boot line follows, no up logged before it): the reboot may have been what brought it back; check it is up now",
                        when(first),
                        gap_words(down_for.unwrap_or_default())
                    ),
                )
            } else {
                (
                    Severity::Info,
                    format!(
                        "went down{} and then the host rebooted (the journal's boot line follows{}): a shutdown takes the link down, so this is no port left down",
                        when(first),
                        down_for
                            .map(|d| format!(", {} later", gap_words(d)))
                            .unwrap_or_default()
                    ),
                )
            }
        } else if back == 1 {
            (
            Severity::Info,
            format!(
                "went down{} and came back up once: a reboot, a reseated cable or a switch's maintenance looks like this",
                when(first)
            ),
        )
        } else {
            (Severity::Info, format!("went down{}{open}", when(first)))
        },
    )
}

/// The evidence of one line.
fn line_evidence(a: &Adapter<'_>, e: &NicEvent) -> Evidence {
    let mut text = describe_line(e);
    if let Some(when) = e.when() {
        text.push_str(&format!(" at {when}"));
    }
    Evidence::new(text, e.span, a.at.source())
}

/// `enp83s0f0np0: Link down`, `mlx5_3 port 1: DOWN`, `module 0: Cable
/// error, High Temperature`, `PCIe 63.008 Gb/s …`.
fn describe_line(e: &NicEvent) -> String {
    let name = e
        .interface
        .clone()
        .or_else(|| e.pci.clone())
        .unwrap_or_default();
    match &e.what {
        Some(NicWhat::Carrier { up }) => {
            format!("{name}: Link {}", if *up { "up" } else { "down" })
        }
        Some(NicWhat::PortState { port, state }) => format!("{name} port {port}: Link {state}"),
        Some(NicWhat::Module {
            module,
            status,
            error,
        }) => match error {
            Some(r) => format!("{name} module {module}: {status}, {r}"),
            None => format!("{name} module {module}: {status}"),
        },
        Some(NicWhat::PcieBandwidth(bw)) => format!("{name}: {}", describe_pcie(bw)),
        None => format!("{name}: (cut)"),
    }
}

/// `63.008 Gb/s available at 8.0 GT/s x8 (limited at 0000:3a:00.0), capable
/// of 252.048 Gb/s at 16.0 GT/s x16`.
fn describe_pcie(bw: &PcieBandwidth) -> String {
    let mut s = format!(
        "{:.3} Gb/s available PCIe bandwidth at {} x{}",
        bw.available_gbps, bw.speed, bw.width
    );
    if let Some(at) = &bw.limited_at {
        s.push_str(&format!(", limited at {at}"));
    }
    if let (Some(g), Some(sp), Some(w)) = (bw.capable_gbps, &bw.capable_speed, bw.capable_width) {
        s.push_str(&format!(", capable of {g:.3} Gb/s at {sp} x{w}"));
    }
    s
}

/// IB011.
fn check_link(ctx: &Context<'_>, out: &mut Vec<Finding>) -> Coverage {
    let (adapters, cut, logs) = adapters(ctx, is_link);
    if adapters.is_empty() {
        return Coverage::Skipped(if logs > 0 && cut > 0 {
            "the kernel log's adapter lines are cut before they say a link state".to_owned()
        } else {
            "no adapter link lines (mlx5_core … Link down/up, Port: N Link …) in a kernel log"
                .to_owned()
        });
    }
    for a in adapters.values() {
        if let Some(f) = link_finding(a) {
            out.push(f);
        }
    }
    Coverage::Checked(adapters.len())
}

/// The finding of an adapter with at least one counted down.
fn link_finding(a: &Adapter<'_>) -> Option<Finding> {
    let streams = streams(a);
    let judged: Vec<(Severity, String, &Stream<'_>)> = streams
        .iter()
        .filter_map(|s| verdict(a, s).map(|(sev, v)| (sev, v, s)))
        .collect();
    let (severity, verdict, stream) = judged
        .into_iter()
        .max_by_key(|(sev, _, s)| (*sev, s.downs.len()))?;
    let subject = a.subject();
    let message = format!(
        "{}: the kernel log shows the link {verdict}",
        a.named(&subject)
    );
    let mut f = IB011
        .finding(subject, message)
        .severity(severity)
        .threshold(Threshold::new(
            "one down: info; two or more downs of one boot within an hour of each other (or of unknown times): warning (flapping), farther apart: info; a down with no later up in a log that ran to its end (prompt or other output after it): error; a down the host rebooted after (a journal's boot line): info, warning when it lasted 10 min or more; downs within 300 s of boot (dmesg's seconds, or the time since the first line after a journal's boot line) are bring-up",
            "fabricscope's own heuristic; line shapes: Linux mlx5e_update_carrier (mlx5 en_main.c), ib_cache_update (infiniband/core/cache.c)",
        ))
        .remediation(if severity >= Severity::Error {
            "The port is down: check `ibstat` / `ip link` on the host, then the cable, the transceiver and the switch port (`mlxlink -d <dev> -m -c -e`); drain the node if jobs use the port."
        } else if severity == Severity::Warning {
            "Read the port's physical counters and cable with `mlxlink -d <dev> -c -e -m`; reseat or replace the cable, and compare with the switch port's LinkDownedCounter (perfquery)."
        } else {
            "Check that the down matches a planned event (reboot, maintenance) and that the port is up now (`ibstat`); nothing to do if it is."
        });
    for (down, up) in stream.downs.iter().take(MAX_DOWNS_SHOWN) {
        f = f.evidence(line_evidence(a, down));
        if let Some(up) = up {
            f = f.evidence(line_evidence(a, up));
        }
    }
    // The boot line that ended a boot the link was down at.
    if let (true, Some((_, span))) = (
        stream.ends_down() && stream.rebooted.is_some(),
        a.boot_starts.get(&(stream.epoch + 1)),
    ) {
        f = f.evidence(Evidence::new(
            "the journal's boot line: the host rebooted",
            *span,
            a.at.source(),
        ));
    }
    Some(f)
}

/// A line IB012 judges: a module event or a PCIe bandwidth line.
fn is_module_or_pcie(what: &NicWhat) -> bool {
    matches!(what, NicWhat::Module { .. } | NicWhat::PcieBandwidth(_))
}

/// IB012.
fn check_module(ctx: &Context<'_>, out: &mut Vec<Finding>) -> Coverage {
    let (adapters, cut, logs) = adapters(ctx, is_module_or_pcie);
    if adapters.is_empty() {
        return Coverage::Skipped(if logs > 0 && cut > 0 {
            "the kernel log's adapter lines are cut before they say a module event or PCIe figures"
                .to_owned()
        } else {
            "no cable-module or PCIe bandwidth lines of an adapter in a kernel log".to_owned()
        });
    }
    for a in adapters.values() {
        if let Some(f) = module_finding(a) {
            out.push(f);
        }
    }
    Coverage::Checked(adapters.len())
}

/// The severity of a module or bandwidth line of `a`, `None` when healthy.
fn module_severity(a: &Adapter<'_>, e: &NicEvent) -> Option<Severity> {
    match e.what.as_ref()? {
        NicWhat::Module { error: Some(_), .. } => Some(Severity::Error),
        NicWhat::Module { status, .. } if status.contains("error") => Some(Severity::Error),
        NicWhat::Module { module, status, .. } if status == "Cable unplugged" => {
            // Not plugged back: news only in a log that ran to its end.
            Some(if plugged_later(a, e, *module) || !a.whole {
                Severity::Info
            } else {
                Severity::Warning
            })
        }
        NicWhat::PcieBandwidth(bw) if bw.limited_at.is_some() => Some(Severity::Warning),
        _ => None,
    }
}

/// Whether a line after `e` shows module `module` plugged.
fn plugged_later(a: &Adapter<'_>, e: &NicEvent, module: u32) -> bool {
    a.events.iter().any(|l| {
        l.span.first_line > e.span.first_line
            && matches!(&l.what, Some(NicWhat::Module { module: m, status: s, .. })
                if *m == module && s == "Cable plugged")
    })
}

/// The finding of an adapter with at least one module error, unplug or
/// narrowed PCIe link.
fn module_finding(a: &Adapter<'_>) -> Option<Finding> {
    let judged: Vec<(&NicEvent, Severity)> = a
        .events
        .iter()
        .filter_map(|e| module_severity(a, e).map(|s| (*e, s)))
        .collect();
    let severity = judged.iter().map(|(_, s)| *s).max()?;
    let mut parts: Vec<String> = Vec::new();
    for (e, sev) in &judged {
        let part = match &e.what {
            Some(NicWhat::Module {
                module,
                status,
                error,
            }) => {
                let mut p = format!("module {module} {status}");
                if let Some(r) = error {
                    p.push_str(&format!(" ({r})"));
                }
                if *sev == Severity::Info && error.is_none() {
                    p.push_str(if plugged_later(a, e, *module) {
                        ", plugged back later"
                    } else {
                        " (the paste may end before it was plugged back)"
                    });
                }
                p
            }
            Some(NicWhat::PcieBandwidth(bw)) => format!(
                "a PCIe link of {} x{} ({:.3} Gb/s) where the adapter is capable of {} x{} ({:.3} Gb/s), limited at {}",
                bw.speed,
                bw.width,
                bw.available_gbps,
                bw.capable_speed.as_deref().unwrap_or("?"),
                bw.capable_width.unwrap_or(0),
                bw.capable_gbps.unwrap_or(0.0),
                bw.limited_at.as_deref().unwrap_or("?")
            ),
            _ => continue,
        };
        if !parts.contains(&part) {
            parts.push(part);
        }
    }
    let subject = a.subject();
    let message = format!(
        "{}: the kernel log shows {}",
        a.named(&subject),
        parts.join("; ")
    );
    let has_module_error = judged
        .iter()
        .any(|(e, s)| *s == Severity::Error && matches!(e.what, Some(NicWhat::Module { .. })));
    let has_pcie = judged
        .iter()
        .any(|(e, _)| matches!(e.what, Some(NicWhat::PcieBandwidth(_))));
    let mut remediation = String::new();
    if has_module_error {
        remediation.push_str("Read the module with `mlxlink -d <dev> -m` (temperature, power class, part number): check the airflow for High Temperature, use a lower-power module for a power budget, a supported part for a part-number or identifier error, and replace the cable or transceiver for a stuck, shorted or EEPROM error. ");
    } else if judged
        .iter()
        .any(|(e, _)| matches!(e.what, Some(NicWhat::Module { .. })))
    {
        remediation.push_str("Check the cable is plugged in and seated (`mlxlink -d <dev> -m`). ");
    }
    if has_pcie {
        remediation.push_str("Compare `LnkCap` with `LnkSta` in `lspci -vv -s <address>`; reseat the adapter or move it to a full-width slot, and check the riser and the slot's BIOS setting.");
    }
    let mut f = IB012
        .finding(subject, message)
        .severity(severity)
        .threshold(Threshold::new(
            "any module error: error; an unplug not followed by a plug in a log that ran to its end: warning (else info); any `limited by` bandwidth line: warning",
            "Linux mlx5_pme_status / mlx5_pme_error (mlx5 core/events.c); __pcie_print_link_status (drivers/pci/pci.c)",
        ))
        .remediation(remediation.trim_end().to_owned());
    for (e, _) in &judged {
        f = f.evidence(line_evidence(a, e));
    }
    Some(f)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::testing::{findings_of, skipped_reason};

    fn severities(rule: &'static crate::rules::Rule, text: &str) -> Vec<(String, Severity)> {
        findings_of(rule, text)
            .into_iter()
            .map(|f| (f.subject.describe(), f.severity))
            .collect()
    }

    #[test]
    fn a_collector_file_of_several_hosts_is_judged_host_by_host() {
        // A central rsyslog file: node07's down and node08's up are no one
        // link's flap; each host's own down/up pair is one info; only
        // node09's two downs within minutes flap.
        let text = "\
Dec  1 10:00:01 node07 kernel: mlx5_core 0000:3b:00.0 ibp59s0: Link down
Dec  1 10:00:02 node08 kernel: mlx5_core 0000:3b:00.0 ibp59s0: Link up
Dec  1 10:05:01 node07 kernel: mlx5_core 0000:3b:00.0 ibp59s0: Link up
Dec  1 10:06:01 node08 kernel: mlx5_core 0000:3b:00.0 ibp59s0: Link down
Dec  1 10:06:05 node08 kernel: mlx5_core 0000:3b:00.0 ibp59s0: Link up
Dec  1 10:07:01 node09 kernel: mlx5_core 0000:3b:00.0 ibp59s0: Link down
Dec  1 10:07:05 node09 kernel: mlx5_core 0000:3b:00.0 ibp59s0: Link up
Dec  1 10:09:01 node09 kernel: mlx5_core 0000:3b:00.0 ibp59s0: Link down
Dec  1 10:09:02 node09 kernel: mlx5_core 0000:3b:00.0 ibp59s0: Link up
";
        let mut found: Vec<(Option<String>, Severity, usize)> = findings_of(&IB011, text)
            .into_iter()
            .map(|f| (f.subject.host.clone(), f.severity, f.evidence.len()))
            .collect();
        found.sort();
        assert_eq!(
            found,
            [
                (Some("node07".to_owned()), Severity::Info, 2),
                (Some("node08".to_owned()), Severity::Info, 2),
                (Some("node09".to_owned()), Severity::Warning, 4),
            ]
        );
        // A journal under short-monotonic names the host the same way.
        let mono = "\
[ 9001.5] node11 kernel: mlx5_core 0000:3b:00.0 ibp59s0: Link down
[ 7002.0] node12 kernel: mlx5_core 0000:3b:00.0 ibp59s0: Link up
$ uptime
";
        let found = findings_of(&IB011, mono);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].subject.host.as_deref(), Some("node11"));
        assert_eq!(found[0].severity, Severity::Error);
    }

    #[test]
    fn a_change_printed_by_the_netdev_and_the_rdma_core_counts_once() {
        // One down and up, each printed twice: one cycle (info), not two
        // (a flapping warning).
        let text = "\
[ 7219.0] mlx5_core 0000:29:00.0 enp41s0f0np0: Link down
[ 7219.1] mlx5_core 0000:29:00.0 mlx5_1: Port: 1 Link DOWN
[ 7225.6] mlx5_core 0000:29:00.0 enp41s0f0np0: Link up
[ 7225.7] mlx5_core 0000:29:00.0 mlx5_1: Port: 1 Link ACTIVE
";
        assert_eq!(
            severities(&IB011, text),
            [("mlx5_1 port 1".to_owned(), Severity::Info)]
        );
    }

    #[test]
    fn bring_up_downs_are_not_counted_and_later_ones_are() {
        let boot = "\
[   20.1] mlx5_core 0000:9c:00.1 ens6f1np1: Link down
[   24.8] mlx5_core 0000:9c:00.1 ens6f1np1: Link up
";
        assert!(severities(&IB011, boot).is_empty());
        let later = "\
[   20.1] mlx5_core 0000:9c:00.1 ens6f1np1: Link down
[   24.8] mlx5_core 0000:9c:00.1 ens6f1np1: Link up
[ 9020.1] mlx5_core 0000:9c:00.1 ens6f1np1: Link down
[ 9024.8] mlx5_core 0000:9c:00.1 ens6f1np1: Link up
[ 9920.1] mlx5_core 0000:9c:00.1 ens6f1np1: Link down
[ 9924.8] mlx5_core 0000:9c:00.1 ens6f1np1: Link up
";
        assert_eq!(
            severities(&IB011, later),
            [("ens6f1np1 (0000:9c:00.1)".to_owned(), Severity::Warning)]
        );
    }

    #[test]
    fn downs_days_apart_that_came_back_are_separate_events_not_flapping() {
        // A host up for weeks: its switch port bounced twice, days apart.
        let apart = "\
[ 604800.1] mlx5_core 0000:9c:00.1 ens6f1np1: Link down
[ 604806.8] mlx5_core 0000:9c:00.1 ens6f1np1: Link up
[1900800.1] mlx5_core 0000:9c:00.1 ens6f1np1: Link down
[1900806.8] mlx5_core 0000:9c:00.1 ens6f1np1: Link up
";
        let found = findings_of(&IB011, apart);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].severity, Severity::Info);
        assert!(
            found[0].message.contains("15 days apart"),
            "{}",
            found[0].message
        );
        // `dmesg -T`'s printed times say the same.
        let printed = "\
[Mon Nov  2 03:10:11 2026] mlx5_core 0000:9c:00.1 ens6f1np1: Link down
[Mon Nov  2 03:10:17 2026] mlx5_core 0000:9c:00.1 ens6f1np1: Link up
[Tue Nov 17 03:10:11 2026] mlx5_core 0000:9c:00.1 ens6f1np1: Link down
[Tue Nov 17 03:10:17 2026] mlx5_core 0000:9c:00.1 ens6f1np1: Link up
";
        assert_eq!(
            severities(&IB011, printed),
            [("ens6f1np1 (0000:9c:00.1)".to_owned(), Severity::Info)]
        );
        let printed_close = printed.replace("Tue Nov 17 03:10", "Mon Nov  2 03:25");
        assert_eq!(
            severities(&IB011, &printed_close),
            [("ens6f1np1 (0000:9c:00.1)".to_owned(), Severity::Warning)]
        );
        // The same two downs ten minutes apart: flapping.
        let close = apart
            .replace("[1900800.1]", "[ 605400.1]")
            .replace("[1900806.8]", "[ 605406.8]");
        assert_eq!(
            severities(&IB011, &close),
            [("ens6f1np1 (0000:9c:00.1)".to_owned(), Severity::Warning)]
        );
    }

    #[test]
    fn a_down_left_down_is_an_error_only_when_the_log_ran_to_its_end() {
        let at_end = "\
[ 5000.0] mlx5_core 0000:4b:00.0 mlx5_2: Port: 1 Link ACTIVE
[ 6000.0] mlx5_core 0000:4b:00.0 mlx5_2: Port: 1 Link DOWN
[ 6000.1] mlx5_core 0000:4b:00.0 mlx5_2: Port: 1 Link INIT
[ 7000.0] mlx5_core 0000:ca:00.0 mlx5_6: Port: 1 Link ACTIVE
";
        // The paste may be cut after it: the up may be in what was not
        // pasted, whatever other lines came after the down.
        assert_eq!(
            severities(&IB011, at_end),
            [("mlx5_2 port 1".to_owned(), Severity::Info)]
        );
        let ran_to_its_end = format!("{at_end}[root@gpu-k03 ~]# \n");
        assert_eq!(
            severities(&IB011, &ran_to_its_end),
            [("mlx5_2 port 1".to_owned(), Severity::Error)]
        );
    }

    /// `journalctl -k -b all -g mlx5` over three boots: each boot's
    /// probe line, then the bounce every boot's bring-up prints.
    const THREE_BOOTS: &str = "\
Dec 01 08:00:07 gpu07 kernel: mlx5_core 0000:9c:00.1: firmware version: 28.39.1002
Dec 01 08:00:12 gpu07 kernel: mlx5_core 0000:9c:00.1 ens6f1np1: Link down
Dec 01 08:00:17 gpu07 kernel: mlx5_core 0000:9c:00.1 ens6f1np1: Link up
-- Boot 0b5e3c1a9f6d4e2b8a7c6d5e4f3a2b1c --
Dec 01 08:20:05 gpu07 kernel: mlx5_core 0000:9c:00.1: firmware version: 28.39.1002
Dec 01 08:20:10 gpu07 kernel: mlx5_core 0000:9c:00.1 ens6f1np1: Link down
Dec 01 08:20:15 gpu07 kernel: mlx5_core 0000:9c:00.1 ens6f1np1: Link up
-- Reboot --
Dec 01 08:40:05 gpu07 kernel: mlx5_core 0000:9c:00.1: firmware version: 28.39.1002
Dec 01 08:40:10 gpu07 kernel: mlx5_core 0000:9c:00.1 ens6f1np1: Link down
Dec 01 08:40:15 gpu07 kernel: mlx5_core 0000:9c:00.1 ens6f1np1: Link up
";

    #[test]
    fn each_boot_of_a_journal_has_its_own_bring_up() {
        // Before, the three bring-up bounces were one flapping series.
        // The first boot's start is not shown (no boot line before it):
        // its bounce is counted, once.
        let found = findings_of(&IB011, THREE_BOOTS);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].severity, Severity::Info, "{}", found[0].message);
        assert!(
            found[0].message.contains("08:00:12"),
            "{}",
            found[0].message
        );
        // Bounces ten minutes into each boot are no bring-up: counted,
        // each in its own boot, none a flapping series.
        let later = THREE_BOOTS
            .replace("08:20:10", "08:30:10")
            .replace("08:20:15", "08:30:15")
            .replace("08:40:10", "08:50:10")
            .replace("08:40:15", "08:50:15");
        let found = findings_of(&IB011, &later);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].severity, Severity::Info, "{}", found[0].message);
        // Without the boot lines the same lines are one boot's: flapping.
        let one_boot: String = later
            .lines()
            .filter(|l| !l.starts_with("--"))
            .map(|l| format!("{l}\n"))
            .collect();
        assert_eq!(
            severities(&IB011, &one_boot),
            [("ens6f1np1 (0000:9c:00.1)".to_owned(), Severity::Warning)]
        );
    }

    #[test]
    fn a_down_the_host_rebooted_after_is_no_port_left_down() {
        let shutdown = "\
Dec 01 07:10:00 gpu07 kernel: mlx5_core 0000:4b:00.0 mlx5_2: Port: 1 Link ACTIVE
Dec 01 07:59:58 gpu07 kernel: mlx5_core 0000:4b:00.0 mlx5_2: Port: 1 Link DOWN
-- Boot 0b5e3c1a9f6d4e2b8a7c6d5e4f3a2b1c --
Dec 01 08:01:02 gpu07 kernel: mlx5_core 0000:4b:00.0: firmware version: 28.39.1002
Dec 01 08:01:20 gpu07 kernel: mlx5_core 0000:4b:00.0 mlx5_2: Port: 1 Link ACTIVE
[root@gpu07 ~]#
";
        let found = findings_of(&IB011, shutdown);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].severity, Severity::Info, "{}", found[0].message);
        assert!(
            found[0].message.contains("rebooted"),
            "{}",
            found[0].message
        );
        assert!(found[0].evidence.iter().any(|e| e.span.first_line == 3));
        // Down for two hours before the reboot: left down until then.
        let long = shutdown.replace("07:59:58", "05:59:58");
        let found = findings_of(&IB011, &long);
        assert_eq!(found[0].severity, Severity::Warning, "{}", found[0].message);
        assert!(found[0].message.contains("2.0 h"), "{}", found[0].message);
        // No boot line: a port left down in a log that ran to its end.
        let left: String = shutdown
            .lines()
            .take(2)
            .chain(["[root@gpu07 ~]#"])
            .map(|l| format!("{l}\n"))
            .collect();
        assert_eq!(
            severities(&IB011, &left),
            [("mlx5_2 port 1".to_owned(), Severity::Error)]
        );
    }

    #[test]
    fn year_less_syslog_times_order_the_downs() {
        // Fifteen days apart by syslog's times: separate events.
        let apart = "\
Nov  2 03:10:11 gpu07 kernel: mlx5_core 0000:9c:00.1 ens6f1np1: Link down
Nov  2 03:10:17 gpu07 kernel: mlx5_core 0000:9c:00.1 ens6f1np1: Link up
Nov 17 03:10:11 gpu07 kernel: mlx5_core 0000:9c:00.1 ens6f1np1: Link down
Nov 17 03:10:17 gpu07 kernel: mlx5_core 0000:9c:00.1 ens6f1np1: Link up
";
        let found = findings_of(&IB011, apart);
        assert_eq!(found[0].severity, Severity::Info, "{}", found[0].message);
        assert!(found[0].message.contains("15 days"), "{}", found[0].message);
        // Over New Year, 25 minutes apart: flapping, not a year apart.
        let new_year = apart
            .replace("Nov  2 03:10:11", "Dec 31 23:50:20")
            .replace("Nov  2 03:10:17", "Dec 31 23:50:25")
            .replace("Nov 17 03:10:11", "Jan  1 00:15:25")
            .replace("Nov 17 03:10:17", "Jan  1 00:15:30");
        let found = findings_of(&IB011, &new_year);
        assert_eq!(found[0].severity, Severity::Warning, "{}", found[0].message);
    }

    #[test]
    fn healthy_module_and_pcie_lines_are_checked_and_quiet() {
        let text = "\
[ 10.1] mlx5_core 0000:3b:00.0: 252.048 Gb/s available PCIe bandwidth (16.0 GT/s PCIe x16 link)
[ 10.2] mlx5_core 0000:3b:00.0: Port module event: module 0, Cable plugged
";
        assert!(findings_of(&IB012, text).is_empty());
        assert_eq!(skipped_reason(&IB012, text), None);
        // Link lines only: IB012 has nothing to judge.
        assert!(skipped_reason(&IB012, "[ 9.0] mlx5_core 0000:3b:00.0 eth1: Link up\n").is_some());
    }

    #[test]
    fn a_narrow_pcie_link_says_its_figures() {
        let text = "mlx5_core 0000:3b:00.0: 126.024 Gb/s available PCIe bandwidth, limited by 16.0 GT/s PCIe x8 link at 0000:3a:00.0 (capable of 252.048 Gb/s with 16.0 GT/s PCIe x16 link)\n";
        let f = findings_of(&IB012, text);
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].severity, Severity::Warning);
        for part in [
            "16.0 GT/s x8",
            "126.024 Gb/s",
            "16.0 GT/s x16",
            "252.048 Gb/s",
            "0000:3a:00.0",
        ] {
            assert!(f[0].message.contains(part), "{part}: {}", f[0].message);
        }
    }
}
