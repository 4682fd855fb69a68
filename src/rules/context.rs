//! What a check sees: the parsed documents, seen as hosts and their parts.
//!
//! Documents are pastes or dump files; hosts are what rules reason about. A
//! section's host comes from the input (pdsh prefix, prompt, batch directory);
//! sections with no host belong to an unnamed host per document, so two
//! anonymous pastes are never mistaken for one machine.

use super::thresholds::Thresholds;
use crate::input::{Document, Section};
use crate::model::ib::{Ca, Port};
use crate::parse::SectionData;
use std::collections::BTreeMap;

/// Which machine something belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum HostKey<'a> {
    /// A host the input names.
    Named(&'a str),
    /// The unnamed host of the document with this index.
    Unnamed(usize),
}

impl<'a> HostKey<'a> {
    /// The host name, if the input gave one.
    #[must_use]
    pub fn name(self) -> Option<&'a str> {
        match self {
            HostKey::Named(n) => Some(n),
            HostKey::Unnamed(_) => None,
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

/// An InfiniBand port as `ibstat` (or a tool like it) describes it.
#[derive(Debug, Clone, Copy)]
pub struct IbPortRef<'a> {
    /// Where it was read.
    pub at: SectionRef<'a>,
    /// The adapter.
    pub ca: &'a Ca,
    /// The port.
    pub port: &'a Port,
}

impl<'a> IbPortRef<'a> {
    /// The host the port belongs to.
    #[must_use]
    pub fn host(&self) -> HostKey<'a> {
        self.at.host()
    }

    /// The subject of a finding about this port.
    #[must_use]
    pub fn subject(&self) -> super::Subject {
        super::Subject {
            host: self.host().name().map(str::to_owned),
            device: Some(self.ca.name.clone()),
            port: Some(self.port.number),
            lid: self.port.base_lid.filter(|l| *l != 0 && *l != 0xffff),
            guid: self
                .port
                .port_guid
                .filter(|g| g.0 != 0)
                .map(|g| g.to_string()),
            ..super::Subject::default()
        }
    }

    /// Evidence pointing at the port's lines.
    #[must_use]
    pub fn evidence(&self, text: impl Into<String>) -> super::Evidence {
        super::Evidence::new(text, self.port.span, self.at.source())
    }

    /// True when the port speaks native InfiniBand (or does not say, as very
    /// old infiniband-diags do not).
    #[must_use]
    pub fn is_infiniband(&self) -> bool {
        !matches!(
            self.port.link_layer,
            Some(crate::model::ib::LinkLayer::Ethernet)
        )
    }
}

/// Everything a rule may read.
#[derive(Debug, Clone, Copy)]
pub struct Context<'a> {
    /// The documents analysed together.
    pub documents: &'a [Document],
    /// Counter limits in force.
    pub thresholds: &'a Thresholds,
}

impl<'a> Context<'a> {
    /// A context over `documents` judged against `thresholds`.
    #[must_use]
    pub fn new(documents: &'a [Document], thresholds: &'a Thresholds) -> Self {
        Self {
            documents,
            thresholds,
        }
    }

    /// Every section of every document.
    pub fn sections(&self) -> impl Iterator<Item = SectionRef<'a>> + 'a {
        self.documents.iter().enumerate().flat_map(|(doc, d)| {
            d.sections
                .iter()
                .map(move |section| SectionRef { doc, section })
        })
    }

    /// Every InfiniBand port read from `ibstat`, in input order. When the same
    /// port of the same host appears in several snapshots, each is listed.
    #[must_use]
    pub fn ib_ports(&self) -> Vec<IbPortRef<'a>> {
        let mut out = Vec::new();
        for at in self.sections() {
            let SectionData::Ibstat(ibstat) = &at.section.data
            else {
                continue;
            };
            for ca in &ibstat.cas {
                for port in &ca.ports {
                    out.push(IbPortRef { at, ca, port });
                }
            }
        }
        out
    }

    /// The latest snapshot of each InfiniBand port: one entry per
    /// (host, device, port), the last one read.
    #[must_use]
    pub fn latest_ib_ports(&self) -> Vec<IbPortRef<'a>> {
        let mut latest: BTreeMap<(HostKey<'a>, &'a str, u32), IbPortRef<'a>> = BTreeMap::new();
        for p in self.ib_ports() {
            latest.insert((p.host(), p.ca.name.as_str(), p.port.number), p);
        }
        let mut out: Vec<IbPortRef<'a>> = latest.into_values().collect();
        out.sort_by_key(|p| (p.at.doc, p.port.span));
        out
    }

    /// The adapters read from `ibstat`, latest snapshot per (host, device).
    #[must_use]
    pub fn latest_cas(&self) -> Vec<(SectionRef<'a>, &'a Ca)> {
        let mut latest: BTreeMap<(HostKey<'a>, &'a str), (SectionRef<'a>, &'a Ca)> =
            BTreeMap::new();
        for at in self.sections() {
            let SectionData::Ibstat(ibstat) = &at.section.data
            else {
                continue;
            };
            for ca in &ibstat.cas {
                latest.insert((at.host(), ca.name.as_str()), (at, ca));
            }
        }
        latest.into_values().collect()
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
