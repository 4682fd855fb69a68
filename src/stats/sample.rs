//! The neutral form every counter-bearing section is reduced to before any
//! arithmetic: who the counter belongs to, what it counts, in which unit.
//!
//! Extractors (one per tool model, in the private `extract` module) are the only code
//! that knows tool formats; everything downstream works on their readings
//! (subject, source, counter, [`CounterUnit`], [`Role`]), so a new tool gets
//! rates, saturation, BER and outliers by writing one extractor.

use serde::{Deserialize, Serialize};
use std::fmt;

/// What a counter belongs to. Fields that do not apply stay `None`; the
/// derived ordering groups a host's devices, ports, GPUs and links together.
#[derive(Debug, Clone, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "wasm", derive(tsify_next::Tsify))]
// The TypeScript name; JSON never carries a struct's name.
#[cfg_attr(feature = "wasm", serde(rename = "MeasurementSubject"))]
pub struct Subject {
    /// Host the output came from.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
    /// Device name (`mlx5_0`) when the tool names one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub device: Option<String>,
    /// The port's GUID, when the tool prints one per port (ibqueryerrors):
    /// ports whose lines name no node (pasted without their `Errors for`
    /// header) are told apart by it, not merged into one series.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "wasm", tsify(type = "string"))]
    pub guid: Option<crate::model::ib::Guid>,
    /// InfiniBand LID of the port's node (perfquery addresses ports this way).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lid: Option<u32>,
    /// Port number (255 = perfquery's all-ports aggregate).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub port: Option<u32>,
    /// GPU index as nvidia-smi numbers it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gpu: Option<u32>,
    /// NVLink number within the GPU.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub link: Option<u32>,
    /// Lane within the link or port.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lane: Option<u32>,
}

impl fmt::Display for Subject {
    /// `node1 mlx5_0 lid 12 port 1`, `node1 GPU 0 link 14 lane 1`.
    ///
    /// Written part by part, a space before every part but the first, and
    /// numbers as their digits (the formatter's flags are not applied, as
    /// they were not to the parts this once joined): the explanations of
    /// outliers and notes name thousands of subjects, and a vector of owned
    /// parts joined was an allocation per part.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut first = true;
        let mut part = |f: &mut fmt::Formatter<'_>, words: &str, number: Option<u32>| {
            if !std::mem::take(&mut first) {
                f.write_str(" ")?;
            }
            f.write_str(words)?;
            match number {
                Some(n) => {
                    f.write_str(crate::parse::text::decimal_text(u64::from(n), &mut [0; 20]))
                }
                None => Ok(()),
            }
        };
        if let Some(h) = &self.host {
            part(f, h, None)?;
        }
        if let Some(d) = &self.device {
            part(f, d, None)?;
        }
        if let Some(l) = self.lid {
            part(f, "lid ", Some(l))?;
        }
        // The GUID names the port only when nothing else does (written
        // as a finding's subject writes it).
        if let (None, None, Some(g)) = (&self.device, self.lid, self.guid) {
            part(f, "", None)?;
            write!(f, "{g}")?;
        }
        match self.port {
            Some(255) => part(f, "all ports", None)?,
            Some(p) => part(f, "port ", Some(p))?,
            None => {}
        }
        if let Some(g) = self.gpu {
            part(f, "GPU ", Some(g))?;
        }
        if let Some(l) = self.link {
            part(f, "link ", Some(l))?;
        }
        if let Some(l) = self.lane {
            part(f, "lane ", Some(l))?;
        }
        if first {
            f.write_str("(unnamed)")?;
        }
        Ok(())
    }
}

