//! The shapes of single `nvidia-smi nvlink` lines.
//!
//! Every mode prints `GPU N: NAME (UUID: …)` headers and `Link N…` lines
//! whose payload says which mode printed them, so a line is classified on its
//! own, without knowing the command. Indentation is ignored: real output has
//! a tab and a space before `Link`, pastes have anything from nothing to nine
//! spaces.

use crate::model::nvlink::NvlinkMode;
use crate::parse::text::{decimal_f64, decimal_u32, decimal_u64, label_value, trim, NumberError};
#[cfg(test)]
use nom::{
    bytes::complete::tag,
    character::complete::{digit1, space1},
    sequence::preceded,
    IResult, Parser,
};

/// What one line says.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Shape<'a> {
    /// `GPU 0: NVIDIA H200 (UUID: GPU-d4a16625-…)`.
    GpuHeader(GpuHeader<'a>),
    /// `Link N…`: a fact about one link.
    Link(u32, LinkFact<'a>),
    /// `-ec`: `Lane 0 ECC Correction Count: 374 (Overflow=0)`.
    Lane {
        lane: u32,
        count: u64,
        overflow: u64,
    },
    /// `NVML: Unable to retrieve NVLink information as all links are inActive`.
    AllLinksInactive,
    /// `No devices were found` (bad `-i`, or no GPU at all).
    NoDevices,
    /// `GPU NVLINK bandwidth mode: FULL`.
    BandwidthMode(&'a str),
    /// `-info`: `NVLE: disabled`, `Firmware Version: N/A`, Blackwell firmware parts.
    Info(&'a str, &'a str),
    /// `Low Power Threshold are in units of 100 us`.
    LowPowerUnit(u64),
    /// `Range of Low Power Threshold values are 1 to 8191`.
    LowPowerRange(u64, u64),
    /// One-line answers under a header: `Invalid Link`, `Not supported`,
    /// `Device does not have or support Nvlink`.
    GpuMessage(&'a str),
    /// `...`, `[...]`: the person who pasted left lines out.
    Elision,
}

/// `GPU N: NAME (UUID: …)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct GpuHeader<'a> {
    pub index: u32,
    pub name: &'a str,
    pub uuid: Option<&'a str>,
}

/// The payload of a `Link N` line.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum LinkFact<'a> {
    /// `Link 0:` alone: the heading of a `-ec` lane block.
    LaneHeading,
    /// `-s`: `26.562 GB/s`.
    Speed(f64),
    /// `-s`: `<inactive>`.
    Inactive,
    /// `-c`: `Link 0, P2P is supported: true`.
    Capability(&'a str, bool),
    /// `-e` (`Replay Errors: 0`), `-gt` (`Data Tx: 0 KiB`) and `-g`
    /// (`Rx0: 0 KBytes, Tx0: 0 KBytes`, several on one line).
    Counters(CounterList<'a>, CounterUnit),
    /// `-p` (`00000000:D5:00.0`) and `-R` (`Remote Device …: Link 6`).
    Remote(&'a str, Option<u32>),
    /// `-gLowPwrInfo`: `Low Power Mode: Low Power State`.
    LowPowerMode(&'a str),
    /// `-gLowPwrInfo`: `Low Power Threshold: 50000 us`.
    LowPowerThreshold(u64),
}

/// The `Name: value` pairs of one `Link N:` line. `-e` and `-gt` print one
/// a line and `-g` two, so two are held inline: reading a line allocates
/// nothing (a longer line spills into `more`).
#[derive(Debug, Clone, Default)]
pub(super) struct CounterList<'a> {
    inline: [(&'a str, u64); 2],
    len: usize,
    more: Vec<(&'a str, u64)>,
}

impl<'a> CounterList<'a> {
    /// A list holding `counters`, in order.
    #[cfg(test)]
    pub(super) fn of(counters: &[(&'a str, u64)]) -> Self {
        let mut list = Self::default();
        for c in counters {
            list.push(*c);
        }
        list
    }

    /// A list of one counter.
    fn of_one(counter: (&'a str, u64)) -> Self {
        let mut list = Self::default();
        list.push(counter);
        list
    }

    fn push(&mut self, counter: (&'a str, u64)) {
        match self.inline.get_mut(self.len) {
            Some(slot) if self.more.is_empty() => {
                *slot = counter;
                self.len += 1;
            }
            _ => self.more.push(counter),
        }
    }

    /// The pairs, in the order printed.
    pub(super) fn iter(&self) -> impl Iterator<Item = (&'a str, u64)> + '_ {
        self.inline
            .iter()
            .take(self.len)
            .chain(self.more.iter())
            .copied()
    }
}

impl PartialEq for CounterList<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.iter().eq(other.iter())
    }
}

/// How a counter's value was printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum CounterUnit {
    /// A plain count (`-e`).
    Count,
    /// `KiB` (`-gt d|r`).
    Kib,
    /// `KBytes` (deprecated `-g`), taken as KiB.
    KBytes,
}

impl LinkFact<'_> {
    /// The mode whose output has this shape.
    pub(super) fn mode(&self) -> NvlinkMode {
        match self {
            Self::LaneHeading => NvlinkMode::LaneEcc,
            Self::Speed(_) | Self::Inactive => NvlinkMode::Status,
            Self::Capability(..) => NvlinkMode::Capabilities,
            Self::Counters(counters, unit) => match unit {
                CounterUnit::Count => NvlinkMode::ErrorCounters,
                CounterUnit::KBytes => NvlinkMode::LegacyCounters,
                CounterUnit::Kib => {
                    let raw = counters.iter().next().is_some_and(|(name, _)| {
                        name.get(..3).is_some_and(|p| p.eq_ignore_ascii_case("raw"))
                    });
                    if raw {
                        NvlinkMode::ThroughputRaw
                    } else {
                        NvlinkMode::ThroughputData
                    }
                }
            },
            Self::Remote(_, None) => NvlinkMode::RemotePciBusId,
            Self::Remote(_, Some(_)) => NvlinkMode::RemoteLinkInfo,
            Self::LowPowerMode(_) | Self::LowPowerThreshold(_) => NvlinkMode::LowPowerInfo,
        }
    }
}

/// Why a line did not fit any shape.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Misfit {
    /// Not an nvlink line at all.
    Unknown(&'static str),
    /// The right shape, with a number too large to hold.
    TooLarge(&'static str),
}

/// `-info` labels: H200 prints the first two; GB200 adds the firmware parts.
pub(super) const INFO_LABELS: &[&str] = &[
    "NVLE",
    "Firmware Version",
    "MSE",
    "NETIR",
    "NETIR UPHY",
    "NETIR CLN",
    "NETIR DLN",
];

/// Classifies one line (already known not to be blank): the common link
/// lines by [`fast_link`], any other by [`shape_general`], which gives the
/// same answer for the lines `fast_link` reads (its test oracle).
pub(super) fn shape(line: &str) -> Result<Shape<'_>, Misfit> {
    match fast_link(line) {
        Some((number, fact)) => Ok(Shape::Link(number, fact.into_fact())),
        None => shape_general(line),
    }
}

/// What a line [`fast_link`] reads says about its link: one counter, a
/// speed, or inactive.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum FastFact<'a> {
    /// `Replay Errors: 0`, `Data Tx: 12 KiB`.
    Counter(&'a str, u64, CounterUnit),
    /// `26.562 GB/s`.
    Speed(f64),
    /// `<inactive>`.
    Inactive,
}

impl<'a> FastFact<'a> {
    /// The same fact as the general reader's [`LinkFact`].
    pub(super) fn into_fact(self) -> LinkFact<'a> {
        match self {
            Self::Counter(name, value, unit) => {
                LinkFact::Counters(CounterList::of_one((name, value)), unit)
            }
            Self::Speed(speed) => LinkFact::Speed(speed),
            Self::Inactive => LinkFact::Inactive,
        }
    }

    /// The mode whose output has this shape: [`LinkFact::mode`] of the
    /// same fact.
    pub(super) fn mode(self) -> NvlinkMode {
        match self {
            Self::Speed(_) | Self::Inactive => NvlinkMode::Status,
            Self::Counter(_, _, CounterUnit::Count) => NvlinkMode::ErrorCounters,
            Self::Counter(_, _, CounterUnit::KBytes) => NvlinkMode::LegacyCounters,
            Self::Counter(name, _, CounterUnit::Kib) => {
                if name.get(..3).is_some_and(|p| p.eq_ignore_ascii_case("raw")) {
                    NvlinkMode::ThroughputRaw
                } else {
                    NvlinkMode::ThroughputData
                }
            }
        }
    }
}

/// The link lines nearly every listing is made of, read in one pass over
/// the bytes straight to their shape: `Link N: <Name>: <digits>` with an
/// optional ` KiB` or ` KBytes` (`-e`, `-gt`), `Link N: 26.562 GB/s` and
/// `Link N: <inactive>` (`-s`), indented by spaces and tabs only, with
/// single spaces where the tool prints them and nothing after the value.
/// `None` for anything else, which [`shape_general`] reads (it took
/// ~700 instructions a line: a trim of each end, the payload tests in
/// turn, then the counter). For every line this reads, the answer is
/// [`shape_general`]'s (see the proptest).
pub(super) fn fast_link(line: &str) -> Option<(u32, FastFact<'_>)> {
    let bytes = line.as_bytes();
    let indent = bytes.iter().position(|&b| b != b' ' && b != b'\t')?;
    let after_word = bytes.get(indent..)?.strip_prefix(b"Link ")?;
    // At most nine digits: no overflow of the u32 (longer numbers go the
    // general way, which refuses them).
    let mut number = 0_u32;
    let mut digits = 0;
    for &b in after_word {
        if !b.is_ascii_digit() {
            break;
        }
        if digits == 9 {
            return None;
        }
        number = number * 10 + u32::from(b - b'0');
        digits += 1;
    }
    if digits == 0 || after_word.get(digits..digits + 2) != Some(b": ") {
        return None;
    }
    let payload = line.get(indent + "Link ".len() + digits + 2..)?;
    let fact = match payload.as_bytes().first()? {
        b'0'..=b'9' => FastFact::Speed(fast_speed(payload)?),
        b'<' if payload == "<inactive>" => FastFact::Inactive,
        b'A'..=b'Z' => fast_counter(payload)?,
        _ => return None,
    };
    Some((number, fact))
}

/// Powers of ten a [`fast_speed`] mantissa is divided by, all exact in f64.
const POW10: [f64; 16] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
];

/// `26.562 GB/s` → 26.562: digits, an optional `.` and digits, at most 15
/// digits in all. The mantissa (below 2^53) and the power of ten are exact
/// doubles, so their quotient is the correctly rounded value, which is
/// what `str::parse` (the general path's [`decimal_f64`]) returns too.
fn fast_speed(payload: &str) -> Option<f64> {
    let number = payload.strip_suffix(" GB/s")?.as_bytes();
    let mut mantissa = 0_u64;
    let mut digits = 0;
    let mut fraction: Option<usize> = None;
    for &b in number {
        match b {
            b'0'..=b'9' => {
                mantissa = mantissa * 10 + u64::from(b - b'0');
                digits += 1;
                if let Some(f) = fraction.as_mut() {
                    *f += 1;
                }
                if digits > 15 {
                    return None;
                }
            }
            b'.' if fraction.is_none() && digits > 0 => fraction = Some(0),
            _ => return None,
        }
    }
    if digits == 0 {
        return None;
    }
    // Exact integers up to 2^53: the conversion loses nothing.
    #[allow(clippy::cast_precision_loss)]
    let value = mantissa as f64;
    Some(value / POW10.get(fraction.unwrap_or(0))?)
}

/// `Replay Errors: 0`, `Data Tx: 584268610202 KiB`, `Rx0: 0 KBytes`: a
/// name of ASCII letters, digits and spaces starting with a capital and
/// not ending with a space, `: `, digits that fit in u64, then nothing, ` KiB` or
/// ` KBytes`. The `-R` and `-gLowPwrInfo` payloads (`Remote Device …`,
/// `Low Power …`) are left to the general reader.
///
/// Always inlined (with [`counter_after_name`]), so that the fact is built
/// where [`fast_link`] returns it: handed back through memory, its unit
/// byte was written alone and read back four bytes at a time, a read the
/// processor cannot forward from the write (the stall was two thirds of
/// `fast_link`'s time).
#[inline(always)]
fn fast_counter(payload: &str) -> Option<FastFact<'_>> {
    let bytes = payload.as_bytes();
    if bytes.starts_with(b"Remote Device") || bytes.starts_with(b"Low Power") {
        return None;
    }
    // The name: ASCII letters, digits and spaces, eight bytes a step.
    counter_after_name(
        payload,
        crate::parse::text::alphanumeric_run(bytes, Some(b' ')),
    )
}

/// The rest of [`fast_counter`] once the name is scanned: its bytes end
/// at `colon`, which must be `: ` after a name not ending in a space.
#[inline(always)]
fn counter_after_name(payload: &str, colon: usize) -> Option<FastFact<'_>> {
    let bytes = payload.as_bytes();
    if bytes.get(colon..colon + 2) != Some(b": ") || bytes.get(colon.checked_sub(1)?) == Some(&b' ')
    {
        return None;
    }
    let name = payload.get(..colon)?;
    let value = bytes.get(colon + 2..)?;
    // Counted and read in one loop. Nineteen digits always fit in u64;
    // longer values (and overflows) go the general way, which reports them.
    let mut number = 0_u64;
    let mut len = 0;
    for &d in value {
        let digit = d.wrapping_sub(b'0');
        if digit > 9 {
            break;
        }
        if len == 19 {
            return None;
        }
        number = number * 10 + u64::from(digit);
        len += 1;
    }
    if len == 0 {
        return None;
    }
    let unit = match value.get(len..)? {
        b"" => CounterUnit::Count,
        b" KiB" => CounterUnit::Kib,
        b" KBytes" => CounterUnit::KBytes,
        _ => return None,
    };
    Some(FastFact::Counter(name, number, unit))
}

/// [`fast_counter`] with the name scanned as first written, a table test
/// a byte: its test oracle.
#[cfg(test)]
fn fast_counter_by_bytes(payload: &str) -> Option<FastFact<'_>> {
    let bytes = payload.as_bytes();
    if bytes.starts_with(b"Remote Device") || bytes.starts_with(b"Low Power") {
        return None;
    }
    let in_name = |b: &u8| NAME_BYTES.get(usize::from(*b)).copied().unwrap_or(false);
    counter_after_name(payload, bytes.iter().position(|b| !in_name(b))?)
}

/// The bytes of a counter name the oracle of [`fast_counter`] takes:
/// ASCII letters, digits and space, a table indexed by byte.
#[cfg(test)]
const NAME_BYTES: [bool; 256] = crate::parse::text::alphanumeric_and(b" ");

/// Classifies one line (already known not to be blank), every shape the
/// general way.
pub(super) fn shape_general(line: &str) -> Result<Shape<'_>, Misfit> {
    let t = trim(line);
    // `Link N` lines are nearly all of any output: tried first (a header
    // starts `GPU`, so the order of these two tests changes nothing).
    if let Some((link, rest)) = link_prefix(t) {
        return link_fact(rest).map(|fact| Shape::Link(link, fact));
    }
    if let Some(header) = gpu_header(t) {
        return Ok(Shape::GpuHeader(header));
    }
    if t.starts_with("Lane ") {
        return lane(t);
    }
    if is_all_links_inactive(t) {
        return Ok(Shape::AllLinksInactive);
    }
    if t.eq_ignore_ascii_case("No devices were found") {
        return Ok(Shape::NoDevices);
    }
    if let Some(mode) = t.strip_prefix("GPU NVLINK bandwidth mode:") {
        return Ok(Shape::BandwidthMode(mode.trim()));
    }
    if let Some(shape) = low_power_info(t) {
        return shape;
    }
    // `Device does not have or support Nvlink`: a board (or a VM's
    // passed-through GPU) that exposes no NVLink at all.
    if matches!(
        t,
        "Invalid Link"
            | "Not supported"
            | "Not Supported"
            | "Device does not have or support Nvlink"
    ) {
        return Ok(Shape::GpuMessage(t));
    }
    if is_elision(t) {
        return Ok(Shape::Elision);
    }
    match label_value(t) {
        Some((label, value)) if INFO_LABELS.contains(&label) => Ok(Shape::Info(label, value)),
        _ => Err(Misfit::Unknown("not a line of `nvidia-smi nvlink` output")),
    }
}

/// `GPU 0: NAME (UUID: GPU-…)`; the UUID part is optional here (some pastes
/// cut it), detection insists on it.
pub(super) fn gpu_header(t: &str) -> Option<GpuHeader<'_>> {
    let (rest, digits) = gpu_prefix(t)?;
    // `GPU 0: NAME`, not `GPU 00000000:18:00.0` (nvidia-smi -q's PCI headers).
    let rest = rest.strip_prefix(':')?;
    if !rest.starts_with([' ', '\t']) {
        return None;
    }
    let rest = trim(rest);
    let index = digits.parse().ok()?;
    let (name, uuid) = match split_at_uuid(rest) {
        Some((name, uuid)) => {
            let uuid = trim(uuid);
            // A header whose line stops before its `)` (a paste cut there,
            // or a hand edit) keeps its UUID only when the UUID is whole:
            // a UUID cut short would read as another GPU's.
            let uuid = match uuid.strip_suffix(')') {
                Some(closed) => Some(trim(closed)),
                None => is_whole_uuid(uuid).then_some(uuid),
            };
            (trim(name), uuid.filter(|u| !u.is_empty()))
        }
        None => (rest, None),
    };
    (!name.is_empty()).then_some(GpuHeader { index, name, uuid })
}

/// `GPU-d4a16625-4536-2b66-d7f0-0060bf86bff4`: `GPU-` and the five groups
/// of 8, 4, 4, 4 and 12 hex digits nvidia-smi prints (the UUID of a header
/// that lost its closing `)` is kept only when it is this whole).
pub(crate) fn is_whole_uuid(uuid: &str) -> bool {
    let Some(hex) = uuid.strip_prefix("GPU-") else {
        return false;
    };
    let mut groups = hex.split('-');
    [8, 4, 4, 4, 12].iter().all(|&len| {
        groups
            .next()
            .is_some_and(|g| g.len() == len && g.bytes().all(|b| b.is_ascii_hexdigit()))
    }) && groups.next().is_none()
}

/// `GPU`, spaces or tabs, digits → (the text after the digits, the
/// digits). Read byte by byte: detection asks it of every `GPU` line and
/// the lines after it (the combinator version was most of the header's
/// cost).
fn gpu_prefix(t: &str) -> Option<(&str, &str)> {
    let after = t.strip_prefix("GPU")?;
    let spaces = after
        .bytes()
        .take_while(|b| matches!(b, b' ' | b'\t'))
        .count();
    if spaces == 0 {
        return None;
    }
    let from_digits = after.get(spaces..)?;
    let digits = from_digits.bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 {
        return None;
    }
    Some((from_digits.get(digits..)?, from_digits.get(..digits)?))
}

/// `text.split_once("(UUID:")`, found by a byte search for the `(` (no
/// substring searcher set up per header).
fn split_at_uuid(text: &str) -> Option<(&str, &str)> {
    const OPEN: &str = "(UUID:";
    let bytes = text.as_bytes();
    let mut from = 0;
    while let Some(i) = bytes.get(from..)?.iter().position(|&b| b == b'(') {
        let at = from + i;
        if bytes.get(at..at + OPEN.len()) == Some(OPEN.as_bytes()) {
            return Some((text.get(..at)?, text.get(at + OPEN.len()..)?));
        }
        from = at + 1;
    }
    None
}

/// A cheap necessary condition for a `-s` line (`… 26.562 GB/s`,
/// `… <inactive>`, `… Inactive`): detection asks it of every `Link` line
/// before reading the line in full, which `-e` and `-gt` lines never need.
pub(super) fn may_be_status(line: &str) -> bool {
    let t = line.trim_end();
    let t = t.strip_suffix('>').unwrap_or(t);
    let tail = t
        .len()
        .checked_sub("inactive".len())
        .and_then(|i| t.get(i..));
    t.ends_with("GB/s") || tail.is_some_and(|w| w.eq_ignore_ascii_case("inactive"))
}

/// `Link 12` followed by `:` or `,` → (12, the text after the number).
/// Read byte by byte (every line of a listing starts here; the combinator
/// version showed in the profile): `Link`, spaces or tabs, digits.
fn link_prefix(t: &str) -> Option<(u32, &str)> {
    let after_word = t.strip_prefix("Link")?.as_bytes();
    let spaces = after_word
        .iter()
        .take_while(|b| matches!(b, b' ' | b'\t'))
        .count();
    let after_spaces = after_word.get(spaces..)?;
    let digits = after_spaces
        .iter()
        .take_while(|b| b.is_ascii_digit())
        .count();
    if spaces == 0 || digits == 0 || !matches!(after_spaces.get(digits), Some(b':' | b',')) {
        return None;
    }
    let start = t.len() - after_spaces.len();
    let number = t.get(start..start + digits)?.parse().ok()?;
    Some((number, t.get(start + digits..)?))
}

fn link_fact(rest: &str) -> Result<LinkFact<'_>, Misfit> {
    if let Some(capability) = rest.strip_prefix(',') {
        return capability_fact(capability);
    }
    let payload = trim(rest.get(1..).unwrap_or_default());
    if payload.is_empty() {
        return Ok(LinkFact::LaneHeading);
    }
    // `<inactive>`; newer drivers (and tools quoting them) print `Inactive`.
    let bare = payload.strip_prefix('<').and_then(|p| p.strip_suffix('>'));
    if bare.unwrap_or(payload).eq_ignore_ascii_case("inactive") {
        return Ok(LinkFact::Inactive);
    }
    if let Some(number) = payload.strip_suffix("GB/s") {
        return decimal_f64(number)
            .map(LinkFact::Speed)
            .ok_or(Misfit::Unknown("link speed is not a number"));
    }
    if let Some(remote) = payload.strip_prefix("Remote Device") {
        return remote_link(remote.trim());
    }
    if is_pci_bus_id(payload) {
        return Ok(LinkFact::Remote(payload, None));
    }
    if let Some(mode) = payload.strip_prefix("Low Power Mode:") {
        return Ok(LinkFact::LowPowerMode(mode.trim()));
    }
    if let Some(threshold) = payload.strip_prefix("Low Power Threshold:") {
        let number = threshold.trim().strip_suffix("us").unwrap_or(threshold);
        return number_of(number, "`Low Power Threshold`").map(LinkFact::LowPowerThreshold);
    }
    counters(payload)
}

