//! What a check sees: the parsed documents, seen as hosts and their parts.
//!
//! Documents are pastes or dump files; hosts are what rules reason about. A
//! section's host comes from the input (pdsh prefix, prompt, batch directory);
//! sections with no host belong to an unnamed host per document, so two
//! anonymous pastes are never mistaken for one machine.

use super::thresholds::Thresholds;
use crate::input::{Document, Section};
use crate::model::ib::{Guid, LinkLayer, PhysState, PortState};
use crate::model::ibdev2netdev::NetdevPort;
use crate::model::ibstat::{Ca, Port};
use crate::model::ibstatus::IbstatusPort;
use crate::model::nvlink::NvlinkLink;
use crate::model::partial::Partial;
use crate::model::perfquery::{PerfAttribute, Perfquery};
use crate::model::port_index::PortIndex;
use crate::model::smi_query::QueryGpu;
use crate::model::topo::TopoMatrix;
use crate::model::{Counter, CounterKey, Counters, KnownCounter};
use crate::parse::SectionData;
use crate::span::LineSpan;
use crate::stats::{CounterRate, LinkCapacity, Measurements};
use rustc_hash::FxHashMap;
use std::cell::OnceCell;
use std::collections::{BTreeMap, BTreeSet};

/// Which machine something belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum HostKey<'a> {
    /// A host the input names.
    Named(&'a str),
    /// The unnamed host of the document with this index.
    Unnamed(usize),
    /// Not one host: fabric-wide tools (`ibqueryerrors`, `iblinkinfo`)
    /// describe ports of every node, whoever ran them.
    Fabric,
}

impl<'a> HostKey<'a> {
    /// The host name, if the input gave one.
    #[must_use]
    pub fn name(self) -> Option<&'a str> {
        match self {
            HostKey::Named(n) => Some(n),
            HostKey::Unnamed(_) | HostKey::Fabric => None,
        }
    }
}

/// A section with the document it belongs to.
#[derive(Debug, Clone, Copy)]
pub struct SectionRef<'a> {
    /// Index of the document in the analysed list.
    pub doc: usize,
    /// The section.
    pub section: &'a Section,
}

impl<'a> SectionRef<'a> {
    /// The host the section belongs to.
    #[must_use]
    pub fn host(&self) -> HostKey<'a> {
        match self.section.host.as_deref() {
            Some(h) => HostKey::Named(h),
            None => HostKey::Unnamed(self.doc),
        }
    }

    /// The file the section was read from, in batch runs.
    #[must_use]
    pub fn source(&self) -> Option<&'a str> {
        self.section.source.as_deref()
    }
}

/// An InfiniBand port as `ibstat`, `ibstatus` or `ibv_devinfo` describes it,
/// in one vocabulary so port rules work with whichever tool the operator ran.
#[derive(Debug, Clone)]
pub struct IbPortRef<'a> {
    /// Where it was read.
    pub at: SectionRef<'a>,
    /// Adapter name (`mlx5_0`).
    pub device: &'a str,
    /// Adapter type as ibstat prints it (`MT4129`; ibv_devinfo's
    /// `vendor_part_id` 4129 becomes `MT4129`).
    pub ca_type: Option<String>,
    /// Port number.
    pub number: u32,
    /// Logical state.
    pub state: Option<PortState>,
    /// Physical state.
    pub physical_state: Option<PhysState>,
    /// Rate in Gb/s as ibstat prints it (4X EDR = 100).
    pub rate_gbps: Option<f64>,
    /// Lanes of the active width where the tool prints it (`ibstatus`'s
    /// `(4X HDR)`, `ibv_devinfo -v`'s `active_width`); ibstat prints only
    /// the rate.
    pub width_lanes: Option<u32>,
    /// True when the rate is tagged FDR10 (ibstat's `Rate: 40 (FDR10)`,
    /// ibstatus's `(4X FDR10)`): 10 Gb/s a lane, not QDR.
    pub fdr10: bool,
    /// Base LID.
    pub base_lid: Option<u32>,
    /// SM LID.
    pub sm_lid: Option<u32>,
    /// Link layer.
    pub link_layer: Option<LinkLayer>,
    /// Port GUID.
    pub port_guid: Option<Guid>,
    /// The node GUID of the adapter the view names (`ibstat`'s `Node
    /// GUID`, `ibv_devinfo`'s `node_guid`): what tells two machines'
    /// ports of one name apart where no port GUID is printed.
    pub adapter_guid: Option<Guid>,
    /// Lines the port was read from.
    pub span: LineSpan,
    /// True when the port block is cut: fields it lacks are unknown.
    pub partial: bool,
    /// For a port read from fields pasted without their headers (`ibstat
    /// | grep State`, an ibstatus block without its `Infiniband device`
    /// line): its place among such ports of the host, from 1 in input
    /// order. Its `device` (empty) and `number` (0) are then unknown: a
    /// rule never matches it with another port by them.
    pub headerless: Option<u32>,
    /// The `ibdev2netdev` line that told the link layer, when the port's
    /// own view did not (a block cut before its `Link layer`, `ibstat`
    /// older than the line): `mlx5_1 port 1 ==> ib1` is InfiniBand, the
    /// kernel's IPoIB interface; `==> ens3f0np0` is Ethernet (RoCE).
    pub link_layer_from: Option<(SectionRef<'a>, &'a NetdevPort)>,
}

/// What tells a port from its host's others ([`IbPortRef::key`]): host,
/// adapter, number, and the place of a header-less port.
pub type PortKey<'a> = (HostKey<'a>, &'a str, u32, Option<u32>);

impl<'a> IbPortRef<'a> {
    /// What tells this port from the host's others: its adapter and
    /// number, or for a header-less port its place among those
    /// ([`headerless`](Self::headerless)), so that two of them, or one
    /// and a named port, are never taken for one.
    #[must_use]
    pub fn key(&self) -> PortKey<'a> {
        (self.host(), self.device, self.number, self.headerless)
    }

    /// `mlx5_0 port 1`, or `header-less port #2` for a port whose adapter
    /// and number the paste does not show, `header-less port #2 (port 1 of
    /// an adapter not shown)` for a `Port 1:` block pasted without its
    /// `CA '…'` line: how findings name it.
    #[must_use]
    pub fn name(&self) -> String {
        match self.headerless {
            Some(n) if self.number != 0 => format!(
                "header-less port #{n} (port {} of an adapter not shown)",
                self.number
            ),
            Some(n) => format!("header-less port #{n}"),
            None => format!("{} port {}", self.device, self.number),
        }
    }

    /// The host the port belongs to.
    #[must_use]
    pub fn host(&self) -> HostKey<'a> {
        self.at.host()
    }

    /// The subject of a finding about this port.
    #[must_use]
    pub fn subject(&self) -> super::Subject {
        if let Some(n) = self.headerless {
            // Nothing else names it: a LID or GUID on its lines would join
            // it with ports other tools read, which it may not be.
            return super::Subject {
                host: self.host().name().map(str::to_owned),
                headerless_port: Some(n),
                ..super::Subject::default()
            };
        }
        super::Subject {
            host: self.host().name().map(str::to_owned),
            device: Some(self.device.to_owned()),
            port: Some(self.number),
            lid: self.base_lid.filter(|l| *l != 0 && *l != 0xffff),
            guid: self.port_guid.filter(|g| g.0 != 0),
            ..super::Subject::default()
        }
    }

    /// Evidence pointing at the port's lines.
    #[must_use]
    pub fn evidence(&self, text: impl Into<String>) -> super::Evidence {
        super::Evidence::new(
            format!("{}: {}", self.at.section.kind.name(), text.into()),
            self.span,
            self.at.source(),
        )
    }

    /// The `ibdev2netdev` line that told the port's link layer, as
    /// evidence, when the port's own view did not tell it.
    #[must_use]
    pub fn link_layer_evidence(&self) -> Option<super::Evidence> {
        let (at, netdev) = self.link_layer_from?;
        let layer = match netdev.link_layer() {
            LinkLayer::Infiniband => "an IPoIB interface: the port is InfiniBand",
            _ => "not an IPoIB interface: the port is Ethernet (RoCE)",
        };
        Some(super::Evidence::new(
            format!(
                "ibdev2netdev: {} port {} ==> {} ({layer})",
                netdev.device, netdev.port, netdev.netdev
            ),
            netdev.span,
            at.source(),
        ))
    }

    /// True when the port speaks native InfiniBand (or does not say, as very
    /// old infiniband-diags do not). A cut port block that stops before its
    /// `Link layer` is not assumed to be InfiniBand: it may be RoCE.
    #[must_use]
    pub fn is_infiniband(&self) -> bool {
        match self.link_layer {
            Some(LinkLayer::Ethernet) => false,
            Some(LinkLayer::Infiniband) => true,
            _ => !self.partial,
        }
    }

    /// True when the port block was cut before its `Link layer`: it may be
    /// InfiniBand or RoCE.
    #[must_use]
    pub fn link_layer_cut(&self) -> bool {
        self.partial
            && !matches!(
                self.link_layer,
                Some(LinkLayer::Ethernet | LinkLayer::Infiniband)
            )
    }

    /// True when the port is `Active` and not reported physically down.
    #[must_use]
    pub fn is_active(&self) -> bool {
        self.state == Some(PortState::Active)
            && self.physical_state.is_none_or(|p| p == PhysState::LinkUp)
    }
}

/// An InfiniBand adapter as `ibstat` or `ibv_devinfo` describes it.
#[derive(Debug, Clone)]
pub struct AdapterRef<'a> {
    /// Where it was read.
    pub at: SectionRef<'a>,
    /// Adapter name (`mlx5_0`).
    pub name: &'a str,
    /// `CA`, `Switch`… (ibstat only).
    pub node_type: Option<&'a str>,
    /// Adapter type (`MT4129`).
    pub ca_type: Option<String>,
    /// Firmware version.
    pub firmware_version: Option<&'a str>,
    /// Node GUID.
    pub node_guid: Option<Guid>,
    /// Number of ports listed with it.
    pub ports_listed: usize,
    /// Lines it was read from.
    pub span: LineSpan,
    /// True when the adapter's block, or one of its ports, is cut.
    pub partial: bool,
    /// True when every port listed with it runs Ethernet (RoCE), or it is
    /// a bond (`mlx5_bond_0`): a NIC, not an InfiniBand adapter.
    pub ethernet: bool,
}

