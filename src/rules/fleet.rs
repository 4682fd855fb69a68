//! What the fleet rules read: compact facts about each host's adapters and
//! ports, collected unit by unit, and the peer groups across hosts.
//!
//! Batch analysis keeps no document once its host is analysed, so a rule
//! that compares hosts (`FL0xx`) cannot walk the documents: it reads these
//! records instead. They hold only what those rules compare (adapter type,
//! firmware, port rate, adapter count) and what their findings cite (the
//! lines and file), a few hundred bytes per adapter, and serialise into
//! record shards (`analyze --emit-records`).

use super::context::{AdapterRef, Context};
use super::thresholds::Thresholds;
use super::{Coverage, Evidence, Finding, Subject};
use crate::model::ib::Guid;
use crate::parse::Kind;
use crate::span::LineSpan;
use crate::stats::PeerGroup;
use serde::{Deserialize, Serialize};

/// An InfiniBand adapter of a named host, as its latest listing described it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AdapterFacts {
    /// The host.
    pub host: String,
    /// Adapter name (`mlx5_0`).
    pub name: String,
    /// `CA`, `Switch`… (ibstat only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_type: Option<String>,
    /// Adapter type (`MT4129`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ca_type: Option<String>,
    /// Firmware version.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub firmware_version: Option<String>,
    /// Node GUID.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_guid: Option<Guid>,
    /// Number of ports listed with it.
    pub ports_listed: usize,
    /// True when the adapter's block, or one of its ports, is cut.
    pub partial: bool,
    /// Whether the command that listed it lists every adapter of the host
    /// (`ibstat`, not `ibstat mlx5_0`).
    pub lists_every_adapter: bool,
    /// Whether its section ends its input (a listing may be cut after it).
    pub ends_input: bool,
    /// True for an Ethernet NIC (every port's link layer Ethernet, or a
    /// bond device): not one of the host's InfiniBand adapters.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub ethernet: bool,
    /// The tool that listed it.
    pub kind: Kind,
    /// Its lines.
    pub span: LineSpan,
    /// The file it was read from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
}

impl AdapterFacts {
    /// The subject of a finding about the adapter.
    #[must_use]
    pub fn subject(&self) -> Subject {
        Subject {
            device: Some(self.name.clone()),
            guid: self.node_guid,
            ..Subject::host(Some(&self.host))
        }
    }

    /// Evidence pointing at the adapter's lines.
    #[must_use]
    pub fn evidence(&self, text: String) -> Evidence {
        lines_of(self.kind, self.span, self.file.as_deref(), text)
    }
}

/// Evidence naming the tool that printed `text` and pointing at its lines.
fn lines_of(kind: Kind, span: LineSpan, file: Option<&str>, text: String) -> Evidence {
    Evidence::new(format!("{}: {text}", kind.name()), span, file)
}

/// An Active InfiniBand port with a rate, of a named host.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PortFacts {
    /// The host.
    pub host: String,
    /// Adapter type (`MT4129`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ca_type: Option<String>,
    /// Adapter name.
    pub device: String,
    /// Port number.
    pub number: u32,
    /// Rate, Gb/s.
    pub rate_gbps: f64,
    /// The subject of a finding about the port.
    pub subject: Subject,
    /// The tool that printed it.
    pub kind: Kind,
    /// Its lines.
    pub span: LineSpan,
    /// The file it was read from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
}

impl PortFacts {
    /// Evidence pointing at the port's lines.
    #[must_use]
    pub fn evidence(&self, text: String) -> Evidence {
        lines_of(self.kind, self.span, self.file.as_deref(), text)
    }
}

/// An InfiniBand port of a named host that never linked beside an Active
/// port of its adapter (IB001's `warning`): IB001's fleet step counts
/// them across hosts. Most hosts have none, or one per dual-port card.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NeverLinkedFacts {
    /// The host.
    pub host: String,
    /// Adapter name.
    pub device: String,
    /// Port number.
    pub number: u32,
    /// The subject of the port's IB001 finding.
    pub subject: Subject,
    /// Its states and LIDs, as IB001's evidence gives them.
    pub reading: String,
    /// The tool that printed it.
    pub kind: Kind,
    /// Its lines.
    pub span: LineSpan,
    /// The file it was read from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
}