/// `, P2P is supported: true`.
fn capability_fact(text: &str) -> Result<LinkFact<'_>, Misfit> {
    let (label, value) = label_value(text).ok_or(Misfit::Unknown("capability without a value"))?;
    let supported = match value {
        "true" | "True" | "TRUE" => true,
        "false" | "False" | "FALSE" => false,
        _ => return Err(Misfit::Unknown("capability is neither true nor false")),
    };
    Ok(LinkFact::Capability(label, supported))
}

/// `00000000:D5:00.0: Link 6`. The bus id itself contains colons, so the
/// split is at the last `: Link`.
fn remote_link(text: &str) -> Result<LinkFact<'_>, Misfit> {
    let (bus_id, link) = text
        .rsplit_once(": Link")
        .ok_or(Misfit::Unknown("remote device without `: Link N`"))?;
    let bus_id = bus_id.trim();
    if !is_pci_bus_id(bus_id) {
        return Err(Misfit::Unknown("remote device is not a PCI bus id"));
    }
    match decimal_u32(link) {
        Ok(n) => Ok(LinkFact::Remote(bus_id, Some(n))),
        Err(NumberError::TooLarge) => Err(Misfit::TooLarge("remote link number")),
        Err(NumberError::NotANumber) => Err(Misfit::Unknown("remote link is not a number")),
    }
}