impl<'a> AdapterRef<'a> {
    /// Whether this view says nothing about the adapter itself (type,
    /// firmware, node GUID): `ibstat mlx5_0 1` prints only the port.
    fn is_port_only(&self) -> bool {
        self.ca_type.is_none() && self.firmware_version.is_none() && self.node_guid.is_none()
    }

    /// Takes the adapter as a later view describes it, unless that view is
    /// port only: then this earlier full description stays, with its own
    /// lines as evidence, since nothing about the adapter changed between
    /// them.
    fn replace_unless_port_only(&mut self, newer: Self) {
        if !newer.is_port_only() || self.is_port_only() {
            *self = newer;
        }
    }
}

/// An `ibstat` port as the port rules see it; `ca` is `None` for a port
/// read without its adapter's header (its device is then empty).
fn from_ibstat<'a>(at: SectionRef<'a>, ca: Option<&'a Ca>, port: &'a Port) -> IbPortRef<'a> {
    IbPortRef {
        at,
        device: ca.map_or("", |c| c.name.as_str()),
        ca_type: ca.and_then(|c| c.ca_type.clone()),
        number: port.number,
        state: port.state,
        physical_state: port.physical_state,
        rate_gbps: port.rate_gbps,
        width_lanes: None,
        fdr10: port.fdr10,
        base_lid: port.base_lid,
        sm_lid: port.sm_lid,
        link_layer: port.link_layer,
        port_guid: port.port_guid,
        adapter_guid: ca.and_then(|c| c.node_guid),
        span: port.span,
        partial: port.partial.is_some() || ca.is_some_and(|c| c.partial.is_some()),
        headerless: None,
        link_layer_from: None,
    }
}

/// An `ibstatus` port as the port rules see it.
fn from_ibstatus<'a>(at: SectionRef<'a>, port: &'a IbstatusPort) -> IbPortRef<'a> {
    IbPortRef {
        at,
        device: &port.device,
        ca_type: None,
        number: port.port,
        state: port.state,
        physical_state: port.physical_state,
        rate_gbps: port.rate.as_ref().map(|r| r.rate_gbps),
        width_lanes: port.rate.as_ref().and_then(|r| r.lanes),
        fdr10: port
            .rate
            .as_ref()
            .is_some_and(|r| r.generation.as_deref() == Some("FDR10")),
        base_lid: port.base_lid,
        sm_lid: port.sm_lid,
        link_layer: port.link_layer,
        port_guid: None,
        adapter_guid: None,
        span: port.span,
        partial: port.partial.is_some(),
        headerless: None,
        link_layer_from: None,
    }
}

/// The place of the next header-less port of `at`'s host (from 1).
fn next_headerless<'a>(counts: &mut BTreeMap<HostKey<'a>, u32>, at: SectionRef<'a>) -> u32 {
    let n = counts.entry(at.host()).or_insert(0);
    *n += 1;
    *n
}

/// Marks the ports of one section whose `Link layer` the paste lost: the
/// field is missing while another port of the same output prints it, or
/// it is missing from the last port of an output that ends the input.
/// Such a port may be RoCE: it is not assumed to be InfiniBand.
fn mark_link_layer_cut(ports: &mut [IbPortRef<'_>], ends_input: bool) {
    let prints_link_layer = ports.iter().any(|p| p.link_layer.is_some());
    let last = ports.len().saturating_sub(1);
    for (i, p) in ports.iter_mut().enumerate() {
        if p.link_layer.is_none() && (prints_link_layer || (ends_input && i == last)) {
            p.partial = true;
        }
    }
}

/// One counter reading with where it was read.
#[derive(Debug, Clone, Copy)]
pub struct Reading<'a> {
    /// The value, width and saturation.
    pub counter: Counter,
    /// Where it was read.
    pub at: SectionRef<'a>,
    /// Lines of the block it was read in.
    pub span: LineSpan,
}

impl Reading<'_> {
    /// Evidence for this reading (`perfquery: SymbolErrorCounter = 12`).
    #[must_use]
    pub fn evidence(&self, name: &str) -> super::Evidence {
        self.evidence_named("", name)
    }

    /// [`evidence`](Self::evidence) with what names the reading beyond
    /// the finding's subject written before the counter's name (`GPU 3
    /// link 7 `, `link 7 `, or nothing): `nvlink: GPU 3 link 7
    /// replay_errors = 5` in a finding about the host.
    #[must_use]
    pub fn evidence_named(&self, place: &str, name: &str) -> super::Evidence {
        let sat = if self.counter.saturated {
            " (saturated: at least this many)"
        } else {
            ""
        };
        // Pushed piece by piece into a string of the right size: a fleet
        // has a few of these per GPU, and `format!` cost several times
        // the copies.
        let kind = self.at.section.kind.name();
        let mut text =
            String::with_capacity(kind.len() + place.len() + name.len() + sat.len() + 24);
        text.push_str(kind);
        text.push_str(": ");
        text.push_str(place);
        text.push_str(name);
        text.push_str(" = ");
        super::wording::push_u64(&mut text, self.counter.value);
        text.push_str(sat);
        super::Evidence::new(text, self.span, self.at.source())
    }
}

/// The last value given for each key of `readings` (in reading order):
/// the map inserting them one by one gives, built with one stable sort
/// and one pass instead. A GPU has hundreds of counter readings and a port
/// dozens; inserting each into the tree (a search comparing names, then a
/// shift of the node's entries) was most of building the context.
fn latest_per_key<K: Ord, V>(readings: Vec<(K, V)>) -> BTreeMap<K, V> {
    // `FromIterator` sorts stably and keeps the last of equal keys.
    readings.into_iter().collect()
}

/// [`latest_per_key`] as a list in key order, without building a tree:
/// a stable sort (of readings usually in order already), then the last
/// of each run of equal keys (what [`latest_ranked`] keeps).
fn latest_in_key_order<K: Ord, V>(mut readings: Vec<(K, V)>) -> Vec<(K, V)> {
    readings.sort_by(|a, b| a.0.cmp(&b.0));
    let mut latest: Vec<(K, V)> = Vec::with_capacity(readings.len());
    for r in readings {
        match latest.last_mut() {
            Some(last) if last.0 == r.0 => *last = r,
            _ => latest.push(r),
        }
    }
    latest
}

/// The last value of each counter of `readings` (in reading order), in
/// name order with its name: [`latest_per_key`] of the readings by name,
/// sorted by id (known ids compare by their place among the names, not by
/// the names).
fn latest_by_id<V>(readings: Vec<(&crate::model::CounterId, V)>) -> Vec<(&str, V)> {
    latest_in_key_order(readings)
        .into_iter()
        .map(|(id, v)| (id.name(), v))
        .collect()
}

/// The latest value of every counter `perfquery` printed for one port.
#[derive(Debug, Clone)]
pub struct PerfPortRef<'a> {
    /// Host of the readings.
    pub host: HostKey<'a>,
    /// LID the port was queried by.
    pub lid: Option<u32>,
    /// Port number (`None` for a directed-route query without one).
    pub port: Option<u32>,
    /// True for perfquery's all-ports aggregate (`-a`, port 255).
    pub all_ports: bool,
    /// The adapter, when an `ibstat`-like section gives the LID's owner,
    /// or the node description `ibqueryerrors` prints.
    pub device: Option<&'a str>,
    /// Port GUID (ibqueryerrors).
    pub guid: Option<Guid>,
    /// Latest reading per counter name.
    pub counters: PortReadings<'a>,
}

/// The latest reading of each counter of one port: the blocks the port
/// was read in, kept as they are and asked newest first. The latest reading
/// of a counter is the one of the last block holding it, so a look-up reads
/// one block or two (a port is read once per snapshot) by counter id, and
/// nothing is copied or sorted to build a port (building each port's list
/// of latest readings, a sort of every reading of every block, was most of
/// building the ports).
#[derive(Debug, Clone, Default)]
pub struct PortReadings<'a> {
    /// The port's blocks, in reading order.
    blocks: Vec<PortBlock<'a>>,
    /// Every counter's latest reading in name order, made only when
    /// [`iter`](Self::iter) or [`len`](Self::len) asks (no rule does).
    merged: OnceCell<Vec<(&'a str, Reading<'a>)>>,
}

/// One block of counters of a port: where it was read, its lines, and its
/// counters (by id, in name order).
#[derive(Debug, Clone, Copy)]
struct PortBlock<'a> {
    at: SectionRef<'a>,
    span: LineSpan,
    counters: &'a Counters,
}

impl<'a> PortReadings<'a> {
    /// Adds a block read after the others.
    fn push(&mut self, at: SectionRef<'a>, span: LineSpan, counters: &'a Counters) {
        self.blocks.push(PortBlock { at, span, counters });
    }

    /// The latest reading of the counter `key` names: a typed id
    /// ([`IbCounter`](crate::model::IbCounter), [`KnownCounter`], found
    /// without comparing names) or a name.
    #[must_use]
    pub fn get<K: CounterKey>(&self, key: K) -> Option<Reading<'a>> {
        self.blocks.iter().rev().find_map(|b| {
            b.counters.get(&key).map(|counter| Reading {
                counter: *counter,
                at: b.at,
                span: b.span,
            })
        })
    }

    /// Whether any reading of the port, latest or not, is saturated: a
    /// port with none (most) has no latest reading that is, and a rule
    /// after those passes it by without looking its counters up one by
    /// one.
    pub(crate) fn any_saturated(&self) -> bool {
        self.blocks
            .iter()
            .any(|b| b.counters.values().any(|c| c.saturated))
    }

    /// Whether no counter was read.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.blocks.iter().all(|b| b.counters.is_empty())
    }

    /// How many counters were read.
    #[must_use]
    pub fn len(&self) -> usize {
        self.merged().len()
    }

    /// Every counter's name and latest reading, in name order.
    pub fn iter(&self) -> impl Iterator<Item = (&'a str, &Reading<'a>)> + '_ {
        self.merged().iter().map(|(n, r)| (*n, r))
    }

    /// Every reading of every block in reading order, the last of each
    /// counter kept, in name order ([`latest_by_id`]).
    fn merged(&self) -> &[(&'a str, Reading<'a>)] {
        self.merged.get_or_init(|| {
            let readings = self
                .blocks
                .iter()
                .flat_map(|b| {
                    b.counters.iter().map(move |(id, counter)| {
                        let reading = Reading {
                            counter: *counter,
                            at: b.at,
                            span: b.span,
                        };
                        (id, reading)
                    })
                })
                .collect();
            latest_by_id(readings)
        })
    }
}