/// The words of a subject as [`Subject`]'s `Display` wrote them before it
/// wrote them part by part: owned parts joined with spaces (the oracle).
#[cfg(test)]
pub(crate) fn subject_words_joined(subject: &Subject) -> String {
    let mut parts: Vec<String> = Vec::new();
    if let Some(h) = &subject.host {
        parts.push(h.clone());
    }
    if let Some(d) = &subject.device {
        parts.push(d.clone());
    }
    if let Some(l) = subject.lid {
        parts.push(format!("lid {l}"));
    }
    if let (None, None, Some(g)) = (&subject.device, subject.lid, subject.guid) {
        parts.push(g.to_string());
    }
    if let Some(p) = subject.port {
        parts.push(if p == 255 {
            "all ports".to_owned()
        } else {
            format!("port {p}")
        });
    }
    if let Some(g) = subject.gpu {
        parts.push(format!("GPU {g}"));
    }
    if let Some(l) = subject.link {
        parts.push(format!("link {l}"));
    }
    if let Some(l) = subject.lane {
        parts.push(format!("lane {l}"));
    }
    if parts.is_empty() {
        parts.push("(unnamed)".to_owned());
    }
    parts.join(" ")
}

impl Subject {
    /// True for perfquery's `-a` aggregate, which is a sum, not a port.
    #[must_use]
    pub fn is_aggregate(&self) -> bool {
        self.port == Some(255)
    }
}

/// What one count of a counter stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "wasm", derive(tsify_next::Tsify))]
pub enum CounterUnit {
    /// Events (errors, recoveries, wait ticks).
    Events,
    /// Packets.
    Packets,
    /// Four octets: InfiniBand PortXmitData/PortRcvData (IBA 16.1.3.5).
    FourOctets,
    /// KiB (1024 bytes): `nvidia-smi nvlink -gt`.
    Kib,
}

impl CounterUnit {
    /// Bytes per count for data units.
    #[must_use]
    pub fn bytes_per_count(self) -> Option<u64> {
        match self {
            Self::FourOctets => Some(4),
            Self::Kib => Some(1024),
            Self::Events | Self::Packets => None,
        }
    }
}

/// Direction of traffic, seen from the subject.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "wasm", derive(tsify_next::Tsify))]
pub enum Direction {
    /// Sent.
    Tx,
    /// Received.
    Rx,
}

/// Whether traffic counts payload only or payload plus protocol overhead.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "wasm", derive(tsify_next::Tsify))]
pub enum Layer {
    /// Payload (`-gt d`, PortXmitData).
    Data,
    /// Payload and protocol overhead (`-gt r`).
    Raw,
}

/// What a counter tells, which decides the analyses it takes part in.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[serde(rename_all = "snake_case", tag = "role")]
pub enum Role {
    /// Data carried: throughput, utilisation, balance.
    Traffic {
        /// Tx or Rx.
        direction: Direction,
        /// Payload or raw.
        layer: Layer,
    },
    /// Errors of individual bits or symbols on the wire: BER and outliers.
    BitErrors,
    /// Other error and recovery events: outliers and trends.
    Errors,
    /// Congestion (XmitWait ticks): outliers and trends.
    Congestion,
    /// Anything else (packet counts): rates only. The default: a rate read
    /// back from JSON, which does not carry the role, takes part in nothing.
    #[default]
    Other,
}

impl Role {
    /// Whether peers are compared on this counter.
    #[must_use]
    pub fn compared_across_peers(self) -> bool {
        matches!(self, Self::BitErrors | Self::Errors | Self::Congestion)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn name() -> impl Strategy<Value = Option<String>> {
        proptest::option::of(prop_oneof![
            Just(String::new()),
            Just(" ".to_owned()),
            "[a-z0-9_ é\\t]{0,8}",
        ])
    }

    fn number() -> impl Strategy<Value = Option<u32>> {
        proptest::option::of(prop_oneof![
            Just(0u32),
            Just(255),
            Just(u32::MAX),
            any::<u32>()
        ])
    }

    proptest! {
        /// A subject's words, written part by part, are the owned parts
        /// joined: every field present or not, empty and odd names, the
        /// all-ports port, and with a width asked for (which neither way
        /// pads).
        #[test]
        fn subject_words_are_the_parts_joined(
            host in name(),
            device in name(),
            lid in number(),
            port in number(),
            gpu in number(),
            link in number(),
            lane in number(),
            guid in proptest::option::of(any::<u64>()),
        ) {
            let guid = guid.map(crate::model::ib::Guid);
            let subject = Subject { host, device, guid, lid, port, gpu, link, lane };
            let want = subject_words_joined(&subject);
            prop_assert_eq!(subject.to_string(), want.clone());
            prop_assert_eq!(format!("{subject:>80}"), want);
        }
    }
}