/// `Replay Errors: 0`, `Data Tx: 12 KiB`, `Rx0: 0 KBytes, Tx0: 0 KBytes`.
fn counters(payload: &str) -> Result<LinkFact<'_>, Misfit> {
    one_counter(payload).map_or_else(|| counters_in_parts(payload), Ok)
}

/// The line nearly every `-e` and `-gt` link line is, one counter and no
/// comma (`Replay Errors: 0`, `Data Tx: 12 KiB`), read in one pass over
/// the bytes. `None` for anything else (a comma, no digits, an overflow,
/// another unit, non-ASCII space): [`counters_in_parts`] reads or rejects
/// those, and gives the same answer as this for what this reads.
fn one_counter(payload: &str) -> Option<LinkFact<'_>> {
    let bytes = payload.as_bytes();
    // A comma before the colon is refused here; one after it is refused by
    // the value's shape (digits, then nothing, `KiB` or `KBytes`). Either
    // way the line goes to `counters_in_parts`, with no search for a comma
    // over the whole line first.
    let mut colon = None;
    for (i, &b) in bytes.iter().enumerate() {
        if b == b':' || b == b',' {
            colon = Some(i);
            break;
        }
    }
    let colon = colon?;
    if bytes.get(colon) == Some(&b',') {
        return None;
    }
    let name = trim(payload.get(..colon)?);
    if name.is_empty() {
        return None;
    }
    let is_space = |b: &u8| matches!(b, b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c);
    let value = bytes.get(colon + 1..)?;
    let start = value.iter().position(|b| !is_space(b))?;
    let digits = value.get(start..)?;
    // The digits are counted and read in the same loop; an overflow
    // refuses the line (the general reader reports it).
    let mut len = 0;
    let mut number = 0_u64;
    for &d in digits {
        if !d.is_ascii_digit() {
            break;
        }
        number = number.checked_mul(10)?.checked_add(u64::from(d - b'0'))?;
        len += 1;
    }
    let rest = digits.get(len..)?;
    let unit_start = rest.iter().position(|b| !is_space(b)).unwrap_or(rest.len());
    let unit = match rest.get(unit_start..)? {
        b"" => CounterUnit::Count,
        b"KiB" => CounterUnit::Kib,
        b"KBytes" => CounterUnit::KBytes,
        _ => return None,
    };
    (len > 0).then(|| LinkFact::Counters(CounterList::of_one((name, number)), unit))
}