/// The device a sysfs counter block names (its path's), unless the paste
/// did not show it (relative paths without a prompt).
fn sysfs_device(block: &crate::model::perfquery::PerfBlock) -> Option<&str> {
    let unknown = block.partial.as_ref().is_some_and(|p| {
        p.reason == crate::model::partial::PartialReason::NoHeader
            && p.missing.iter().any(|m| m == "device")
    });
    (!unknown).then_some(block.port_id.as_str())
}

impl PerfPortRef<'_> {
    /// The subject of a finding about this port.
    #[must_use]
    pub fn subject(&self) -> super::Subject {
        super::Subject {
            host: self.host.name().map(str::to_owned),
            device: self.device.map(str::to_owned),
            port: self.port.filter(|_| !self.all_ports),
            lid: self.lid,
            guid: self.guid,
            ..super::Subject::default()
        }
    }

    /// `mlx5_0 port 1 LID 12`, `LID 12 port 1`, `LID 12 (sum over all
    /// ports)`: the subject as findings describe it (perfquery -a's port
    /// 255 is a sum, no port).
    #[must_use]
    pub fn describe(&self) -> String {
        let s = self.subject().describe();
        if self.all_ports {
            format!("{s} (sum over all ports)")
        } else {
            s
        }
    }
}

/// What the NVLink tools said about one GPU, latest reading first.
#[derive(Debug, Clone)]
pub struct NvGpuRef<'a> {
    /// Host.
    pub host: HostKey<'a>,
    /// GPU index.
    pub index: u32,
    /// Product name as printed (`NVIDIA H200`).
    pub name: &'a str,
    /// UUID.
    pub uuid: Option<&'a str>,
    /// Set when the latest `-s` said every link is inactive: where it said so.
    pub all_inactive: Option<(SectionRef<'a>, LineSpan)>,
    /// Latest `-s` reading per link (speed or `<inactive>`).
    pub status: BTreeMap<u32, (SectionRef<'a>, &'a NvlinkLink)>,
    /// Every link record with counters (`-e`, `-gt`), with where it was
    /// read: [`counters`](Self::counters) keeps the
    /// latest reading of each counter. A GPU has hundreds of readings and
    /// the rules read a few counters of them: readings are made only for
    /// those asked for ([`latest_of`](Self::latest_of)), and the map of all
    /// only when asked for.
    /// Kept in link order (stably: each link's records in reading order),
    /// which [`latest_of`](Self::latest_of) reads a link at a time.
    counter_links: Vec<(SectionRef<'a>, &'a NvlinkLink)>,
    /// [`counters`](Self::counters), built once when first asked for.
    counters: OnceCell<BTreeMap<(u32, &'a str), Reading<'a>>>,
    /// Latest `-ec` reading per link.
    pub lanes: BTreeMap<u32, (SectionRef<'a>, &'a NvlinkLink)>,
    /// Set when the `-s` listing of this GPU looks cut: fewer links than
    /// another listing of the same product on the host, or than the
    /// product has link slots. Its link count is then unknown.
    pub listing_cut: Option<Partial>,
    /// Where the listing stops at this GPU's header: the last block of an
    /// nvlink listing that the input ends in is the header alone, while
    /// GPUs before it show their lines (the paste was cut right after the
    /// header, or inside it). Its links are unknown, none is judged.
    pub cut_at_header: Option<SectionRef<'a>>,
    /// True for link lines pasted without their `GPU N:` header: the GPU
    /// is unknown (`index` says nothing, `name` is empty), and each such
    /// block is a GPU of its own, never merged with a numbered one.
    pub headerless: bool,
}

/// One NVLink counter reading, keyed by link and counter name.
type CounterReading<'a> = ((u32, &'a str), Reading<'a>);

/// A counter of a link record: the record, where it was read, the
/// counter's id and value.
type LinkCounter<'a> = (
    SectionRef<'a>,
    &'a NvlinkLink,
    &'a crate::model::CounterId,
    &'a Counter,
);

impl<'a> NvGpuRef<'a> {
    /// Latest reading per link and counter (`-e`, `-gt`).
    #[must_use]
    pub fn counters(&self) -> &BTreeMap<(u32, &'a str), Reading<'a>> {
        self.counters.get_or_init(|| {
            latest_per_key(
                self.link_counters()
                    .map(|(at, link, id, counter)| {
                        ((link.link, id.name()), reading(at, link, counter))
                    })
                    .collect(),
            )
        })
    }

    /// Every counter of every link record, in reading order.
    fn link_counters(&self) -> impl Iterator<Item = LinkCounter<'a>> + '_ {
        self.counter_links.iter().flat_map(|&(at, link)| {
            link.counters
                .iter()
                .map(move |(id, counter)| (at, link, id, counter))
        })
    }

    /// The latest reading of each link's `counters`, in (link, name)
    /// order: [`counters`](Self::counters) with only those counters,
    /// without building the map of every counter. The link records are
    /// kept by link number, so each link's latest reading of a counter is
    /// its last record holding it, found by id in one pass over each link's records.
    #[must_use]
    pub fn latest_of(&self, counters: &[KnownCounter]) -> Vec<CounterReading<'a>> {
        let mut out = Vec::new();
        self.each_latest(counters, |link, name, r| out.push(((link, name), r)));
        out
    }

    /// [`latest_of`](Self::latest_of) a reading at a time, in the same
    /// order, to `f` (link, counter name, reading): for rules that keep
    /// few of them (a GPU's error counters are mostly zero).
    pub(crate) fn each_latest(
        &self,
        counters: &[KnownCounter],
        mut f: impl FnMut(u32, &'static str, Reading<'a>),
    ) {
        latest_by_link(&self.counter_links, counters, |at, link, id, counter| {
            f(link.link, id.name(), reading(at, link, counter));
        });
    }
}

/// For each link of `records` (link records in link order, each link's in
/// reading order) and each of `counters` in name order, the last record of
/// the link holding the counter, with the counter's reading: the latest
/// reading of each (link, counter), in (link, name) order. A link has a
/// record or two (`-e`, `-gt`) of a few counters each: one pass over them,
/// comparing ids, keeps the last reading of each wanted counter, with no
/// sort and no name compared. Each is given to `f` in turn.
fn latest_by_link<'r, T: Copy>(
    records: &[(T, &'r NvlinkLink)],
    counters: &[KnownCounter],
    mut f: impl FnMut(T, &'r NvlinkLink, KnownCounter, &'r Counter),
) {
    // Known ids order as their names: sorted, `wanted` is in name order.
    let mut wanted: Vec<KnownCounter> = counters.to_vec();
    wanted.sort_unstable();
    wanted.dedup();
    let mut latest: Vec<Option<(T, &'r NvlinkLink, &'r Counter)>> = vec![None; wanted.len()];
    for link in records.chunk_by(|a, b| a.1.link == b.1.link) {
        latest.fill(None);
        for &(at, l) in link {
            // A record's known counters are in id order too: one cursor
            // walks `wanted` alongside them (a merge), no search.
            let mut next = 0;
            for (id, counter) in l.counters.iter() {
                let slot = match id.known() {
                    Some(k) => {
                        while wanted.get(next).is_some_and(|w| *w < k) {
                            next += 1;
                        }
                        (wanted.get(next) == Some(&k)).then_some(next)
                    }
                    // Never a name the tables know (`CounterId::from_name`);
                    // compared by name all the same.
                    None => wanted.iter().position(|w| w.name() == id.name()),
                };
                if let Some(slot) = slot.and_then(|i| latest.get_mut(i)) {
                    *slot = Some((at, l, counter));
                }
            }
        }
        for (&k, r) in wanted.iter().zip(&latest) {
            if let Some((at, l, c)) = *r {
                f(at, l, k, c);
            }
        }
    }
}

/// The counters asked for, each with its name's place among theirs in
/// byte order: a reading ordered by that place is ordered as by its name,
/// without comparing names. The way [`NvGpuRef::latest_of`] went before
/// its records were kept by link: the tests' oracle.
#[cfg(test)]
struct Wanted<'c> {
    counters: &'c [KnownCounter],
    /// The wanted names, in byte order, once each.
    names: Vec<&'static str>,
    /// The place of each of `counters`' names in `names`.
    ranks: Vec<usize>,
}

#[cfg(test)]
impl<'c> Wanted<'c> {
    fn new(counters: &'c [KnownCounter]) -> Self {
        let mut names: Vec<&'static str> = counters.iter().map(|c| c.name()).collect();
        names.sort_unstable();
        names.dedup();
        let ranks = counters
            .iter()
            .map(|c| names.binary_search(&c.name()).unwrap_or(usize::MAX))
            .collect();
        Self {
            counters,
            names,
            ranks,
        }
    }

    /// The place of `id`'s name among the wanted names; `None` for a
    /// counter not asked for.
    fn rank(&self, id: &crate::model::CounterId) -> Option<usize> {
        match id.known() {
            Some(k) => self
                .counters
                .iter()
                .position(|c| *c == k)
                .and_then(|i| self.ranks.get(i).copied()),
            // A name the tables do not know is never one of theirs
            // (`CounterId::from_name`); compared by name all the same.
            None => self.names.binary_search(&id.name()).ok(),
        }
    }
}

/// The last of each (link, rank) among `kept` (in reading order), in
/// (link, rank) order.
#[cfg(test)]
fn latest_ranked<T>(kept: Vec<(u32, usize, T)>) -> Vec<T> {
    let keyed = kept
        .into_iter()
        .map(|(link, rank, t)| ((link, rank), t))
        .collect();
    latest_in_key_order(keyed)
        .into_iter()
        .map(|(_, t)| t)
        .collect()
}

/// The reading of `counter` in `link`, read at `at`.
fn reading<'a>(at: SectionRef<'a>, link: &'a NvlinkLink, counter: &Counter) -> Reading<'a> {
    Reading {
        counter: *counter,
        at,
        span: link.span,
    }
}

