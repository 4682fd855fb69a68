//! `nvidia-smi nvlink` in all its read-only modes.
//!
//! Forms handled (observed in our H200 captures, driver 580, and in public
//! samples; see `tests/fixtures/own/README.md`):
//! - `-s`/`--status`: `Link 0: 26.562 GB/s`, `25 GB/s`, `<inactive>`, and
//!   `NVML: Unable to retrieve NVLink information as all links are inActive`
//!   (or `inactive`) under a GPU header;
//! - `-c`/`--capabilities`: `Link 0, P2P is supported: true` (also
//!   without its GPU header, two lines in a row, as `-s` lines);
//! - `-e`: `Link 0: Replay Errors: 0` (any `Link N: <Name>: <int>` counter);
//! - `-ec`: `Link 0:` then `Lane 0 ECC Correction Count: 374 (Overflow=0)`;
//! - `-gt d` / `-gt r`: `Link 0: Data Tx: 0 KiB`, `Raw Rx: 147 KiB`;
//! - deprecated `-g 0|1`: `Link 0: Rx0: 0 KBytes, Tx0: 0 KBytes`;
//! - `-p`: `Link 0: FFFFFFFF:FF:FF.0`; `-R`: `Link 4: Remote Device 00000000:D5:00.0: Link 6`;
//! - `-gLowPwrInfo`, `-gBwMode`, `-info`, `-cBridge` (headers only),
//!   `-gLWidth` (`Not supported`), `-i`/`-l` filtered output and `Invalid Link`;
//! - `No devices were found`, and no output at all (a host whose GPUs have no
//!   NVLink prints nothing): an empty model, no warning.
//!
//! The mode is read from the shape of each line, not from the command, so a
//! paste without its prompt parses the same. GPU headers alone are what
//! `nvidia-smi -L` prints too: detection wants a link line (or an
//! nvlink-only message) after the header; header-only output such as
//! `-cBridge` is read when the prompt names `nvidia-smi nvlink`.
//!
//! ```
//! use fabricscope::parse::{lines_of, nvlink};
//! let text = "GPU 0: NVIDIA H200 (UUID: GPU-d4a1)\n\t Link 0: 26.562 GB/s\n\t Link 1: <inactive>\n";
//! let m = nvlink::parse(&lines_of(text)).value;
//! assert_eq!(m.gpus[0].links[0].speed_gb_per_s, Some(26.562));
//! assert!(m.gpus[0].links[1].inactive);
//! ```

mod grammar;
mod render;

pub use render::{render, render_mode};

pub(crate) use grammar::is_whole_uuid;

use crate::diag::WarningKind;
use crate::model::counter_id::{CounterId, Counters, NvCounter};
use crate::model::nvlink::{
    LaneEcc, Nvlink, NvlinkGpu, NvlinkLink, NvlinkMode, NvlinkNote, NvlinkRemote,
};
use crate::model::Counter;
use crate::parse::text::{trim, Unread};
use crate::parse::{Block, Line, Parsed, Spec};
use grammar::{CounterUnit, FastFact, LinkFact, Misfit, Shape};
use std::collections::HashMap;

pub(crate) const FORMAT: Spec<Nvlink> = Spec {
    command: is_nvlink_command,
    starts: |b| matches!(b, b'G' | b'L'),
    detect,
    parse,
    summary,
    attach_command: None,
    labels: &["gpu", "link", "nvlink", "lane"],
};

/// `nvidia-smi nvlink …`, except the help text (`-h`), which is not data.
fn is_nvlink_command(argv: &[&str]) -> bool {
    let is_help = argv.iter().any(|a| matches!(*a, "-h" | "--help"));
    argv.first() == Some(&"nvidia-smi") && argv.get(1) == Some(&"nvlink") && !is_help
}

/// `-c` labels as printed, and the keys the model uses for them.
const CAPABILITIES: &[(&str, &str)] = &[
    ("P2P is supported", "p2p_supported"),
    (
        "Access to system memory supported",
        "system_memory_access_supported",
    ),
    ("P2P atomics supported", "p2p_atomics_supported"),
    (
        "System memory atomics supported",
        "system_memory_atomics_supported",
    ),
    ("SLI is supported", "sli_supported"),
    ("Link is supported", "link_supported"),
];