/// [`counters`] for any line: `Name: value` parts split at `, `.
fn counters_in_parts(payload: &str) -> Result<LinkFact<'_>, Misfit> {
    let mut unit = None;
    let mut out = CounterList::default();
    for part in comma_parts(payload) {
        let (name, value) = label_value(part).ok_or(Misfit::Unknown(
            "not a known `Link N:` line (speed, counter, remote device …)",
        ))?;
        let (number, this_unit) = if let Some(n) = value.strip_suffix("KiB") {
            (n, CounterUnit::Kib)
        } else if let Some(n) = value.strip_suffix("KBytes") {
            (n, CounterUnit::KBytes)
        } else {
            (value, CounterUnit::Count)
        };
        if unit.is_some_and(|u| u != this_unit) {
            return Err(Misfit::Unknown("counters with different units on one line"));
        }
        unit = Some(this_unit);
        out.push((name, number_of(number, "counter")?));
    }
    let unit = unit.ok_or(Misfit::Unknown("empty link line"))?;
    Ok(LinkFact::Counters(out, unit))
}

/// `text.split(", ")`, found with a search for the comma alone: nearly
/// every line holds one counter and no comma, and the substring searcher's
/// set-up showed in the profile of a 12 MB paste.
fn comma_parts(text: &str) -> impl Iterator<Item = &str> {
    let mut rest = Some(text);
    std::iter::from_fn(move || {
        let text = rest?;
        let mut from = 0;
        while let Some(i) = text
            .as_bytes()
            .get(from..)
            .and_then(|t| t.iter().position(|&b| b == b','))
        {
            let comma = from + i;
            if text.as_bytes().get(comma + 1) == Some(&b' ') {
                rest = text.get(comma + 2..);
                return text.get(..comma);
            }
            from = comma + 1;
        }
        rest = None;
        Some(text)
    })
}