impl NvGpuRef<'_> {
    /// The subject of a finding about this GPU (add `link` as needed); an
    /// unknown GPU is said to be unknown, not given an index.
    #[must_use]
    pub fn subject(&self) -> super::Subject {
        super::Subject {
            host: self.host.name().map(str::to_owned),
            gpu: (!self.headerless).then_some(self.index),
            gpu_uuid: self.uuid.map(str::to_owned),
            gpu_unknown: self.headerless,
            ..super::Subject::default()
        }
    }

    /// `GPU 3`, or `unknown GPU` for link lines pasted without a header.
    #[must_use]
    pub fn label(&self) -> String {
        if self.headerless {
            "unknown GPU".to_owned()
        } else {
            format!("GPU {}", self.index)
        }
    }

    /// Links `-s` showed with a speed.
    #[must_use]
    pub fn active_count(&self) -> usize {
        self.status
            .values()
            .filter(|(_, l)| l.speed_gb_per_s.is_some())
            .count()
    }
}

/// Everything a rule may read.
#[derive(Debug, Clone)]
pub struct Context<'a> {
    /// The documents analysed together.
    pub documents: &'a [Document],
    /// Counter limits in force.
    pub thresholds: &'a Thresholds,
    /// Rates, BER, outliers and balance computed by [`crate::stats`].
    pub measurements: &'a Measurements,
    /// [`Context::perf_ports`], built once: a dozen counter rules read it.
    perf_ports: OnceCell<Vec<PerfPortRef<'a>>>,
    /// [`Context::port_index`], built once.
    port_index: OnceCell<PortIndex<'a>>,
    /// [`Context::link_capacity`]'s index, built once.
    capacities: OnceCell<CapacityIndex<'a>>,
    /// [`Context::rate_between`]'s index, built once.
    rates: OnceCell<RateIndex<'a>>,
    /// [`Context::nvlink_gpus`], built once: seven NVLink and topology
    /// rules read it (rebuilding it for each was a twentieth of a fleet run).
    nvlink_gpus: OnceCell<Vec<NvGpuRef<'a>>>,
    /// [`Context::latest_ib_ports`], built once: six port, rail and fleet
    /// rules read it.
    latest_ib_ports: OnceCell<Vec<IbPortRef<'a>>>,
    /// [`Context::latest_adapters`], built once.
    latest_adapters: OnceCell<Vec<AdapterRef<'a>>>,
    /// [`Context::topo_matrices`], built once.
    topo_matrices: OnceCell<Vec<(SectionRef<'a>, &'a TopoMatrix)>>,
    /// [`Context::ends_input`]'s last output line of each document, found
    /// once: asked of every section, a walk of the document each time was
    /// quadratic (half of a 1,000-host paste's run).
    last_output_lines: OnceCell<Vec<usize>>,
}

/// The last line of `doc` that is output: of a section, an unrecognised
/// range or a tool message (a last word set aside as possibly cut is not
/// output).
fn last_output_line(doc: &Document) -> usize {
    doc.sections
        .iter()
        .map(|s| s.span.last_line)
        .chain(
            doc.unrecognised
                .iter()
                .filter(|u| !u.reason.starts_with(crate::input::CUT_WORD))
                .map(|u| u.span.last_line),
        )
        .chain(doc.messages.iter().map(|m| m.line))
        .max()
        .unwrap_or(0)
}

/// The last GPU of an nvlink listing when it is its header alone
/// ([`NvlinkGpu::header_only`]) below a GPU that shows its lines: if the
/// input ends there, the paste was cut after (or inside) that header. A
/// listing of headers only (`-cBridge`, or GPUs without NVLink) is whole,
/// and so is a bare header in the middle of a listing: nvidia-smi prints
/// that for a GPU without NVLink.
///
/// [`NvlinkGpu::header_only`]: crate::model::nvlink::NvlinkGpu::header_only
fn header_cut_off(nv: &crate::model::nvlink::Nvlink) -> Option<&crate::model::nvlink::NvlinkGpu> {
    let (last, before) = nv.gpus.split_last()?;
    (last.header_only() && before.iter().any(|g| !g.header_only())).then_some(last)
}

/// Link speeds by what finds them: (LID, port) for fabric-wide ones,
/// (host, device, port) for a host's adapters. Values are positions in
/// [`Measurements::link_capacities`], so the first match wins as before.
/// Hashed with `FxHash`: the default SipHash was most of a look-up.
#[derive(Debug, Clone, Default)]
struct CapacityIndex<'a> {
    by_lid: FxHashMap<(u32, u32), usize>,
    by_device: FxHashMap<(Option<&'a str>, &'a str, u32), usize>,
}

/// Counter rates by (subject, counter, from, to): the first of each.
type RateIndex<'a> = FxHashMap<(&'a crate::stats::Subject, &'a str, usize, usize), &'a CounterRate>;

impl<'a> Context<'a> {
    /// A context over `documents` judged against `thresholds`.
    #[must_use]
    pub fn new(
        documents: &'a [Document],
        thresholds: &'a Thresholds,
        measurements: &'a Measurements,
    ) -> Self {
        Self {
            documents,
            thresholds,
            measurements,
            perf_ports: OnceCell::new(),
            port_index: OnceCell::new(),
            capacities: OnceCell::new(),
            rates: OnceCell::new(),
            nvlink_gpus: OnceCell::new(),
            latest_ib_ports: OnceCell::new(),
            latest_adapters: OnceCell::new(),
            topo_matrices: OnceCell::new(),
            last_output_lines: OnceCell::new(),
        }
    }