/// Reads `nvidia-smi nvlink` output of any read-only mode.
#[must_use]
pub fn parse(lines: &[Line<'_>]) -> Parsed<Nvlink> {
    parse_with(lines, Reader::default())
}

/// [`parse`] with every line read the general way, without the fast path:
/// its oracle.
#[cfg(test)]
pub(crate) fn parse_general(lines: &[Line<'_>]) -> Parsed<Nvlink> {
    parse_with(
        lines,
        Reader {
            general_only: true,
            ..Reader::default()
        },
    )
}

fn parse_with(lines: &[Line<'_>], mut reader: Reader) -> Parsed<Nvlink> {
    for line in lines.iter().filter(|l| !l.is_blank()) {
        reader.read(line);
    }
    reader.finish()
}

/// An `nvidia-smi nvlink` section read line by line while the input layer
/// collects it, so that the parser is its own body-line test: a link line
/// the fast path reads is read once, as it is met, instead of being tested
/// for its shape by the sectioner and read again by [`parse`] when the
/// section ends. Fed the section's non-blank lines in order, it reads them
/// exactly as [`parse`] reads the same lines (the same [`Reader`], the same
/// calls), so [`Stream::finish`] is `parse` of the section's lines.
pub(crate) struct Stream(Reader);

impl Stream {
    /// A stream for a section that has not read a line yet.
    pub(crate) fn new() -> Self {
        Self(Reader::default())
    }

    /// Reads `line` if it is a link line the fast path takes
    /// (`Link 0: 26.562 GB/s`, `Link 3: Replay Errors: 0`, `<inactive>`,
    /// `Data Tx: 5842 KiB`), and says whether it did. Every such line is a
    /// body line of an nvlink section (`input::body`: an indent, `Link N: `
    /// and a payload of letters, digits, space and `. / < > :` with each
    /// colon followed by a space), so no detector begins a block there and
    /// the caller adds it to the section without asking; any other line is
    /// left for [`Stream::read`] once the caller has decided where it goes.
    pub(crate) fn read_body(&mut self, line: &Line<'_>) -> bool {
        match grammar::fast_link(line.text()) {
            Some((number, fact)) => {
                self.0.fast_fact(line, number, fact);
                true
            }
            None => false,
        }
    }

    /// Reads a non-blank line of the section that [`Stream::read_body`]
    /// did not take, as [`parse`] reads it.
    pub(crate) fn read(&mut self, line: &Line<'_>) {
        self.0.read(line);
    }

    /// The section as [`parse`] reads its lines.
    pub(crate) fn finish(self) -> Parsed<Nvlink> {
        self.0.finish()
    }
}

#[derive(Default)]
struct Reader {
    out: Nvlink,
    unread: Unread,
    /// The link of the last `Link N:` heading of a `-ec` block.
    lane_link: Option<u32>,
    /// Where each link number of the current GPU block sits in its `links`,
    /// so finding a link costs the same for the 18th and the 80,000th.
    link_slots: LinkSlots,
    /// The current GPU is a V100 (its `CRC Errors` counter is 16 bits
    /// wide): read from the header once, not from the name on every line.
    v100: bool,
    /// The ids of the counter names met so far, with their units: `-e`
    /// prints the same three names for every link, so each line finds its
    /// id here instead of rebuilding and looking up its key.
    keys: CounterKeys,
    /// The mode of the last link line: a listing prints one mode for
    /// thousands of lines, which need no search of `modes`.
    last_mode: Option<NvlinkMode>,
    /// The most counters a link has held so far (at most
    /// [`Reader::COUNTERS_HINT_MAX`]): a link's first counter makes room
    /// for this many, exactly, as every link of a mode prints the same
    /// counters (three for `-e`): one allocation a link, none wasted.
    counters_hint: usize,
    /// Reads every line the general way (the fast path's test oracle).
    #[cfg(test)]
    general_only: bool,
}

/// A few printed counter names and the ids of their keys. Bounded: a
/// hostile paste with endless distinct names only misses (the key is then
/// built as usual), it never makes a line cost more than a short scan.
#[derive(Default)]
struct CounterKeys {
    seen: Vec<(String, CounterUnit, CounterId)>,
    /// Where the next name is expected: the modes print their names in
    /// the same order for every link, so one comparison usually finds it.
    next: usize,
    /// Room for one key, reused on a miss.
    key: String,
}

impl CounterKeys {
    /// How many names are remembered (`-e`, `-gt` and `-g` print at most a
    /// handful per mode).
    const CAPACITY: usize = 16;

    /// The id of the counter printed as `name` in `unit`. Inlined into
    /// every counter line's reading: the name where it is expected is
    /// one comparison, cheaper than the call; any other is
    /// [`CounterKeys::id_searched`]'s.
    #[inline]
    fn id(&mut self, name: &str, unit: CounterUnit) -> CounterId {
        if let Some((n, u, id)) = self.seen.get(self.next) {
            if *u == unit && n == name {
                self.next = if self.next + 1 < self.seen.len() {
                    self.next + 1
                } else {
                    0
                };
                return id.clone();
            }
        }
        self.id_searched(name, unit)
    }

    /// [`CounterKeys::id`] of a name not where it was expected: searched
    /// for among those met, else its key built (and remembered).
    #[inline(never)]
    fn id_searched(&mut self, name: &str, unit: CounterUnit) -> CounterId {
        let is = |(n, u, _): &(String, CounterUnit, CounterId)| *u == unit && n == name;
        let at = self.seen.iter().position(is);
        if let Some((i, (_, _, id))) = at.and_then(|i| Some((i, self.seen.get(i)?))) {
            self.next = if i + 1 < self.seen.len() { i + 1 } else { 0 };
            return id.clone();
        }
        counter_key_into(&mut self.key, name, unit);
        let id = CounterId::from_name(&self.key);
        if self.seen.len() < Self::CAPACITY {
            self.seen.push((name.to_owned(), unit, id.clone()));
        }
        id
    }
}

impl Reader {
    /// The model and warnings of the lines read.
    fn finish(mut self) -> Parsed<Nvlink> {
        // Link tables grew by doubling (18 links take room for 32): a fleet
        // paste holds hundreds of thousands of links, so give the room back.
        for gpu in &mut self.out.gpus {
            gpu.links.shrink_to_fit();
        }
        Parsed {
            value: self.out,
            warnings: self.unread.finish(),
        }
    }

    /// The most room a link's first counter makes (`-e` prints three, the
    /// widest mode a handful).
    const COUNTERS_HINT_MAX: usize = 8;

    fn read(&mut self, line: &Line<'_>) {
        // The common link lines go straight to their link record; the
        // general reader (its test oracle) reads the rest.
        #[cfg(test)]
        let fast = if self.general_only {
            None
        } else {
            grammar::fast_link(line.text())
        };
        #[cfg(not(test))]
        let fast = grammar::fast_link(line.text());
        if let Some((number, fact)) = fast {
            return self.fast_fact(line, number, fact);
        }
        let shape = match grammar::shape_general(line.text()) {
            Ok(shape) => shape,
            Err(Misfit::Unknown(why)) => return self.unread.line(line, why),
            Err(Misfit::TooLarge(what)) => {
                return self.unread.warn(
                    WarningKind::OutOfRange,
                    line.span(),
                    format!("{what} is larger than 64 bits can hold; value ignored"),
                )
            }
        };
        match shape {
            Shape::GpuHeader(h) => {
                self.lane_link = None;
                self.link_slots.clear();
                self.v100 = h.name.contains("V100");
                self.out.gpus.push(NvlinkGpu {
                    index: h.index,
                    name: h.name.to_owned(),
                    uuid: h.uuid.map(str::to_owned),
                    span: line.span(),
                    ..NvlinkGpu::default()
                });
            }
            Shape::Link(number, fact) => self.link_fact(line, number, fact),
            Shape::Lane {
                lane,
                count,
                overflow,
            } => self.lane(line, lane, count, overflow),
            Shape::AllLinksInactive => {
                let text = line.text().trim().to_owned();
                match self.gpu(line) {
                    Some(gpu) => {
                        gpu.all_links_inactive = true;
                        gpu.messages.push(text);
                        let note = NvlinkNote::AllLinksInactive { gpu: gpu.index };
                        self.out.notes.push(note);
                    }
                    None => self.out.notes.push(NvlinkNote::Message(text)),
                }
            }
            Shape::NoDevices => self.out.notes.push(NvlinkNote::NoDevices),
            Shape::BandwidthMode(mode) => {
                self.saw(NvlinkMode::BandwidthMode);
                self.out.bandwidth_mode = Some(mode.to_owned());
            }
            Shape::Info(label, value) => self.gpu_field(line, NvlinkMode::Info, |gpu| {
                gpu.info.insert(label.to_owned(), value.to_owned());
            }),
            Shape::LowPowerUnit(unit) => self.gpu_field(line, NvlinkMode::LowPowerInfo, |gpu| {
                gpu.low_power_threshold_unit_us = Some(unit);
            }),
            Shape::LowPowerRange(low, high) => {
                self.gpu_field(line, NvlinkMode::LowPowerInfo, |gpu| {
                    gpu.low_power_threshold_range = Some((low, high));
                });
            }
            Shape::GpuMessage(message) => match self.gpu(line) {
                Some(gpu) => gpu.messages.push(message.to_owned()),
                None => self.out.notes.push(NvlinkNote::Message(message.to_owned())),
            },
            Shape::Elision => self.unread.warn(
                WarningKind::Truncated,
                line.span(),
                "the paste leaves lines out here; links may be missing",
            ),
        }
    }

    /// Records that a mode was seen.
    fn saw(&mut self, mode: NvlinkMode) {
        if !self.out.modes.contains(&mode) {
            self.out.modes.push(mode);
        }
    }

    /// The current GPU block, extended to cover `line`.
    fn gpu(&mut self, line: &Line<'_>) -> Option<&mut NvlinkGpu> {
        let gpu = self.out.gpus.last_mut()?;
        gpu.span = gpu.span.join(line.span());
        Some(gpu)
    }

    fn gpu_field(&mut self, line: &Line<'_>, mode: NvlinkMode, set: impl FnOnce(&mut NvlinkGpu)) {
        if self.out.gpus.is_empty() {
            return self
                .unread
                .line(line, "GPU field before any `GPU N:` header");
        }
        self.saw(mode);
        if let Some(gpu) = self.gpu(line) {
            set(gpu);
        }
    }

    /// A link line read by [`grammar::fast_link`]: what [`Reader::link_fact`]
    /// does with the same fact, without building it.
    fn fast_fact(&mut self, line: &Line<'_>, number: u32, fact: FastFact<'_>) {
        self.begin_link(line, number, fact.mode(), false);
        let Some(gpu) = self.out.gpus.last_mut() else {
            return;
        };
        let Some(link) = link_mut(gpu, &mut self.link_slots, number, line) else {
            return;
        };
        let duplicate = match fact {
            FastFact::Speed(speed) => set_status(link, Some(speed)),
            FastFact::Inactive => set_status(link, None),
            FastFact::Counter(name, value, unit) => {
                if link.counters.is_empty() && self.counters_hint > 0 {
                    // Allocated as new, not grown from nothing: the same
                    // room, without the growth path's checks.
                    link.counters = Counters::with_capacity(self.counters_hint);
                }
                let id = self.keys.id(name, unit);
                let counter = counter_of(&id, value, self.v100);
                let duplicate = link.counters.insert(id, counter).is_some();
                let held = link.counters.len().min(Self::COUNTERS_HINT_MAX);
                self.counters_hint = self.counters_hint.max(held);
                duplicate
            }
        };
        if duplicate {
            self.warn_twice(line, number);
        }
    }

    /// What every link line does first: a GPU for header-less lines, the
    /// mode seen, the `-ec` heading, the GPU's span. Inlined into every
    /// link line's reading (a call cost as much as its usual work, a few
    /// tests and the span): the rare cases, a GPU without its header and
    /// a mode change, are calls of their own.
    #[inline]
    fn begin_link(&mut self, line: &Line<'_>, number: u32, mode: NvlinkMode, heading: bool) {
        if self.out.gpus.is_empty() {
            self.headerless_gpu(line);
        }
        if self.last_mode != Some(mode) {
            self.mode_changed(mode);
        }
        self.lane_link = heading.then_some(number);
        if let Some(gpu) = self.out.gpus.last_mut() {
            gpu.span = gpu.span.join(line.span());
        }
    }

    /// Link lines pasted without their GPU header (quoted by a health
    /// check, or the paste starts below it): read them for an unknown GPU,
    /// and say that it is unknown. No index is invented.
    #[cold]
    #[inline(never)]
    fn headerless_gpu(&mut self, line: &Line<'_>) {
        self.unread.warn(
            WarningKind::Truncated,
            line.span(),
            "`Link N` lines without their `GPU N:` header: the GPU they belong to is unknown",
        );
        self.out.gpus.push(NvlinkGpu {
            span: line.span(),
            headerless: true,
            ..NvlinkGpu::default()
        });
        self.v100 = false;
    }

    /// A link line of another mode than the line before it.
    #[inline(never)]
    fn mode_changed(&mut self, mode: NvlinkMode) {
        self.saw(mode);
        self.last_mode = Some(mode);
    }

    /// A link printed the same value twice in one GPU block.
    fn warn_twice(&mut self, line: &Line<'_>, number: u32) {
        self.unread.warn(
            WarningKind::Suspicious,
            line.span(),
            format!(
                "link {number} printed this value twice in one GPU block; the later one is kept"
            ),
        );
    }

    fn link_fact(&mut self, line: &Line<'_>, number: u32, fact: LinkFact<'_>) {
        self.begin_link(
            line,
            number,
            fact.mode(),
            matches!(fact, LinkFact::LaneHeading),
        );
        let Some(gpu) = self.out.gpus.last_mut() else {
            return;
        };
        let v100 = self.v100;
        let Some(link) = link_mut(gpu, &mut self.link_slots, number, line) else {
            return;
        };
        let mut duplicate = false;
        match fact {
            LinkFact::LaneHeading => {}
            LinkFact::Speed(speed) => duplicate = set_status(link, Some(speed)),
            LinkFact::Inactive => duplicate = set_status(link, None),
            LinkFact::Capability(label, supported) => {
                duplicate = link
                    .detail_mut()
                    .capabilities
                    .insert(capability_key(label), supported)
                    .is_some();
            }
            LinkFact::Counters(counters, unit) => {
                if link.counters.is_empty() && self.counters_hint > 0 {
                    link.counters = Counters::with_capacity(self.counters_hint);
                }
                for (name, value) in counters.iter() {
                    let id = self.keys.id(name, unit);
                    let counter = counter_of(&id, value, v100);
                    duplicate |= link.counters.insert(id, counter).is_some();
                }
                let held = link.counters.len().min(Self::COUNTERS_HINT_MAX);
                self.counters_hint = self.counters_hint.max(held);
            }
            LinkFact::Remote(bus_id, remote_link) => {
                let same_device = link
                    .remote()
                    .filter(|r| r.pci_bus_id == bus_id)
                    .and_then(|r| r.link);
                link.detail_mut().remote = Some(NvlinkRemote {
                    pci_bus_id: bus_id.to_owned(),
                    link: remote_link.or(same_device),
                });
            }
            LinkFact::LowPowerMode(mode) => {
                duplicate = link
                    .detail_mut()
                    .low_power_mode
                    .replace(mode.to_owned())
                    .is_some();
            }
            LinkFact::LowPowerThreshold(us) => {
                duplicate = link
                    .detail_mut()
                    .low_power_threshold_us
                    .replace(us)
                    .is_some();
            }
        }
        if duplicate {
            self.warn_twice(line, number);
        }
    }

    fn lane(&mut self, line: &Line<'_>, lane: u32, count: u64, overflow: u64) {
        // A heading is only set inside a GPU block, so a lane line with a
        // heading above it always has a GPU.
        let Some(number) = self.lane_link else {
            return self
                .unread
                .line(line, "`Lane N` line without a `Link N:` heading above it");
        };
        self.saw(NvlinkMode::LaneEcc);
        let Some(gpu) = self.out.gpus.last_mut() else {
            return;
        };
        gpu.span = gpu.span.join(line.span());
        if let Some(link) = link_mut(gpu, &mut self.link_slots, number, line) {
            link.detail_mut().lanes.push(LaneEcc {
                lane,
                ecc_correction_count: Counter::unknown_width(count),
                overflow: overflow != 0,
            });
        }
    }
}

/// Sets a link's `-s` status: a speed, or inactive (`None`). Returns
/// whether the block had printed a status for it already.
fn set_status(link: &mut NvlinkLink, speed: Option<f64>) -> bool {
    let duplicate = link.speed_gb_per_s.is_some() || link.inactive;
    link.speed_gb_per_s = speed;
    link.inactive = speed.is_none();
    duplicate
}

/// Where each link number of one GPU block sits in its `links`.
///
/// nvidia-smi lists a GPU's links from 0 up, so link N usually sits at
/// index N and needs no index at all. The hash index is built only once a
/// block breaks that pattern (a `-l` filtered listing, links out of order,
/// a hostile paste), from then on one look-up per line: a search of the list
/// made an 80,000-link paste quadratic.
#[derive(Default)]
struct LinkSlots {
    /// Link number → index in `links`; kept only while `indexed`.
    by_number: HashMap<u32, usize>,
    /// False while every link of the block sits at its own number.
    indexed: bool,
}

impl LinkSlots {
    /// Forgets the previous GPU block's links.
    fn clear(&mut self) {
        self.by_number.clear();
        self.indexed = false;
    }
}

/// The link record for `number`, created on first mention; its span grows
/// to cover `line`. `slots` indexes the GPU's links by number (see
/// [`LinkSlots`]). (`None` cannot happen: the record is found or pushed.)
///
/// Inlined into every link line's reading: the usual answer is one or two
/// comparisons, which cost less than the call; a link not found so is
/// [`new_link_slot`]'s.
#[inline]
fn link_mut<'g>(
    gpu: &'g mut NvlinkGpu,
    slots: &mut LinkSlots,
    number: u32,
    line: &Line<'_>,
) -> Option<&'g mut NvlinkLink> {
    #[cfg(test)]
    tests::LINKS_EXAMINED.with(|n| n.set(n.get() + 1));
    // Modes print a link's lines together (`-e`: three in a row): the
    // last link is the usual answer, found without hashing.
    // Next likeliest: links listed from 0 up sit at their own number (a
    // GPU block holds each number once, so a match is the link's slot).
    let last = gpu.links.len().checked_sub(1);
    let at_number = usize::try_from(number).ok();
    let found = last
        .filter(|&i| gpu.links.get(i).is_some_and(|l| l.link == number))
        .or_else(|| at_number.filter(|&i| gpu.links.get(i).is_some_and(|l| l.link == number)));
    let slot = match found {
        Some(i) => i,
        None => new_link_slot(gpu, slots, number, line),
    };
    let link = gpu.links.get_mut(slot)?;
    link.span = link.span.join(line.span());
    Some(link)
}

/// [`link_mut`]'s slot for a link found neither last nor at its own
/// number: new while every link sits at its own number, else the index's.
#[inline(never)]
fn new_link_slot(
    gpu: &mut NvlinkGpu,
    slots: &mut LinkSlots,
    number: u32,
    line: &Line<'_>,
) -> usize {
    if slots.indexed {
        return *slots
            .by_number
            .entry(number)
            .or_insert_with(|| push_link(gpu, number, line));
    }
    // Every link sits at its own number, and link `number` is not at its
    // own: it is new.
    let slot = push_link(gpu, number, line);
    if usize::try_from(number).ok() != Some(slot) {
        // Out of order: index every link from here on.
        slots.indexed = true;
        slots.by_number = gpu
            .links
            .iter()
            .enumerate()
            .map(|(i, l)| (l.link, i))
            .collect();
    }
    slot
}

/// Appends a new record for link `number`; returns its index.
fn push_link(gpu: &mut NvlinkGpu, number: u32, line: &Line<'_>) -> usize {
    if gpu.links.is_empty() {
        // Room for a whole GPU at once, not four regrowths.
        gpu.links.reserve_exact(LINKS_PER_GPU);
    }
    gpu.links.push(NvlinkLink::new(number, line.span()));
    gpu.links.len() - 1
}

/// The most links a GPU prints today (H100, H200, B200: 18): room made
/// for a GPU's first link. Fewer links give the rest back at the end of
/// the parse; more grow the list as usual.
const LINKS_PER_GPU: usize = 18;

/// nvidia-smi does not print counter widths. The one known case: on V100 the
/// `CRC Errors` counter was seen stuck at 65535, i.e. it saturates at 16 bits
/// (research notes, nvlink -e on V100). Elsewhere the width is unknown.
fn counter_of(id: &CounterId, value: u64, v100: bool) -> Counter {
    if v100 && id.known() == Some(NvCounter::CrcErrors.id()) {
        Counter::new(value, 16)
    } else {
        Counter::unknown_width(value)
    }
}

/// `Replay Errors` → `replay_errors`; `Data Tx` in KiB → `data_tx_kib`;
/// `Rx0` in KBytes → `rx0_kib`.
#[cfg(test)]
fn counter_key(name: &str, unit: CounterUnit) -> String {
    let mut key = String::new();
    counter_key_into(&mut key, name, unit);
    key
}

/// The model key of a counter (`Replay Errors` → `replay_errors`, `Data Tx`
/// in KiB → `data_tx_kib`), written into `key` (cleared first).
fn counter_key_into(key: &mut String, name: &str, unit: CounterUnit) {
    snake_case_into(key, name);
    if unit != CounterUnit::Count {
        key.push_str("_kib");
    }
}

/// Whether `label` is one of the `-c` labels nvidia-smi prints.
fn is_capability_label(label: &str) -> bool {
    CAPABILITIES
        .iter()
        .any(|(printed, _)| printed.eq_ignore_ascii_case(label))
}

/// Whether `text` is a `GPU N: NAME (UUID: …)` header as `nvidia-smi
/// nvlink` prints it above each GPU's lines (its UUID may be missing or
/// cut): inside an nvlink listing such a line is the listing's, even where
/// nothing follows it (a GPU without NVLink, or a paste that ends there).
pub(crate) fn is_gpu_header(text: &str) -> bool {
    grammar::gpu_header(trim(text)).is_some()
}

/// The model key of a `-c` label.
fn capability_key(label: &str) -> String {
    CAPABILITIES
        .iter()
        .find(|(printed, _)| printed.eq_ignore_ascii_case(label))
        .map_or_else(|| snake_case(label), |(_, key)| (*key).to_owned())
}

/// Lower case, runs of anything but letters and digits turned into one `_`.
fn snake_case(label: &str) -> String {
    let mut out = String::with_capacity(label.len());
    snake_case_into(&mut out, label);
    out
}

/// [`snake_case`] written into `out` (cleared first).
fn snake_case_into(out: &mut String, label: &str) {
    out.clear();
    for c in label.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if !out.is_empty() && !out.ends_with('_') {
            out.push('_');
        }
    }
    while out.ends_with('_') {
        out.pop();
    }
}