/// `Lane 0 ECC Correction Count: 374 (Overflow=0)`.
fn lane(t: &str) -> Result<Shape<'_>, Misfit> {
    let misfit = Misfit::Unknown("not a `Lane N ECC Correction Count: C (Overflow=O)` line");
    let rest = t.strip_prefix("Lane ").ok_or(misfit)?;
    let (lane, rest) = rest.split_once(' ').ok_or(misfit)?;
    let rest = rest.strip_prefix("ECC Correction Count:").ok_or(misfit)?;
    let (count, overflow) = rest.split_once('(').ok_or(misfit)?;
    let overflow = overflow
        .trim()
        .strip_prefix("Overflow=")
        .and_then(|o| o.strip_suffix(')'))
        .ok_or(misfit)?;
    let lane = match decimal_u32(lane) {
        Ok(n) => n,
        Err(NumberError::TooLarge) => return Err(Misfit::TooLarge("lane number")),
        Err(NumberError::NotANumber) => return Err(misfit),
    };
    Ok(Shape::Lane {
        lane,
        count: number_of(count, "ECC correction count")?,
        overflow: number_of(overflow, "overflow flag")?,
    })
}

fn number_of(text: &str, what: &'static str) -> Result<u64, Misfit> {
    match decimal_u64(text) {
        Ok(n) => Ok(n),
        Err(NumberError::TooLarge) => Err(Misfit::TooLarge(what)),
        Err(NumberError::NotANumber) => {
            Err(Misfit::Unknown("a value that should be a number is not"))
        }
    }
}