    /// The data rate of an InfiniBand port (not an NVLink): by its LID
    /// (fabric-wide speeds) or its host, device and port, whichever was
    /// read first. Indexed once: counter rules ask for every rate.
    #[must_use]
    pub fn link_capacity(&self, s: &crate::stats::Subject) -> Option<&'a LinkCapacity> {
        let port = s.port?;
        let caps = &self.measurements.link_capacities;
        let index = self.capacities.get_or_init(|| {
            let mut index = CapacityIndex::default();
            for (i, c) in caps.iter().enumerate() {
                let k = &c.subject;
                let Some(p) = k.port.filter(|_| k.gpu.is_none()) else {
                    continue;
                };
                if let (Some(lid), None) = (k.lid, &k.host) {
                    index.by_lid.entry((lid, p)).or_insert(i);
                }
                if let Some(device) = k.device.as_deref() {
                    index
                        .by_device
                        .entry((k.host.as_deref(), device, p))
                        .or_insert(i);
                }
            }
            index
        });
        let by_lid = s.lid.and_then(|lid| index.by_lid.get(&(lid, port)));
        let by_device = s
            .device
            .as_deref()
            .and_then(|d| index.by_device.get(&(s.host.as_deref(), d, port)));
        let first = match (by_lid, by_device) {
            (Some(a), Some(b)) => Some(*a.min(b)),
            (a, b) => a.or(b).copied(),
        };
        first.and_then(|i| caps.get(i))
    }

    /// The rate of `counter` of `subject` between two snapshots, if measured.
    #[must_use]
    pub fn rate_between(
        &self,
        subject: &crate::stats::Subject,
        counter: &str,
        from: usize,
        to: usize,
    ) -> Option<&'a CounterRate> {
        let rates = &self.measurements.counter_rates;
        let index = self.rates.get_or_init(|| {
            let mut index = RateIndex::default();
            for r in rates {
                index
                    .entry((&r.subject, &*r.counter, r.from_snapshot, r.to_snapshot))
                    .or_insert(r);
            }
            index
        });
        index.get(&(subject, counter, from, to)).copied()
    }

    /// The file a measured snapshot came from.
    #[must_use]
    pub fn snapshot_file(&self, snapshot: usize) -> Option<&'a str> {
        self.measurements
            .snapshots
            .get(snapshot)
            .and_then(|s| s.file.as_deref())
    }

    /// Evidence for a measured rate: both readings and how the rate was derived.
    #[must_use]
    pub fn rate_evidence(&self, rate: &CounterRate) -> Vec<super::Evidence> {
        let [before, after] = rate.lines;
        vec![
            super::Evidence::new(
                format!("{} = {} (first snapshot)", rate.counter, rate.before),
                before,
                self.snapshot_file(rate.from_snapshot),
            ),
            super::Evidence::new(
                format!(
                    "{} = {} (later snapshot); {}",
                    rate.counter, rate.after, rate.derivation
                ),
                after,
                self.snapshot_file(rate.to_snapshot),
            ),
        ]
    }

    /// The one index of the input's ports by LID and GUID (see
    /// [`PortIndex`]): statistics name perfquery's ports with the same one.
    #[must_use]
    pub fn port_index(&self) -> &PortIndex<'a> {
        self.port_index
            .get_or_init(|| PortIndex::of_documents(self.documents))
    }

    /// The latest counters `perfquery` printed per port, with the adapter
    /// name when an `ibstat`-like section maps the LID to one.
    #[must_use]
    pub fn perf_ports(&self) -> &[PerfPortRef<'a>] {
        self.perf_ports.get_or_init(|| self.build_perf_ports())
    }

    fn build_perf_ports(&self) -> Vec<PerfPortRef<'a>> {
        // The same index statistics name their LID-named ports with.
        let index = self.port_index();
        type PortKey<'k> = (
            HostKey<'k>,
            Option<u32>,
            Option<u32>,
            bool,
            &'k str,
            Option<Guid>,
        );
        // Each port's blocks are gathered in reading order ([`PortReadings`]).
        let mut ports: BTreeMap<PortKey<'a>, PerfPortRef<'a>> = BTreeMap::new();
        for at in self.sections() {
            if let SectionData::Ibqueryerrors(iq) = &at.section.data {
                for node in &iq.nodes {
                    for p in &node.ports {
                        let lid = p.link.as_ref().map(|l| l.lid);
                        // ibqueryerrors walks the whole fabric: the port is
                        // not on the host that ran it, so it gets no host.
                        let key = (
                            HostKey::Fabric,
                            lid,
                            Some(p.port),
                            p.all_ports,
                            node.desc.as_str(),
                            Some(p.guid),
                        );
                        let port = ports.entry(key).or_insert_with(|| PerfPortRef {
                            host: HostKey::Fabric,
                            lid,
                            port: Some(p.port),
                            all_ports: p.all_ports,
                            // A port line pasted without its node header
                            // names no node: none is invented.
                            device: (!node.headerless).then_some(node.desc.as_str()),
                            guid: Some(p.guid),
                            counters: PortReadings::default(),
                        });
                        port.counters.push(at, p.span, &p.counters);
                    }
                }
                continue;
            }
            // ibdiagnet2.pm, like ibqueryerrors, holds the whole fabric's
            // ports: they get no host, and are named by their Port Name and
            // GUID.
            if let SectionData::IbdiagnetPm(pq) = &at.section.data {
                for block in &pq.blocks {
                    if !matches!(
                        block.attribute,
                        PerfAttribute::PortCounters | PerfAttribute::PortCountersExtended
                    ) {
                        continue;
                    }
                    let guid = block.fields.get("GUID").and_then(|g| Guid::parse(g));
                    let headed = block.lid.is_some() || block.port.is_some();
                    let key = (
                        HostKey::Fabric,
                        block.lid,
                        block.port,
                        false,
                        block.port_id.as_str(),
                        guid,
                    );
                    let port = ports.entry(key).or_insert_with(|| PerfPortRef {
                        host: HostKey::Fabric,
                        lid: block.lid,
                        port: block.port,
                        all_ports: false,
                        // A block pasted without its header names no port:
                        // none is invented.
                        device: headed.then_some(block.port_id.as_str()),
                        guid,
                        counters: PortReadings::default(),
                    });
                    port.counters.push(at, block.span, &block.counters);
                }
                continue;
            }
            // sysfs counter files are PortCounters read by the kernel,
            // named by device and port instead of LID; node_exporter's
            // metrics are the same files.
            let (pqs, sysfs): (Vec<&Perfquery>, bool) = match &at.section.data {
                SectionData::Perfquery(pq) => (vec![pq], false),
                SectionData::SysfsCounters(pq) => (vec![pq], true),
                SectionData::NodeExporter(m) => {
                    (m.scrapes.iter().map(|s| &s.counters).collect(), true)
                }
                _ => continue,
            };
            for block in pqs.into_iter().flat_map(|pq| &pq.blocks) {
                if !matches!(
                    block.attribute,
                    PerfAttribute::PortCounters | PerfAttribute::PortCountersExtended
                ) {
                    continue;
                }
                let all_ports = block.all_ports || block.port == Some(255);
                // Directed-route queries have no LID: key them by their path.
                let path = if block.lid.is_none() {
                    block.port_id.as_str()
                } else {
                    ""
                };
                // A LID that is not one of the host's own ports (when the
                // host's ports are known) was queried across the fabric.
                let named = at.host().name();
                let host = match block.lid {
                    Some(lid)
                        if index.knows_lids_of(named) && index.by_lid(named, lid).is_none() =>
                    {
                        HostKey::Fabric
                    }
                    _ => at.host(),
                };
                let key = (host, block.lid, block.port, all_ports, path, None);
                let port = ports.entry(key).or_insert_with(|| PerfPortRef {
                    host,
                    lid: block.lid,
                    port: block.port,
                    all_ports,
                    device: if sysfs {
                        sysfs_device(block)
                    } else {
                        block
                            .lid
                            .and_then(|l| index.by_lid(named, l))
                            .map(|owner| owner.device)
                    },
                    guid: None,
                    counters: PortReadings::default(),
                });
                port.counters.push(at, block.span, &block.counters);
            }
        }
        // ibqueryerrors prints a switch's `port ALL` aggregate (read with
        // AllPortSelect) before the ports that make it up: where those are
        // listed too, the aggregate repeats their counts, and judging it
        // as well made the switch's one fault two, led by "(all ports)".
        let listed: BTreeSet<(&str, Guid)> = ports
            .keys()
            .filter(|k| !k.3)
            .filter_map(|k| Some((k.4, k.5?)))
            .collect();
        ports.retain(|k, _| !(k.3 && k.5.is_some_and(|g| listed.contains(&(k.4, g)))));
        ports.into_values().collect()
    }

    /// What `nvidia-smi nvlink` said about each GPU, per host, merging every
    /// mode and keeping the latest reading of each link.
    #[must_use]
    pub fn nvlink_gpus(&self) -> &[NvGpuRef<'a>] {
        self.nvlink_gpus.get_or_init(|| self.build_nvlink_gpus())
    }

    fn build_nvlink_gpus(&self) -> Vec<NvGpuRef<'a>> {
        // Headerless blocks are keyed by where they were read, so that
        // they never merge with a numbered GPU or with each other. GPUs of
        // one number whose UUIDs differ are two machines' GPUs under one
        // host name (a loop over hosts pasted without a heading we read):
        // each UUID is a GPU of its own (the last number of the key), so
        // that the next machine's links never hide this one's.
        type Numbered<'k> = (HostKey<'k>, u32, Option<(usize, usize)>);
        type GpuKey<'k> = (HostKey<'k>, u32, Option<(usize, usize)>, usize);
        let mut gpus: BTreeMap<GpuKey<'a>, NvGpuRef<'a>> = BTreeMap::new();
        // The UUID of each GPU of a number, in the order they came.
        let mut uuids: BTreeMap<Numbered<'a>, Vec<Option<&'a str>>> = BTreeMap::new();
        for at in self.sections() {
            let SectionData::Nvlink(nv) = &at.section.data else {
                continue;
            };
            let cut_header = header_cut_off(nv).filter(|_| self.ends_input_mid_output(at));
            for gpu in &nv.gpus {
                let place = gpu.headerless.then_some((at.doc, gpu.span.first_line));
                let uuid = gpu.uuid.as_deref();
                let seen = uuids.entry((at.host(), gpu.index, place)).or_default();
                let slot = match seen
                    .iter()
                    .rposition(|u| u.is_none() || uuid.is_none() || *u == uuid)
                {
                    Some(slot) => slot,
                    None => {
                        seen.push(uuid);
                        seen.len() - 1
                    }
                };
                if let Some(known) = seen.get_mut(slot) {
                    *known = known.or(uuid);
                }
                let entry = gpus
                    .entry((at.host(), gpu.index, place, slot))
                    .or_insert_with(|| NvGpuRef {
                        headerless: gpu.headerless,
                        host: at.host(),
                        index: gpu.index,
                        name: &gpu.name,
                        uuid: gpu.uuid.as_deref(),
                        all_inactive: None,
                        status: BTreeMap::new(),
                        counter_links: Vec::new(),
                        counters: OnceCell::new(),
                        lanes: BTreeMap::new(),
                        listing_cut: None,
                        cut_at_header: None,
                    });
                entry.uuid = entry.uuid.or(uuid);
                if cut_header.is_some_and(|cut| std::ptr::eq(cut, gpu)) {
                    entry.cut_at_header = Some(at);
                    entry.listing_cut = Some(Partial::new(
                        crate::model::partial::PartialReason::MissingFields,
                        vec!["its links: the input ends at its header".to_owned()],
                        gpu.span.last_line,
                    ));
                }
                if gpu.all_links_inactive {
                    entry.all_inactive = Some((at, gpu.span));
                    entry.status.clear();
                }
                // Most sections give every link counters (`-e`, `-gt`): room
                // for them at once, not grown link by link.
                if gpu.links.first().is_some_and(|l| !l.counters.is_empty()) {
                    entry.counter_links.reserve(gpu.links.len());
                }
                for link in &gpu.links {
                    if link.speed_gb_per_s.is_some() || link.inactive {
                        if link.speed_gb_per_s.is_some() {
                            entry.all_inactive = None;
                        }
                        entry.status.insert(link.link, (at, link));
                    }
                    if !link.counters.is_empty() {
                        entry.counter_links.push((at, link));
                    }
                    if !link.lanes().is_empty() {
                        entry.lanes.insert(link.link, (at, link));
                    }
                }
            }
        }
        let mut gpus: Vec<NvGpuRef<'a>> = gpus.into_values().collect();
        for g in &mut gpus {
            // Stable: a link's records stay in reading order.
            g.counter_links.sort_by_key(|(_, l)| l.link);
        }
        let mut longest: BTreeMap<(HostKey<'a>, &'a str), usize> = BTreeMap::new();
        for g in &gpus {
            let e = longest.entry((g.host, g.name)).or_default();
            *e = (*e).max(g.status.len());
        }
        for g in &mut gpus {
            if g.all_inactive.is_some() || g.status.is_empty() || g.listing_cut.is_some() {
                continue;
            }
            let slots = crate::kb::gpu_nvlink_expectation(g.name)
                .and_then(|k| k.link_slots)
                .map_or(0, |n| n as usize);
            let expected = longest
                .get(&(g.host, g.name))
                .copied()
                .unwrap_or(0)
                .max(slots);
            let listed = g.status.len();
            if listed < expected {
                let last = g.status.values().map(|(_, l)| l.span.last_line).max();
                // The numbers below the expected count that the listing
                // lacks (`Link 0`, `[...]`, `Link 17`: links 1–16), else
                // what comes after its last.
                let expected_numbers = u32::try_from(expected).unwrap_or(u32::MAX);
                let absent: Vec<u32> = (0..expected_numbers)
                    .filter(|n| !g.status.contains_key(n))
                    .collect();
                let missing = if absent.is_empty() {
                    g.status
                        .keys()
                        .max()
                        .map_or_else(Vec::new, |n| vec![format!("links after Link {n}")])
                } else {
                    vec![format!("links {}", number_ranges(&absent))]
                };
                g.listing_cut = Some(Partial::new(
                    crate::model::partial::PartialReason::MissingFields,
                    missing,
                    last.unwrap_or(0),
                ));
            }
        }
        gpus
    }

    /// The latest `nvidia-smi topo -m` matrix of each host.
    ///
    /// Built once: five topology and rail rules read it.
    #[must_use]
    pub fn topo_matrices(&self) -> &[(SectionRef<'a>, &'a TopoMatrix)] {
        self.topo_matrices
            .get_or_init(|| self.build_topo_matrices())
    }

    fn build_topo_matrices(&self) -> Vec<(SectionRef<'a>, &'a TopoMatrix)> {
        let mut latest: BTreeMap<HostKey<'a>, (SectionRef<'a>, &'a TopoMatrix)> = BTreeMap::new();
        for at in self.sections() {
            if let SectionData::TopoMatrix(m) = &at.section.data {
                if m.gpus().next().is_some() {
                    latest.insert(at.host(), (at, m));
                }
            }
        }
        latest.into_values().collect()
    }

    /// The latest `nvidia-smi -q` record of each GPU (by host and bus id).
    #[must_use]
    pub fn smi_gpus(&self) -> Vec<(SectionRef<'a>, &'a QueryGpu)> {
        // A fragment without its GPU heading is a GPU of its own, keyed
        // by where it was read: never merged with another.
        type Key<'k> = (HostKey<'k>, &'k str, Option<(usize, usize)>);
        let mut latest: BTreeMap<Key<'a>, (SectionRef<'a>, &'a QueryGpu)> = BTreeMap::new();
        for at in self.sections() {
            if let SectionData::SmiQuery(q) = &at.section.data {
                for gpu in &q.gpus {
                    let place = gpu.headerless.then_some((at.doc, gpu.span.first_line));
                    latest.insert((at.host(), gpu.bus_id.as_str(), place), (at, gpu));
                }
            }
        }
        latest.into_values().collect()
    }

    /// Whether the section holds the last line of its input: no other
    /// output follows it, so the paste may have been cut inside it even
    /// where every block it shows is whole. Framing lines after it (a
    /// prompt, an empty `host: ` prefix, a fence) do not count: a paste can
    /// be cut and end with any of them.
    #[must_use]
    pub fn ends_input(&self, at: SectionRef<'_>) -> bool {
        let lasts = self
            .last_output_lines
            .get_or_init(|| self.documents.iter().map(last_output_line).collect());
        lasts
            .get(at.doc)
            .is_some_and(|&last| at.section.span.last_line >= last)
    }

    /// Whether the input ends in the section `at` ([`Self::ends_input`])
    /// without a shell prompt after it: the paste stops where the output
    /// stops, and nothing says the tool had finished. (A prompt after the
    /// output, even one that ran nothing, is the shell's sign that it had.)
    #[must_use]
    pub fn ends_input_mid_output(&self, at: SectionRef<'_>) -> bool {
        self.ends_input(at)
            && self
                .documents
                .get(at.doc)
                .and_then(|d| d.last_prompt)
                .is_none_or(|prompt| prompt <= at.section.span.last_line)
    }

    /// Every section of every document.
    pub fn sections(&self) -> impl Iterator<Item = SectionRef<'a>> + 'a {
        self.documents.iter().enumerate().flat_map(|(doc, d)| {
            d.sections
                .iter()
                .map(move |section| SectionRef { doc, section })
        })
    }

    /// Every InfiniBand port read from `ibstat`, `ibstatus`, `rdma link`
    /// or `ibv_devinfo`, in input order. When the same port of the same host
    /// appears in several snapshots, each is listed.
    #[must_use]
    pub fn ib_ports(&self) -> Vec<IbPortRef<'a>> {
        let mut out = Vec::new();
        // Header-less ports read so far, per host.
        let mut headerless: BTreeMap<HostKey<'a>, u32> = BTreeMap::new();
        for at in self.sections() {
            let first_of_section = out.len();
            match &at.section.data {
                SectionData::Ibstat(ibstat) => {
                    // In input order: header-less ports stand before the
                    // first `CA '…'` line, or after a CA's port block
                    // (fields appended below a whole listing).
                    let mut headerless_ports = ibstat.headerless_ports.iter().peekable();
                    for ca in &ibstat.cas {
                        for port in &ca.ports {
                            while let Some(h) = headerless_ports
                                .next_if(|h| h.span.first_line < port.span.first_line)
                            {
                                let mut p = from_ibstat(at, None, h);
                                p.headerless = Some(next_headerless(&mut headerless, at));
                                out.push(p);
                            }
                            out.push(from_ibstat(at, Some(ca), port));
                        }
                    }
                    for h in headerless_ports {
                        let mut p = from_ibstat(at, None, h);
                        p.headerless = Some(next_headerless(&mut headerless, at));
                        out.push(p);
                    }
                }
                SectionData::Ibstatus(ibstatus) => {
                    // In input order, as for ibstat.
                    let mut headerless_ports = ibstatus.headerless_ports.iter().peekable();
                    for port in &ibstatus.ports {
                        while let Some(h) =
                            headerless_ports.next_if(|h| h.span.first_line < port.span.first_line)
                        {
                            let mut p = from_ibstatus(at, h);
                            p.headerless = Some(next_headerless(&mut headerless, at));
                            out.push(p);
                        }
                        out.push(from_ibstatus(at, port));
                    }
                    for h in headerless_ports {
                        let mut p = from_ibstatus(at, h);
                        p.headerless = Some(next_headerless(&mut headerless, at));
                        out.push(p);
                    }
                }
                SectionData::NodeExporter(m) => {
                    for scrape in &m.scrapes {
                        for port in &scrape.ports {
                            let ca_type = scrape
                                .adapters
                                .iter()
                                .find(|a| a.device == port.device)
                                .and_then(|a| a.hca_type.clone());
                            out.push(IbPortRef {
                                at,
                                device: &port.device,
                                ca_type,
                                number: port.port,
                                state: port.state,
                                physical_state: port.physical_state,
                                rate_gbps: port.rate_gbps,
                                width_lanes: None,
                                fdr10: false,
                                base_lid: None,
                                sm_lid: None,
                                link_layer: None,
                                port_guid: None,
                                adapter_guid: None,
                                span: port.span,
                                partial: false,
                                headerless: None,
                                link_layer_from: None,
                            });
                        }
                    }
                }
                SectionData::RdmaLink(rdma) => {
                    for port in &rdma.ports {
                        out.push(IbPortRef {
                            at,
                            device: &port.device,
                            ca_type: None,
                            number: port.port,
                            state: port.state,
                            physical_state: port.physical_state,
                            rate_gbps: None,
                            width_lanes: None,
                            fdr10: false,
                            base_lid: port.lid,
                            sm_lid: port.sm_lid,
                            link_layer: port.link_layer(),
                            port_guid: None,
                            adapter_guid: None,
                            span: port.span,
                            partial: false,
                            headerless: None,
                            link_layer_from: None,
                        });
                    }
                }
                // Only `-v` prints the port's state; `(Up)`/`(Down)` is
                // the interface's carrier and says nothing of the port.
                SectionData::Ibdev2netdev(map) => {
                    for port in map.ports.iter().filter(|p| p.port_state.is_some()) {
                        out.push(IbPortRef {
                            at,
                            device: &port.device,
                            ca_type: port.ca_type.clone(),
                            number: port.port,
                            state: port.port_state,
                            physical_state: None,
                            rate_gbps: None,
                            width_lanes: None,
                            fdr10: false,
                            base_lid: None,
                            sm_lid: None,
                            link_layer: Some(port.link_layer()),
                            port_guid: None,
                            adapter_guid: None,
                            span: port.span,
                            partial: false,
                            headerless: None,
                            link_layer_from: None,
                        });
                    }
                }
                SectionData::IbvDevinfo(devinfo) => {
                    for dev in &devinfo.devices {
                        // A port the paste begins inside names neither its
                        // device nor its number: nothing tells it from
                        // another port, so it is not judged (IN001 says so).
                        for port in dev.ports.iter().filter(|p| p.number_known()) {
                            out.push(IbPortRef {
                                at,
                                device: &dev.hca_id,
                                ca_type: dev.vendor_part_id.map(|id| format!("MT{id}")),
                                number: port.number,
                                state: port.state,
                                physical_state: port.phys_state,
                                rate_gbps: port.rate_gbps(),
                                width_lanes: port.active_width_lanes,
                                fdr10: false,
                                base_lid: port.port_lid,
                                sm_lid: port.sm_lid,
                                link_layer: port.link_layer,
                                port_guid: None,
                                adapter_guid: dev.node_guid,
                                span: port.span,
                                partial: dev.port_is_partial(port),
                                headerless: None,
                                link_layer_from: None,
                            });
                        }
                    }
                }
                _ => {}
            }
            if let Some(section_ports) = out.get_mut(first_of_section..) {
                mark_link_layer_cut(section_ports, self.ends_input(at));
            }
        }
        out
    }

    /// The latest snapshot of each InfiniBand port: one entry per
    /// (host, device, port), the last one read by any tool.
    ///
    /// A view that does not name the adapter type (`ibstat mlx5_0 1`, whose
    /// `CA: 'mlx5_0'` form prints the port only, or `ibstatus`) takes it from
    /// another view of the same device on the same host: the port did not
    /// change adapter between two commands, and without the type a fleet
    /// comparison would put the port in a group of its own.
    #[must_use]
    pub fn latest_ib_ports(&self) -> &[IbPortRef<'a>] {
        self.latest_ib_ports
            .get_or_init(|| self.build_latest_ib_ports())
    }

    /// Each port `ibdev2netdev` names, by host, adapter and number (the
    /// last line wins): the interface on it tells its link layer.
    #[allow(clippy::type_complexity)] // a map built and read in one place
    fn netdev_ports(
        &self,
    ) -> BTreeMap<(HostKey<'a>, &'a str, u32), (SectionRef<'a>, &'a NetdevPort)> {
        let mut out = BTreeMap::new();
        for at in self.sections() {
            if let SectionData::Ibdev2netdev(map) = &at.section.data {
                for port in &map.ports {
                    out.insert((at.host(), port.device.as_str(), port.port), (at, port));
                }
            }
        }
        out
    }

    fn build_latest_ib_ports(&self) -> Vec<IbPortRef<'a>> {
        // Each (host, adapter, port) holds one view per physical port:
        // views whose port GUIDs differ are two machines' ports under one
        // name (a loop over hosts pasted without a heading we read, an
        // unnamed paste of two nodes), never two snapshots of one port,
        // so the later one must not hide the earlier (a Down port on the
        // first node read as the Active one of the next).
        // Keyed by [`IbPortRef::key`]: header-less ports each by their own.
        let mut latest: BTreeMap<PortKey<'a>, Vec<IbPortRef<'a>>> = BTreeMap::new();
        let mut ca_types: BTreeMap<(HostKey<'a>, &'a str), String> = BTreeMap::new();
        for p in self.ib_ports() {
            if let Some(t) = p.ca_type.as_ref().filter(|_| p.headerless.is_none()) {
                ca_types.insert((p.host(), p.device), t.clone());
            }
            let views = latest.entry(p.key()).or_default();
            let same_port = views
                .iter()
                .rposition(|v| match (v.port_guid, p.port_guid) {
                    (Some(a), Some(b)) => a == b,
                    // `ibv_devinfo` prints no port GUID: its adapter's
                    // node GUID tells the machines apart (two nodes'
                    // listings under headings we do not read as hosts).
                    // Before, the later node's `mlx5_1` hid the earlier's,
                    // and a finding on the earlier was silently lost.
                    _ => match (v.adapter_guid, p.adapter_guid) {
                        (Some(a), Some(b)) => a == b,
                        _ => true,
                    },
                });
            match same_port.and_then(|i| views.get_mut(i)) {
                // `ibdev2netdev -v` tells a port's state and nothing else:
                // it stands for a port no other tool described, and never
                // hides the rate, LIDs and physical state another view read.
                Some(_) if p.at.section.kind == crate::parse::Kind::Ibdev2netdev => {}
                Some(view) => *view = p,
                None => views.push(p),
            }
        }
        let netdevs = self.netdev_ports();
        let mut out: Vec<IbPortRef<'a>> = latest.into_values().flatten().collect();
        for p in &mut out {
            if p.ca_type.is_none() && p.headerless.is_none() {
                p.ca_type = ca_types.get(&(p.host(), p.device)).cloned();
            }
            let told = matches!(
                p.link_layer,
                Some(LinkLayer::Infiniband | LinkLayer::Ethernet)
            );
            if !told && p.headerless.is_none() {
                if let Some(&(at, netdev)) = netdevs.get(&(p.host(), p.device, p.number)) {
                    p.link_layer = Some(netdev.link_layer());
                    p.link_layer_from = Some((at, netdev));
                }
            }
        }
        out.sort_by_key(|p| (p.at.doc, p.span));
        out
    }

    /// The adapters read from `ibstat` or `ibv_devinfo`, latest snapshot per
    /// (host, device).
    ///
    /// A port-only view (`ibstat mlx5_0 1` prints `CA: 'mlx5_0'` and one
    /// port, no type or firmware) does not hide what an earlier full view of
    /// the same adapter said: the full description, with its port list, is
    /// kept.
    ///
    /// Built once: the firmware rule and the fleet facts both read it.
    #[must_use]
    pub fn latest_adapters(&self) -> &[AdapterRef<'a>] {
        self.latest_adapters
            .get_or_init(|| self.build_latest_adapters())
    }

    fn build_latest_adapters(&self) -> Vec<AdapterRef<'a>> {
        let mut latest: BTreeMap<(HostKey<'a>, &'a str), AdapterRef<'a>> = BTreeMap::new();
        let keep = |latest: &mut BTreeMap<(HostKey<'a>, &'a str), AdapterRef<'a>>,
                    key: (HostKey<'a>, &'a str),
                    a: AdapterRef<'a>| {
            match latest.entry(key) {
                std::collections::btree_map::Entry::Occupied(mut earlier) => {
                    earlier.get_mut().replace_unless_port_only(a);
                }
                std::collections::btree_map::Entry::Vacant(slot) => {
                    slot.insert(a);
                }
            }
        };
        for at in self.sections() {
            match &at.section.data {
                SectionData::Ibstat(ibstat) => {
                    for ca in &ibstat.cas {
                        let a = AdapterRef {
                            at,
                            name: &ca.name,
                            node_type: ca.node_type.as_deref(),
                            ca_type: ca.ca_type.clone(),
                            firmware_version: ca.firmware_version.as_deref(),
                            node_guid: ca.node_guid,
                            ports_listed: ca.ports.len(),
                            span: ca.span,
                            partial: ca.partial.is_some()
                                || ca.ports.iter().any(|p| p.partial.is_some()),
                            ethernet: is_ethernet_adapter(
                                &ca.name,
                                ca.ports.iter().map(|p| p.link_layer),
                            ),
                        };
                        keep(&mut latest, (at.host(), a.name), a);
                    }
                }
                SectionData::IbvDevinfo(devinfo) => {
                    for dev in devinfo.devices.iter().filter(|d| !d.begins_inside_a_port()) {
                        let a = AdapterRef {
                            at,
                            name: &dev.hca_id,
                            node_type: None,
                            ca_type: dev.vendor_part_id.map(|id| format!("MT{id}")),
                            firmware_version: dev.fw_ver.as_deref(),
                            node_guid: dev.node_guid,
                            ports_listed: dev.ports.len(),
                            span: dev.span,
                            partial: false,
                            ethernet: is_ethernet_adapter(
                                &dev.hca_id,
                                dev.ports.iter().map(|p| p.link_layer),
                            ),
                        };
                        keep(&mut latest, (at.host(), a.name), a);
                    }
                }
                _ => {}
            }
        }
        latest.into_values().collect()
    }

    /// Hosts whose `ibstat` or `ibv_devinfo` views show one adapter name
    /// with two node GUIDs: two machines' output under one host name (an
    /// unnamed paste of two nodes' listings under headings we do not read
    /// as hosts). Which adapters share a machine is then unknown.
    #[must_use]
    pub fn hosts_mixing_machines(&self) -> BTreeSet<HostKey<'a>> {
        let mut seen: BTreeMap<(HostKey<'a>, &'a str), Guid> = BTreeMap::new();
        let mut mixed = BTreeSet::new();
        let mut saw = |host: HostKey<'a>, name: &'a str, guid: Option<Guid>| {
            let Some(guid) = guid.filter(|g| g.0 != 0) else {
                return;
            };
            if *seen.entry((host, name)).or_insert(guid) != guid {
                mixed.insert(host);
            }
        };
        for at in self.sections() {
            match &at.section.data {
                SectionData::Ibstat(ibstat) => {
                    for ca in &ibstat.cas {
                        saw(at.host(), &ca.name, ca.node_guid);
                    }
                }
                SectionData::IbvDevinfo(devinfo) => {
                    for dev in &devinfo.devices {
                        saw(at.host(), &dev.hca_id, dev.node_guid);
                    }
                }
                _ => {}
            }
        }
        mixed
    }

    /// Number of distinct hosts in the input.
    #[must_use]
    pub fn host_count(&self) -> usize {
        let mut hosts: Vec<HostKey<'a>> = self.sections().map(|s| s.host()).collect();
        hosts.sort();
        hosts.dedup();
        hosts.len()
    }
}