/// How many header-only GPU blocks detection looks past (nvidia-smi lists
/// at most a few dozen GPUs per host).
const MAX_BARE_HEADERS: usize = 64;

/// A GPU header with its UUID, followed (possibly after more bare headers)
/// by a line only `nvidia-smi nvlink` prints, or without its UUID followed
/// at once by a link line; or the `-gBwMode` line. Keyed by GPU index, so a second snapshot
/// of the same GPU starts a new section.
///
/// Also `-s` and `-c` link lines without their header (`Link 4:
/// <inactive>`, `Link 0: 26.562 GB/s`, `Link 0, P2P is supported: true`):
/// two of one mode in a row, so that one quoted line in prose
/// is not taken for output. Keyed by line number, so inside a listing that
/// has its headers they never start a section of their own.
fn detect(lines: &[Line<'_>]) -> Option<Block> {
    let first_line = lines.first()?;
    let first = trim(first_line.text());
    if first.starts_with("GPU NVLINK bandwidth mode:") {
        return Some(Block::keyed("bandwidth mode"));
    }
    if first.starts_with("Link ") {
        let status = |t: &str| {
            grammar::may_be_status(t)
                && matches!(
                    grammar::shape(t),
                    Ok(Shape::Link(_, LinkFact::Speed(_) | LinkFact::Inactive))
                )
        };
        // `-c` lines without their header (`Link 0, P2P is supported:
        // true`), as people quote them under a command run in another
        // fence: one of the labels nvidia-smi prints, so that prose with a
        // comma after `Link 2` is not taken for them.
        let capability = |t: &str| {
            matches!(
                grammar::shape(t),
                Ok(Shape::Link(_, LinkFact::Capability(label, _))) if is_capability_label(label)
            )
        };
        let next = lines.iter().skip(1).find(|l| !l.is_blank());
        let pair =
            |shape: &dyn Fn(&str) -> bool| shape(first) && next.is_some_and(|l| shape(l.text()));
        return (pair(&status) || pair(&capability))
            .then(|| Block::keyed(format!("line {}", first_line.number)));
    }
    if !first.starts_with("GPU ") {
        return None;
    }
    let header = grammar::gpu_header(first)?;
    if header.uuid.is_none() {
        // A header pasted without its UUID (redacted, or trimmed by hand)
        // heads nvidia-smi's listing only when a link line follows at once.
        let next = lines.iter().skip(1).find(|l| !l.is_blank())?;
        return matches!(grammar::shape(trim(next.text())), Ok(Shape::Link(..)))
            .then(|| Block::keyed(gpu_key(header.index)));
    }
    // Headers with nothing under them (`-cBridge`, or a GPU without links)
    // may precede the first link line: look past them, but not far.
    let next = lines
        .iter()
        .skip(1)
        .filter(|l| !l.is_blank())
        .take(MAX_BARE_HEADERS)
        .map(|l| trim(l.text()))
        .find(|t| grammar::gpu_header(t).is_none_or(|h| h.uuid.is_none()))?;
    let nvlink_only = match grammar::shape(next) {
        Ok(
            Shape::Link(..) | Shape::AllLinksInactive | Shape::Info(..) | Shape::LowPowerUnit(_),
        ) => true,
        // Messages only `nvidia-smi nvlink` prints (`Not supported` is
        // printed by many tools and says nothing of which).
        Ok(Shape::GpuMessage(m)) => {
            matches!(m, "Invalid Link" | "Device does not have or support Nvlink")
        }
        Ok(_) => false,
        Err(_) => next.starts_with("Link "),
    };
    nvlink_only.then(|| Block::keyed(gpu_key(header.index)))
}

/// `GPU {index}`, the block key of a GPU header, written piece by piece:
/// detection keys every header of every listing, and `format!` cost as
/// much as the rest of the key's making.
fn gpu_key(index: u32) -> String {
    let mut key = String::with_capacity(16);
    key.push_str("GPU ");
    key.push_str(crate::parse::text::decimal_text(
        u64::from(index),
        &mut [0; 20],
    ));
    key
}

/// `2 GPU(s), 36 link(s) (-s): 36 active, 0 inactive`.
#[must_use]
pub fn summary(nvlink: &Nvlink) -> String {
    if nvlink.gpus.is_empty() {
        if let Some(mode) = &nvlink.bandwidth_mode {
            return format!("bandwidth mode {mode}");
        }
        if !nvlink.notes.is_empty() {
            let notes: Vec<String> = nvlink.notes.iter().map(ToString::to_string).collect();
            return notes.join("; ");
        }
        // Not "no NVLink-capable GPU": a command quoted in a script or a
        // fence, with its output elsewhere or not at all, also has none.
        return "no NVLink output under the command".to_owned();
    }
    let links: usize = nvlink.gpus.iter().map(|g| g.links.len()).sum();
    let modes: Vec<&str> = nvlink.modes.iter().map(|m| m.option()).collect();
    let mut s = format!("{} GPU(s), {links} link(s)", nvlink.gpus.len());
    if !modes.is_empty() {
        s.push_str(&format!(" ({})", modes.join(", ")));
    }
    if nvlink.modes.contains(&NvlinkMode::Status) {
        let active: usize = nvlink.gpus.iter().map(|g| g.active_links().count()).sum();
        let inactive: usize = nvlink.gpus.iter().map(|g| g.inactive_links().count()).sum();
        s.push_str(&format!(": {active} active, {inactive} inactive"));
    }
    if nvlink.gpus.iter().any(|g| g.headerless) {
        s.push_str("; links of an unknown GPU (no `GPU N:` header)");
    }
    let dark = nvlink.gpus.iter().filter(|g| g.all_links_inactive).count();
    if dark > 0 {
        s.push_str(&format!("; {dark} GPU(s) with all links inactive"));
    }
    for gpu in &nvlink.gpus {
        for message in gpu
            .messages
            .iter()
            .filter(|m| !grammar::is_all_links_inactive(m))
        {
            s.push_str(&format!("; GPU {}: {message}", gpu.index));
        }
    }
    s
}

#[cfg(test)]
mod tests;