/// Both spellings drivers use: `inActive` (555, 590) and `inactive`
/// (azurehpc-health-checks test data). A health check that matched only one
/// of them had to be fixed (azurehpc-health-checks PR#132).
pub(super) fn is_all_links_inactive(t: &str) -> bool {
    let lower = t.to_ascii_lowercase();
    lower.contains("unable to retrieve nvlink information")
        && lower.contains("all links are inactive")
}

/// `Low Power Threshold are in units of 100 us`,
/// `Range of Low Power Threshold values are 1 to 8191`.
fn low_power_info(t: &str) -> Option<Result<Shape<'_>, Misfit>> {
    if let Some(rest) = t.strip_prefix("Low Power Threshold are in units of") {
        let number = rest.trim().strip_suffix("us").unwrap_or(rest);
        return Some(number_of(number, "low power unit").map(Shape::LowPowerUnit));
    }
    let rest = t.strip_prefix("Range of Low Power Threshold values are")?;
    let Some((low, high)) = rest.split_once(" to ") else {
        return Some(Err(Misfit::Unknown("low power range without `A to B`")));
    };
    Some(
        number_of(low, "low power range")
            .and_then(|l| number_of(high, "low power range").map(|h| Shape::LowPowerRange(l, h))),
    )
}

/// `dddddddd:bb:dd.f` (domain of 4 or 8 hex digits).
pub(super) fn is_pci_bus_id(t: &str) -> bool {
    // The domain first: counter lines (`Replay Errors: 0`) fail here.
    let domain = t.bytes().take_while(u8::is_ascii_hexdigit).count();
    if !(4..=8).contains(&domain) || t.as_bytes().get(domain) != Some(&b':') {
        return false;
    }
    let hex = |s: &str, len: std::ops::RangeInclusive<usize>| {
        len.contains(&s.len()) && s.chars().all(|c| c.is_ascii_hexdigit())
    };
    let mut parts = t.split(':');
    let (Some(domain), Some(bus), Some(dev_fn), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return false;
    };
    let Some((device, function)) = dev_fn.split_once('.') else {
        return false;
    };
    hex(domain, 4..=8) && hex(bus, 2..=2) && hex(device, 2..=2) && hex(function, 1..=1)
}