/// Whether an adapter is an Ethernet NIC rather than an InfiniBand adapter:
/// a bond (`mlx5_bond_0`, two RoCE ports folded into one device), or one
/// whose listed ports all say `Link layer: Ethernet`. An adapter whose link
/// layer is not printed (older tools, a cut paste) stays InfiniBand.
fn is_ethernet_adapter(name: &str, layers: impl Iterator<Item = Option<LinkLayer>>) -> bool {
    let mut any = false;
    let mut all_ethernet = true;
    for layer in layers {
        any = true;
        all_ethernet &= layer == Some(LinkLayer::Ethernet);
    }
    name.contains("_bond") || (any && all_ethernet)
}

/// A statistics subject in the rules' vocabulary.
#[must_use]
pub fn subject_of(s: &crate::stats::Subject) -> super::Subject {
    super::Subject {
        host: s.host.clone(),
        device: s.device.clone(),
        lid: s.lid,
        guid: s.guid,
        port: s.port.filter(|p| *p != 255),
        gpu: s.gpu,
        link: s.link,
        lane: s.lane,
        ..super::Subject::default()
    }
}

/// Ascending numbers as ranges: `1–16`, `3, 5–7` (the runs
/// [`crate::span::spans_of`] finds, written without their `lines`).
fn number_ranges(numbers: &[u32]) -> String {
    let runs = crate::span::spans_of(numbers.iter().map(|&n| n as usize));
    let written: Vec<String> = runs
        .iter()
        .map(|r| {
            if r.first_line == r.last_line {
                r.first_line.to_string()
            } else {
                format!("{}–{}", r.first_line, r.last_line)
            }
        })
        .collect();
    written.join(", ")
}