impl NeverLinkedFacts {
    /// Evidence pointing at the port's lines.
    #[must_use]
    pub fn evidence(&self, text: String) -> Evidence {
        lines_of(self.kind, self.span, self.file.as_deref(), text)
    }
}

/// What one unit tells the fleet rules.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct FleetFacts {
    /// The latest description of each adapter of each named host.
    pub adapters: Vec<AdapterFacts>,
    /// Active InfiniBand ports with a rate, of named hosts.
    pub ports: Vec<PortFacts>,
    /// InfiniBand ports of named hosts that never linked beside an Active
    /// sibling (absent from records written before IB001's fleet step:
    /// none then).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub never_linked: Vec<NeverLinkedFacts>,
}

impl FleetFacts {
    /// The facts of the documents of a context (one unit).
    #[must_use]
    pub fn of(ctx: &Context<'_>) -> Self {
        let adapters = ctx
            .latest_adapters()
            .iter()
            .filter_map(|a| adapter_facts(ctx, a))
            .collect();
        let ports = ctx
            .latest_ib_ports()
            .iter()
            // A header-less port's adapter (and so its type) is unknown:
            // it has no place in a comparison by adapter type.
            .filter(|p| p.is_infiniband() && p.is_active() && p.headerless.is_none())
            .filter_map(|p| {
                Some(PortFacts {
                    host: p.host().name()?.to_owned(),
                    ca_type: p.ca_type.clone(),
                    device: p.device.to_owned(),
                    number: p.number,
                    rate_gbps: p.rate_gbps?,
                    subject: p.subject(),
                    kind: p.at.section.kind,
                    span: p.span,
                    file: p.at.source().map(str::to_owned),
                })
            })
            .collect();
        let never_linked = super::ib_port::never_linked_ports(ctx)
            .into_iter()
            .filter_map(|p| {
                Some(NeverLinkedFacts {
                    host: p.host().name()?.to_owned(),
                    device: p.device.to_owned(),
                    number: p.number,
                    subject: p.subject(),
                    reading: super::ib_port::reading(p, true),
                    kind: p.at.section.kind,
                    span: p.span,
                    file: p.at.source().map(str::to_owned),
                })
            })
            .collect();
        Self {
            adapters,
            ports,
            never_linked,
        }
    }

    /// Adds another unit's facts.
    pub fn extend(&mut self, other: Self) {
        self.adapters.extend(other.adapters);
        self.ports.extend(other.ports);
        self.never_linked.extend(other.never_linked);
    }
}

fn adapter_facts(ctx: &Context<'_>, a: &AdapterRef<'_>) -> Option<AdapterFacts> {
    Some(AdapterFacts {
        host: a.at.host().name()?.to_owned(),
        name: a.name.to_owned(),
        node_type: a.node_type.map(str::to_owned),
        ca_type: a.ca_type.clone(),
        firmware_version: a.firmware_version.map(str::to_owned),
        node_guid: a.node_guid,
        ports_listed: a.ports_listed,
        partial: a.partial,
        lists_every_adapter: super::ib_fleet::lists_every_adapter(a.at.section.command.as_deref()),
        ends_input: ctx.ends_input(a.at),
        ethernet: a.ethernet,
        kind: a.at.section.kind,
        span: a.span,
        file: a.at.source().map(str::to_owned),
    })
}

/// Everything a fleet check may read.
#[derive(Debug, Clone, Copy)]
pub struct Fleet<'a> {
    /// Every unit's adapters and ports.
    pub facts: &'a FleetFacts,
    /// The peer groups across hosts (`same_port_across_hosts`).
    pub peer_groups: &'a [PeerGroup],
    /// Counter limits in force.
    pub thresholds: &'a Thresholds,
}

/// A fleet check: reads the records, pushes findings, says what it covered.
pub type FleetCheck = fn(&Fleet<'_>, &mut Vec<Finding>) -> Coverage;

/// Runs a fleet check over one context, as one unit: what a fleet rule's
/// [`Check`](super::Check) does for a paste and for the rule tests.
pub(crate) fn over_context(
    check: FleetCheck,
    ctx: &Context<'_>,
    out: &mut Vec<Finding>,
) -> Coverage {
    let facts = FleetFacts::of(ctx);
    check(
        &Fleet {
            facts: &facts,
            peer_groups: &[],
            thresholds: ctx.thresholds,
        },
        out,
    )
}