/// `...`, `....`, `[...]`, `…`: lines a person typed to say "cut here".
fn is_elision(t: &str) -> bool {
    let inner = t
        .strip_prefix('[')
        .and_then(|r| r.strip_suffix(']'))
        .unwrap_or(t);
    (inner.len() >= 3 && inner.chars().all(|c| c == '.')) || inner == "…"
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The combinator version [`link_prefix`] replaced, kept as its oracle.
    fn link_prefix_nom(t: &str) -> Option<(u32, &str)> {
        let parsed: IResult<&str, &str> = preceded((tag("Link"), space1), digit1).parse(t);
        let (rest, digits) = parsed.ok()?;
        if !(rest.starts_with(':') || rest.starts_with(',')) {
            return None;
        }
        Some((digits.parse().ok()?, rest))
    }

    proptest::proptest! {
        /// The fast path reads every line it takes as the general reader
        /// does (and the dispatching `shape` equals the general one).
        #[test]
        fn fast_link_reads_as_the_general_reader(
            t in "[ \t]{0,3}(Link|Lin|Link  )[ ]?[0-9]{0,11}(: |:|, |,)?(Replay Errors|CRC Errors|Data Tx|Raw Rx|Rx0|Remote Device|Low Power Mode|Low Power Threshold|P2P is supported|x|[A-Za-z0-9 ]{0,6})?(: |:|  )?([0-9]{0,22}|[0-9]{0,9}\\.[0-9]{0,9}|<inactive>|inactive|<Inactive>)?( KiB| KBytes| GB/s|GB/s| kib| us| )?[ \t]?"
        ) {
            if let Some((number, fact)) = fast_link(&t) {
                proptest::prop_assert_eq!(fact.mode(), fact.into_fact().mode());
                proptest::prop_assert_eq!(Ok(Shape::Link(number, fact.into_fact())), shape_general(&t));
            }
            proptest::prop_assert_eq!(shape(&t), shape_general(&t));
        }

        /// The word-at-a-time name scan reads every payload as the
        /// byte-at-a-time one did: names of every length around the word
        /// size, ending in a space, a colon or a byte that is not ASCII,
        /// values up to and past the nineteen-digit limit.
        #[test]
        fn fast_counter_reads_as_byte_by_byte(
            name in "[A-Z][A-Za-z0-9 ]{0,17}[ :é]?",
            sep in proptest::sample::select(vec![": ", ":", " : ", ":  "]),
            digits in "[0-9]{0,22}",
            cut in 0usize..23,
            after in proptest::sample::select(vec!["", " KiB", " KBytes", "/", ":", "0", " ", "x"]),
        ) {
            let digits = digits.get(..cut.min(digits.len())).unwrap_or_default();
            let payload = format!("{name}{sep}{digits}{after}");
            proptest::prop_assert_eq!(fast_counter(&payload), fast_counter_by_bytes(&payload));
        }

        /// Speeds as printed, read by the fast path exactly as `str::parse`.
        #[test]
        fn fast_speed_is_parse(int in 0u64..100_000_000, frac in "[0-9]{0,9}") {
            let text = if frac.is_empty() { format!("{int} GB/s") } else { format!("{int}.{frac} GB/s") };
            if let Some(v) = fast_speed(&text) {
                let number = text.strip_suffix(" GB/s").unwrap_or_default();
                proptest::prop_assert_eq!(Some(v.to_bits()), decimal_f64(number).map(f64::to_bits));
            }
        }

        /// The byte-wise `GPU N` prefix and `(UUID:` split read as the
        /// combinators and the substring search did.
        #[test]
        fn gpu_prefix_reads_as_the_combinators_did(
            t in "(GPU|GP|gpu|)[ \t\n]{0,3}[0-9]{0,12}[:,;. é]?[ (UUIDé:]{0,8}.{0,8}"
        ) {
            let nom: IResult<&str, &str> = preceded((tag("GPU"), space1), digit1).parse(t.as_str());
            proptest::prop_assert_eq!(gpu_prefix(&t), nom.ok());
            proptest::prop_assert_eq!(split_at_uuid(&t), t.split_once("(UUID:"));
        }

        #[test]
        fn link_prefix_reads_as_the_combinators_did(t in "(Link|Lin|GPU|)[ \t\n]{0,3}[0-9]{0,12}[:,;. é]?.{0,6}") {
            proptest::prop_assert_eq!(link_prefix(&t), link_prefix_nom(&t));
        }

        #[test]
        fn one_counter_reads_as_the_general_reader(t in "[A-Za-z ]{0,8}[:,]?[ \t]{0,2}[0-9]{0,22}[ \t]{0,2}(KiB|KBytes|kib|B|:|\u{a0})?[, ]{0,2}[A-Za-z0-9: ]{0,8}") {
            if let Some(fact) = one_counter(&t) {
                proptest::prop_assert_eq!(Ok(fact), counters_in_parts(&t));
            }
            proptest::prop_assert_eq!(counters(&t), counters_in_parts(&t));
        }

        #[test]
        fn label_value_splits_at_the_first_colon(t in "[ a-zé:\t]{0,16}") {
            let old = t.split_once(':').and_then(|(l, v)| {
                let l = trim(l);
                (!l.is_empty()).then(|| (l, trim(v)))
            });
            proptest::prop_assert_eq!(label_value(&t), old);
        }
    }

    #[test]
    fn comma_parts_split_as_str_split_does() {
        for t in [
            "", "a", "a, b", "a,b", "a, b, c", ", ", "a, ", ",, x", "a ,b", "x,, y", "é, ü",
        ] {
            let ours: Vec<&str> = comma_parts(t).collect();
            let std: Vec<&str> = t.split(", ").collect();
            assert_eq!(ours, std, "{t:?}");
        }
    }

    #[test]
    fn gpu_headers_with_and_without_uuid() {
        let h = gpu_header("GPU 0: NVIDIA H200 (UUID: GPU-d4a16625-4536-2b66-d7f0-0060bf86bff4)")
            .unwrap();
        assert_eq!(h.index, 0);
        assert_eq!(h.name, "NVIDIA H200");
        assert_eq!(h.uuid, Some("GPU-d4a16625-4536-2b66-d7f0-0060bf86bff4"));
        let h = gpu_header("GPU 12: Tesla V100-SXM2-16GB").unwrap();
        assert_eq!(
            (h.index, h.name, h.uuid),
            (12, "Tesla V100-SXM2-16GB", None)
        );
        assert!(gpu_header("GPU 00000000:18:00.0").is_none());
        assert!(gpu_header("GPU NVLINK bandwidth mode: FULL").is_none());
        assert!(gpu_header("GPU 1:").is_none());
    }

    /// A header whose line lost its closing `)` (the paste ended there, or
    /// an editor wrapped it) is read: its UUID is kept when whole, and
    /// dropped when it is cut short (it would name another GPU).
    #[test]
    fn gpu_headers_without_their_closing_paren() {
        let h =
            gpu_header("GPU 3: NVIDIA H100 NVL (UUID: GPU-0a1b2c3d-4e5f-6071-8293-a4b5c6d7e8f9")
                .unwrap();
        assert_eq!(
            (h.index, h.name, h.uuid),
            (
                3,
                "NVIDIA H100 NVL",
                Some("GPU-0a1b2c3d-4e5f-6071-8293-a4b5c6d7e8f9")
            )
        );
        let h = gpu_header("GPU 3: NVIDIA H100 NVL (UUID: GPU-0a1b2c3d-4e5f-60").unwrap();
        assert_eq!((h.name, h.uuid), ("NVIDIA H100 NVL", None));
        let h = gpu_header("GPU 3: NVIDIA H100 NVL (UUID: ").unwrap();
        assert_eq!((h.name, h.uuid), ("NVIDIA H100 NVL", None));
        // Closed, any UUID is kept as printed (redacted ones too).
        let h = gpu_header("GPU 3: NVIDIA H100 NVL (UUID: GPU-xxxx)").unwrap();
        assert_eq!(h.uuid, Some("GPU-xxxx"));
        assert!(!is_whole_uuid("GPU-0a1b2c3d-4e5f-6071-8293-a4b5c6d7e8f"));
        assert!(!is_whole_uuid(
            "GPU-0a1b2c3d-4e5f-6071-8293-a4b5c6d7e8f9-00"
        ));
        assert!(!is_whole_uuid("MIG-0a1b2c3d-4e5f-6071-8293-a4b5c6d7e8f9"));
        assert!(!is_whole_uuid("GPU-0a1b2c3d-4e5f-6071-8293-a4b5c6d7e8fg"));
    }

    #[test]
    fn every_status_line_may_be_status() {
        for line in [
            "\t Link 0: 26.562 GB/s",
            "Link 11: 25 GB/s  ",
            "         Link 4: <inactive>",
            "Link 4: Inactive",
            "Link 4: <INACTIVE>",
        ] {
            assert!(may_be_status(line), "{line}");
            assert!(matches!(
                shape(line),
                Ok(Shape::Link(_, LinkFact::Speed(_) | LinkFact::Inactive))
            ));
        }
        for line in ["\t Link 0: Replay Errors: 0", "Link 0: Raw Tx: 1 KiB", "é"] {
            assert!(!may_be_status(line), "{line}");
        }
    }

    #[test]
    fn status_payloads() {
        assert_eq!(
            shape("\t Link 0: 26.562 GB/s"),
            Ok(Shape::Link(0, LinkFact::Speed(26.562)))
        );
        assert_eq!(
            shape("Link 11: 25 GB/s"),
            Ok(Shape::Link(11, LinkFact::Speed(25.0)))
        );
        assert_eq!(
            shape("         Link 4: <inactive>"),
            Ok(Shape::Link(4, LinkFact::Inactive))
        );
        for inactive in ["Link 4: Inactive", "Link 4: inactive", "Link 4: <Inactive>"] {
            assert_eq!(shape(inactive), Ok(Shape::Link(4, LinkFact::Inactive)));
        }
        assert!(shape("Link 4: <inactive").is_err());
        assert!(shape("Link 4: fast GB/s").is_err());
    }

    #[test]
    fn counters_in_every_unit() {
        assert_eq!(
            shape("\t Link 0: CRC Errors: 65535"),
            Ok(Shape::Link(
                0,
                LinkFact::Counters(
                    CounterList::of(&[("CRC Errors", 65_535)]),
                    CounterUnit::Count
                )
            ))
        );
        let raw = shape("\t Link 0: Raw Tx: 520106574 KiB").unwrap();
        assert_eq!(
            raw,
            Shape::Link(
                0,
                LinkFact::Counters(
                    CounterList::of(&[("Raw Tx", 520_106_574)]),
                    CounterUnit::Kib
                )
            )
        );
        let Shape::Link(_, fact) = raw else {
            unreachable!()
        };
        assert_eq!(fact.mode(), NvlinkMode::ThroughputRaw);
        assert_eq!(
            shape("         Link 1: Rx0: 100 KBytes, Tx0: 7 KBytes"),
            Ok(Shape::Link(
                1,
                LinkFact::Counters(
                    CounterList::of(&[("Rx0", 100), ("Tx0", 7)]),
                    CounterUnit::KBytes
                )
            ))
        );
        assert_eq!(
            shape("Link 0: Data Tx: 99999999999999999999 KiB"),
            Err(Misfit::TooLarge("counter"))
        );
        assert!(shape("Link 0: Rx0: 1 KBytes, Tx0: 2 KiB").is_err());
    }

    #[test]
    fn remote_ends_capabilities_lanes_and_low_power() {
        assert_eq!(
            shape("Link 4: Remote Device 00000000:D5:00.0: Link 6"),
            Ok(Shape::Link(
                4,
                LinkFact::Remote("00000000:D5:00.0", Some(6))
            ))
        );
        assert_eq!(
            shape("\t Link 3: FFFFFFFF:FF:FF.0"),
            Ok(Shape::Link(3, LinkFact::Remote("FFFFFFFF:FF:FF.0", None)))
        );
        assert_eq!(
            shape("\t Link 5, SLI is supported: false"),
            Ok(Shape::Link(
                5,
                LinkFact::Capability("SLI is supported", false)
            ))
        );
        assert_eq!(
            shape("\t\t Lane 1 ECC Correction Count: 275 (Overflow=1)"),
            Ok(Shape::Lane {
                lane: 1,
                count: 275,
                overflow: 1
            })
        );
        assert_eq!(
            shape("\t Link 9:"),
            Ok(Shape::Link(9, LinkFact::LaneHeading))
        );
        assert_eq!(
            shape("\t Link 0: Low Power Threshold: 50000 us"),
            Ok(Shape::Link(0, LinkFact::LowPowerThreshold(50_000)))
        );
        assert_eq!(
            shape("\t Range of Low Power Threshold values are 1 to 8191"),
            Ok(Shape::LowPowerRange(1, 8191))
        );
        assert_eq!(
            shape("\t Low Power Threshold are in units of 100 us"),
            Ok(Shape::LowPowerUnit(100))
        );
    }

    #[test]
    fn messages_in_both_spellings() {
        for t in [
            "NVML: Unable to retrieve NVLink information as all links are inActive",
            "NVML: Unable to retrieve NVLink information as all links are inactive",
        ] {
            assert_eq!(shape(t), Ok(Shape::AllLinksInactive));
        }
        assert_eq!(shape("No devices were found"), Ok(Shape::NoDevices));
        assert_eq!(
            shape("\t Invalid Link"),
            Ok(Shape::GpuMessage("Invalid Link"))
        );
        assert_eq!(
            shape("GPU NVLINK bandwidth mode: FULL"),
            Ok(Shape::BandwidthMode("FULL"))
        );
        assert_eq!(
            shape("\t NVLE: disabled"),
            Ok(Shape::Info("NVLE", "disabled"))
        );
        assert_eq!(shape("[...]"), Ok(Shape::Elision));
        assert!(shape("Temperature: 40 C").is_err());
    }

    #[test]
    fn pci_bus_ids() {
        assert!(is_pci_bus_id("00000000:D5:00.0"));
        assert!(is_pci_bus_id("0000:18:00.1"));
        assert!(!is_pci_bus_id("00000000:D5:00"));
        assert!(!is_pci_bus_id("00000000:D5:00.0: Link 1"));
        assert!(!is_pci_bus_id("zz:D5:00.0"));
    }
}