#[cfg(test)]
mod tests {
    use super::{
        latest_by_id, latest_by_link, latest_in_key_order, latest_per_key, latest_ranked,
        number_ranges, Wanted,
    };
    use crate::model::nvlink::NvlinkLink;
    use crate::model::{Counter, CounterId, Counters, KnownCounter, NvCounter};
    use std::collections::BTreeMap;

    #[test]
    fn numbers_are_written_as_ranges() {
        assert_eq!(number_ranges(&[]), "");
        assert_eq!(number_ranges(&[4]), "4");
        assert_eq!(number_ranges(&(1..=16).collect::<Vec<_>>()), "1–16");
        assert_eq!(number_ranges(&[0, 3, 5, 6, 7, 9]), "0, 3, 5–7, 9");
        assert_eq!(
            number_ranges(&[u32::MAX - 1, u32::MAX]),
            "4294967294–4294967295"
        );
    }

    /// [`super::NvGpuRef::latest_of`] as it went before its records were
    /// kept by link: every counter of every record (in reading order)
    /// ranked among the wanted names, the last of each (link, rank) kept.
    fn latest_of_oracle<'r, T: Copy>(
        records: &'r [(T, &'r NvlinkLink)],
        counters: &[KnownCounter],
    ) -> Vec<(T, u32, &'r str, Counter)> {
        let wanted = Wanted::new(counters);
        let mut kept = Vec::new();
        for &(at, link) in records {
            for (id, counter) in link.counters.iter() {
                if let Some(rank) = wanted.rank(id) {
                    kept.push((link.link, rank, (at, link.link, id.name(), *counter)));
                }
            }
        }
        latest_ranked(kept)
    }

    /// Link records from (link, counters as (name index, value)) pairs;
    /// names past the NVLink table's are unknown to it.
    fn link_records(records: &[(u32, Vec<(usize, u64)>)]) -> Vec<NvlinkLink> {
        let names: Vec<&str> = NvCounter::ALL
            .iter()
            .map(|c| c.name())
            .chain(["zz_other", "a_vendor"])
            .collect();
        records
            .iter()
            .map(|(link, counters)| {
                let mut l = NvlinkLink::new(*link, crate::span::LineSpan::line(1));
                l.counters = counters
                    .iter()
                    .map(|&(n, v)| (names.get(n).copied().unwrap_or("zz"), Counter::new(v, 64)))
                    .collect::<Counters>();
                l
            })
            .collect()
    }

    /// The old way: each reading inserted in turn, a later one replacing
    /// an earlier one of the same key.
    fn inserted_one_by_one<K: Ord, V>(readings: Vec<(K, V)>) -> BTreeMap<K, V> {
        let mut map = BTreeMap::new();
        for (k, v) in readings {
            map.insert(k, v);
        }
        map
    }

    /// Counter blocks of `width`-bit counters, `(name index, value)` each.
    fn counter_blocks(
        blocks: &[Vec<(usize, u64)>],
        names: &[&'static str],
        width: u8,
    ) -> Vec<Counters> {
        blocks
            .iter()
            .map(|b| {
                b.iter()
                    .map(|&(n, v)| (names[n], Counter::new(v, width)))
                    .collect::<Counters>()
            })
            .collect()
    }

    /// What a [`Context`](super::Context) of one CA's section is made of.
    fn port_context() -> (
        [crate::input::Document; 1],
        crate::rules::Thresholds,
        crate::stats::Measurements,
    ) {
        let doc = crate::input::read_all(
            "CA 'mlx5_0'\n\tCA type: MT4129\n",
            &crate::ReadOptions::default(),
        )
        .unwrap();
        (
            [doc],
            crate::rules::Thresholds::default(),
            crate::stats::Measurements::default(),
        )
    }

    /// One port's readings of `counters`, a block a line, in `ctx`'s section.
    fn port_readings<'a>(
        ctx: &super::Context<'a>,
        counters: &'a [Counters],
    ) -> super::PortReadings<'a> {
        let at = ctx.sections().next().unwrap();
        let mut readings = super::PortReadings::default();
        for (i, c) in counters.iter().enumerate() {
            readings.push(at, crate::span::LineSpan::line(i + 1), c);
        }
        readings
    }

    proptest::proptest! {
        /// A port's readings asked of its blocks newest first are those of
        /// the list of every reading with the last of each counter kept (as
        /// ports were built before): by name, by id, in full, in count.
        #[test]
        fn port_readings_are_the_latest_of_every_reading(
            blocks in proptest::collection::vec(
                proptest::collection::vec((0usize..8, 0u64..4), 0..8),
                0..5,
            ),
        ) {
            let names = [
                "PortXmitData", "PortRcvData", "SymbolErrorCounter", "PortXmitWait",
                "VL15Dropped", "AVendorCounter", "ZzCounter", "PortXmitData2",
            ];
            let counters = counter_blocks(&blocks, &names, 64);
            let (docs, thresholds, m) = port_context();
            let ctx = super::Context::new(&docs, &thresholds, &m);
            let readings = port_readings(&ctx, &counters);
            // The old way: every reading in reading order, the last of each
            // counter kept, in name order.
            let all: Vec<(&CounterId, (u64, usize))> = counters
                .iter()
                .enumerate()
                .flat_map(|(i, c)| c.iter().map(move |(id, r)| (id, (r.value, i + 1))))
                .collect();
            let want = latest_by_id(all);
            let got: Vec<(&str, (u64, usize))> = readings
                .iter()
                .map(|(n, r)| (n, (r.counter.value, r.span.first_line)))
                .collect();
            proptest::prop_assert_eq!(&got, &want);
            proptest::prop_assert_eq!(readings.len(), want.len());
            proptest::prop_assert_eq!(readings.is_empty(), want.is_empty());
            let of = |r: Option<super::Reading<'_>>| r.map(|r| (r.counter.value, r.span.first_line));
            for name in names {
                let expected = want.iter().find(|(n, _)| *n == name).map(|(_, r)| *r);
                proptest::prop_assert_eq!(of(readings.get(name)), expected);
                if let Some(k) = KnownCounter::from_name(name) {
                    proptest::prop_assert_eq!(of(readings.get(k)), expected);
                }
            }
        }

        /// A port said to have no saturated reading has no saturated
        /// latest reading (IB111 passes it by); one said to have one read
        /// one, in some block.
        #[test]
        fn a_port_without_saturated_readings_has_no_saturated_latest(
            blocks in proptest::collection::vec(
                proptest::collection::vec((0usize..4, 0u64..5), 0..6),
                0..4,
            ),
        ) {
            let names = ["PortXmitWait", "SymbolErrorCounter", "VL15Dropped", "AVendorCounter"];
            // Two-bit counters: 3 and 4 are saturated.
            let counters = counter_blocks(&blocks, &names, 2);
            let (docs, thresholds, m) = port_context();
            let ctx = super::Context::new(&docs, &thresholds, &m);
            let readings = port_readings(&ctx, &counters);
            let any = readings.any_saturated();
            if !any {
                for name in names {
                    proptest::prop_assert!(readings.get(name).is_none_or(|r| !r.counter.saturated));
                }
            }
            let read_one = counters.iter().any(|c| c.values().any(|r| r.value >= 3));
            proptest::prop_assert_eq!(any, read_one);
        }

        /// Each link's latest readings, found a link at a time in records
        /// kept by link, are those ranking every reading of the records in
        /// reading order kept: the same readings of the same records, in
        /// the same order, whatever the links' order, repeats and gaps.
        #[test]
        fn latest_by_link_is_ranking_every_reading(
            records in proptest::collection::vec(
                (0u32..5, proptest::collection::vec((0usize..15, 0u64..4), 0..6)),
                0..12,
            ),
            wanted in proptest::collection::vec(0usize..13, 0..5),
        ) {
            let links = link_records(&records);
            let counters: Vec<KnownCounter> = wanted
                .iter()
                .filter_map(|&i| NvCounter::ALL.get(i).map(|c| c.id()))
                .collect();
            let in_reading_order: Vec<(usize, &NvlinkLink)> = links.iter().enumerate().collect();
            let want = latest_of_oracle(&in_reading_order, &counters);
            let mut by_link = in_reading_order.clone();
            by_link.sort_by_key(|(_, l)| l.link);
            let mut got: Vec<(usize, u32, &str, Counter)> = Vec::new();
            latest_by_link(&by_link, &counters, |at, l, k, c| got.push((at, l.link, k.name(), *c)));
            proptest::prop_assert_eq!(got, want);
        }

        /// Building a GPU's or port's counters at once gives the map the
        /// one-by-one inserts gave, whatever the order and repeats of
        /// (link, counter name) keys.
        #[test]
        fn latest_per_key_is_inserting_in_turn(
            keys in proptest::collection::vec(
                (0u32..4, proptest::sample::select(vec!["a", "ab", "b", "rx", "tx"])),
                0..80,
            ),
        ) {
            // Each reading's value is its place: which one was kept shows.
            let readings: Vec<_> = keys.into_iter().enumerate().map(|(i, k)| (k, i)).collect();
            proptest::prop_assert_eq!(
                latest_per_key(readings.clone()),
                inserted_one_by_one(readings.clone())
            );
        }

        /// A port's latest counters sorted by id are the map of its
        /// readings by name: blocks of counters in name order (as parsed),
        /// repeated or not, known and unknown names mixed.
        #[test]
        fn latest_by_id_is_the_map_by_name(
            blocks in proptest::collection::vec(
                proptest::sample::subsequence(
                    vec![
                        "PortXmitData", "PortRcvData", "SymbolErrorCounter", "PortXmitWait",
                        "VL15Dropped", "AVendorCounter", "ZzCounter", "PortXmitData2",
                    ],
                    0..8,
                ),
                0..5,
            ),
        ) {
            let ids: Vec<Vec<CounterId>> = blocks
                .iter()
                .map(|b| {
                    let mut ids: Vec<CounterId> = b.iter().map(|n| CounterId::from_name(n)).collect();
                    ids.sort();
                    ids
                })
                .collect();
            let readings: Vec<(&CounterId, usize)> = ids
                .iter()
                .flatten()
                .enumerate()
                .map(|(i, id)| (id, i))
                .collect();
            let by_name: Vec<(&str, usize)> = readings.iter().map(|(id, i)| (id.name(), *i)).collect();
            let want: Vec<(&str, usize)> = inserted_one_by_one(by_name).into_iter().collect();
            proptest::prop_assert_eq!(latest_by_id(readings), want);
        }

        /// The latest readings of a few counters are those the map of all
        /// counters holds for them, in its order.
        #[test]
        fn latest_in_key_order_is_the_map_of_all_filtered(
            keys in proptest::collection::vec(
                (0u32..4, proptest::sample::select(vec!["a", "ab", "b", "rx", "tx"])),
                0..80,
            ),
            names in proptest::sample::subsequence(vec!["a", "ab", "rx", "zz"], 0..4),
        ) {
            let readings: Vec<_> = keys.into_iter().enumerate().map(|(i, k)| (k, i)).collect();
            let want: Vec<_> = inserted_one_by_one(readings.clone())
                .into_iter()
                .filter(|((_, name), _)| names.contains(name))
                .collect();
            let named = readings.iter().filter(|((_, n), _)| names.contains(n)).copied().collect();
            proptest::prop_assert_eq!(latest_in_key_order(named), want);
        }

        /// Ordering by the wanted counters' places keeps the readings that
        /// filtering by id and sorting by name keep (the way `latest_of`
        /// went before), with unknown names and ids not asked for mixed in.
        #[test]
        fn latest_ranked_is_filtering_and_sorting_by_name(
            keys in proptest::collection::vec(
                (0u32..4, 0usize..7, proptest::bool::ANY),
                0..80,
            ),
            wanted in proptest::sample::subsequence(vec![0usize, 1, 2, 3, 4], 0..5),
        ) {
            let known = [
                "replay_errors", "recovery_errors", "crc_errors", "data_tx_kib",
                "SymbolErrorCounter",
            ];
            let counters: Vec<KnownCounter> = wanted
                .iter()
                .filter_map(|&i| known.get(i).and_then(|n| KnownCounter::from_name(n)))
                .collect();
            // Names 5 and 6 are unknown to the tables; a known name may be
            // held as another name (never so from the parsers).
            let name_of = |i: usize| {
                known
                    .get(i)
                    .copied()
                    .unwrap_or(if i == 5 { "zz_other" } else { "crc" })
            };
            let readings: Vec<(u32, CounterId)> = keys
                .iter()
                .map(|&(link, n, as_known)| {
                    let name = name_of(n);
                    let id = match CounterId::from_name(name) {
                        CounterId::Known(k) if as_known => CounterId::Known(k),
                        _ => CounterId::Other(name.into()),
                    };
                    (link, id)
                })
                .collect();
            let by_name: Vec<((u32, &str), usize)> = readings
                .iter()
                .enumerate()
                .filter(|(_, (_, id))| match id.known() {
                    Some(k) => counters.contains(&k),
                    None => counters.iter().any(|c| c.name() == id.name()),
                })
                .map(|(i, (link, id))| ((*link, id.name()), i))
                .collect();
            let want: Vec<usize> =
                latest_in_key_order(by_name).into_iter().map(|(_, i)| i).collect();
            let w = Wanted::new(&counters);
            let kept = readings
                .iter()
                .enumerate()
                .filter_map(|(i, (link, id))| w.rank(id).map(|r| (*link, r, i)))
                .collect();
            proptest::prop_assert_eq!(latest_ranked(kept), want);
        }
    }
}
