//! Links of the fabric as `ibnetdiscover` lists them: each cable with the
//! width and speed it trained at.

use super::context::Context;
use super::{Coverage, Evidence, Finding, Severity, Subject, Threshold};
use crate::declare_rule;
use crate::model::ib::Guid;
use crate::model::iblinkinfo::{LaneGeneration, NodeType};
use crate::model::ibnetdiscover::{NetEnd, NetPort};
use crate::parse::SectionData;
use std::collections::BTreeMap;

declare_rule! {
    /// ### What it detects
    /// A link that `ibnetdiscover` shows trained at 1X width while the
    /// fabric's links usually run 4X or wider, or at SDR speed while they
    /// usually run FDR or faster; or a link between two switches trained two
    /// or more speed generations below the fabric's usual switch-to-switch
    /// speed (4xDDR among 4xEDR inter-switch links).
    ///
    /// ### Why it matters
    /// Two ports train their link to the widest width and fastest speed both
    /// can hold. A 4X link that came up 1X carries a quarter of the traffic,
    /// one at SDR a tenth or less: a failed lane, a damaged cable or
    /// transceiver, or a dirty connector. Jobs whose traffic crosses it slow
    /// down without any error. Narrower or slower links that are not this
    /// extreme are not judged: split ports (2X) and adapters of an older
    /// generation are normal in many fabrics. Switches are another matter:
    /// the switches of a fabric are bought together, so an inter-switch link
    /// two generations slow (FDR10 and FDR counted as one) is a link that
    /// failed to train, while one generation is left alone (a fabric grown
    /// with a newer spine).
    ///
    /// ### Evidence
    /// The link's `ibnetdiscover` line (both ends' lines in the topology
    /// file, each with the width and speed it reads), and the fabric's
    /// usual width and speed. Each end's line is that port's own reading;
    /// when the two disagree (one end 4X, the other 1X), the link is judged
    /// by the narrower and slower one, since a lane or a speed one end has
    /// lost is lost to the link, and the message says both readings.
    ///
    /// ### What to do
    /// Reseat or replace the cable or transceiver of the link; read the port
    /// with `mlxlink -d <device> -p <port>` (lanes, BER, cable) and
    /// `iblinkinfo` (`Could be`); move the cable to another switch port to
    /// tell a cable from a port.
    ///
    /// ### Thresholds and sources
    /// The fabric's most common width and speed among the links listed (each
    /// link counted once, at its wider and faster end's reading, so that
    /// degraded ends do not lower the usual); 1X against 4X or wider, SDR
    /// against FDR or faster; between switches, two generations below the
    /// most common switch-to-switch speed. IBA link training
    /// (width and speed are negotiated down when lanes or signal fail);
    /// infiniband-diags `iblinkinfo` prints the same condition as
    /// `Could be 4X`.
    pub static IB008 = {
        id: "IB008",
        name: "link-trained-down",
        family: IbPort,
        severity: Warning,
        summary: "Link trained at 1X or SDR while the fabric's links run 4X and FDR or faster, or a switch-to-switch link two speed generations slow (ibnetdiscover)",
        needs: "ibnetdiscover (topology file or -p)",
        check: check_trained_down,
    }
}

declare_rule! {
    /// ### What it detects
    /// An `ibnetdiscover` topology file that lists only host adapters and
    /// no link at all: discovery from this host's port found no switch and
    /// no other node.
    ///
    /// ### Why it matters
    /// `ibnetdiscover` walks the subnet from the local port. A port cabled
    /// to a working switch port always finds at least that switch, so an
    /// output with only the local adapter means its link is down: no cable,
    /// a failed cable or transceiver, a disabled switch port, or a port the
    /// host brought down. The host is cut off from the fabric.
    ///
    /// ### Evidence
    /// The adapter's node line, and whether anything follows the listing:
    /// a paste that ends right after the adapter may have been cut there,
    /// so that case is said at `info` only.
    ///
    /// ### What to do
    /// Check the port with `ibstat` (State, Physical state), reseat or
    /// replace the cable, check the switch port's state and LEDs.
    ///
    /// ### Thresholds and sources
    /// At least one link from the local port (infiniband-diags
    /// `ibnetdiscover` discovers through the local port's link).
    pub static IB010 = {
        id: "IB010",
        name: "no-link-discovered",
        family: IbPort,
        severity: Error,
        summary: "ibnetdiscover found only this host's adapter and no link: its port reaches no switch",
        needs: "ibnetdiscover (topology file)",
        check: check_nothing_discovered,
    }
}

/// One end of a link, as the pair of ends is keyed: the node's (or the
/// port's) GUID, else its LID, and the port number.
type EndKey = (Option<Guid>, Option<u32>, u32);

fn end_key(end: &NetEnd) -> EndKey {
    (
        end.guid,
        end.guid.is_none().then_some(end.lid).flatten(),
        end.port,
    )
}

/// A link, its lines (one from each end in the topology file).
struct Link<'a> {
    /// Its two ends, in order.
    key: (EndKey, EndKey),
    first: &'a NetPort,
    lines: Vec<&'a NetPort>,
}

/// `4xSDR`: a line's width and speed as ibnetdiscover prints them.
fn trained_words(p: &NetPort) -> String {
    format!(
        "{}{}",
        p.width.as_ref().map_or("?", |w| w.text.as_str()),
        p.speed.map_or("???", LaneGeneration::name)
    )
}

impl Link<'_> {
    /// The narrowest width and slowest speed any of the link's lines
    /// reads: what the link is judged by. Each end's line is that port's
    /// own PortInfo; when the two disagree (one end 1X, the other 4X), a
    /// lane or a speed one end has lost is lost to the link, and judging
    /// the first line read alone let the other end's 1X go unsaid.
    fn narrowest(&self) -> (Option<u32>, Option<LaneGeneration>) {
        (self.lanes().min(), self.speeds().min())
    }

    /// The widest width and fastest speed any of the link's lines reads:
    /// what the link counts for in the fabric's usual width and speed (a
    /// degraded end does not pull the usual down).
    fn widest(&self) -> (Option<u32>, Option<LaneGeneration>) {
        (self.lanes().max(), self.speeds().max())
    }

    /// The lane counts the link's lines read.
    fn lanes(&self) -> impl Iterator<Item = u32> + '_ {
        self.lines
            .iter()
            .filter_map(|l| l.width.as_ref().and_then(|w| w.lanes))
    }

    /// The lane speeds the link's lines read.
    fn speeds(&self) -> impl Iterator<Item = LaneGeneration> + '_ {
        self.lines.iter().filter_map(|l| l.speed)
    }

    /// The narrowest reading in words (`1xSDR`): the width as the line
    /// that reads it prints it.
    fn narrowest_words(&self) -> String {
        let (lanes, speed) = self.narrowest();
        let width = self
            .lines
            .iter()
            .filter_map(|l| l.width.as_ref())
            .find(|w| w.lanes == lanes)
            .map_or("?", |w| w.text.as_str());
        format!("{width}{}", speed.map_or("???", LaneGeneration::name))
    }

    /// True when the link's lines do not all read the same width and speed.
    fn ends_disagree(&self) -> bool {
        let reading = |p: &NetPort| (p.width.as_ref().and_then(|w| w.lanes), p.speed);
        self.lines.iter().any(|l| reading(l) != reading(self.first))
    }
}

/// The connected links of one listing, each once, in the order first seen.
fn links(ports: &[NetPort]) -> Vec<Link<'_>> {
    let mut at: BTreeMap<(EndKey, EndKey), usize> = BTreeMap::new();
    let mut out: Vec<Link<'_>> = Vec::new();
    for p in ports {
        let Some(remote) = &p.remote else {
            continue;
        };
        let (a, b) = (end_key(&p.local), end_key(remote));
        let key = if a <= b { (a, b) } else { (b, a) };
        match at.get(&key).and_then(|&i| out.get_mut(i)) {
            Some(link) => link.lines.push(p),
            None => {
                at.insert(key, out.len());
                out.push(Link {
                    key,
                    first: p,
                    lines: vec![p],
                });
            }
        }
    }
    out
}

/// The most common value, ties to the larger.
fn usual<T: Ord + Copy>(values: impl Iterator<Item = T>) -> Option<T> {
    let mut counts: BTreeMap<T, usize> = BTreeMap::new();
    for v in values {
        *counts.entry(v).or_default() += 1;
    }
    counts
        .into_iter()
        .max_by(|a, b| a.1.cmp(&b.1).then(a.0.cmp(&b.0)))
        .map(|(v, _)| v)
}

/// `"gn02 mlx5_0" port 1`.
fn end_words(end: &NetEnd) -> String {
    let name = end.desc.as_deref().map_or_else(
        || {
            end.guid
                .map_or_else(|| "a node".to_owned(), |g| g.to_string())
        },
        |d| format!("\"{}\"", d.trim()),
    );
    format!("{name} port {}", end.port)
}

/// The end a finding is about: the host adapter's, which a host's
/// operator can act on, else the first listed.
fn subject_end(p: &NetPort) -> &NetEnd {
    match &p.remote {
        Some(r) if r.node_type == Some(NodeType::Ca) && p.local.node_type != Some(NodeType::Ca) => {
            r
        }
        _ => &p.local,
    }
}

/// Both ends of the link are switches: an inter-switch link.
fn between_switches(p: &NetPort) -> bool {
    p.local.node_type == Some(NodeType::Switch)
        && p.remote
            .as_ref()
            .is_some_and(|r| r.node_type == Some(NodeType::Switch))
}

/// A speed's generation, FDR10 and FDR counted as one (the same switches
/// and adapters train either): how far apart two speeds are.
fn generation(speed: LaneGeneration) -> u8 {
    match speed {
        LaneGeneration::Sdr => 0,
        LaneGeneration::Ddr => 1,
        LaneGeneration::Qdr => 2,
        LaneGeneration::Fdr10 | LaneGeneration::Fdr => 3,
        LaneGeneration::Edr => 4,
        LaneGeneration::Hdr => 5,
        LaneGeneration::Ndr => 6,
        LaneGeneration::Xdr => 7,
    }
}

/// IB008.
fn check_trained_down(ctx: &Context<'_>, out: &mut Vec<Finding>) -> Coverage {
    let mut judged = 0;
    // A link named once, whatever number of listings show it (each host of
    // a fabric sees the same cables).
    let mut named: std::collections::BTreeSet<(EndKey, EndKey)> = std::collections::BTreeSet::new();
    for at in ctx.sections() {
        let SectionData::Ibnetdiscover(d) = &at.section.data else {
            continue;
        };
        let links = links(&d.ports);
        // Each link counts once, at its widest and fastest end's reading.
        let widths = links.iter().filter_map(|l| l.widest().0);
        let speeds = links.iter().filter_map(|l| l.widest().1);
        let (Some(width), Some(speed)) = (usual(widths), usual(speeds)) else {
            continue;
        };
        let switch_speed = usual(
            links
                .iter()
                .filter(|l| between_switches(l.first))
                .filter_map(|l| l.widest().1),
        );
        judged += links.len();
        for link in &links {
            let p = link.first;
            // Judged by its narrowest and slowest end.
            let (lanes, slowest) = link.narrowest();

            let narrow = lanes == Some(1) && width >= 4;
            let slow = slowest == Some(LaneGeneration::Sdr) && speed >= LaneGeneration::Fdr;
            let slow_between_switches = between_switches(p)
                && matches!((slowest, switch_speed), (Some(got), Some(usual))
                    if generation(usual) >= generation(got) + 2);
            if (!narrow && !slow && !slow_between_switches) || !named.insert(link.key) {
                continue;
            }
            let trained = link.narrowest_words();
            // When the ends disagree, each end's reading is said: which end
            // saw the link narrower or slower is where to look first.
            let disagreement = if link.ends_disagree() {
                let readings: Vec<String> = link
                    .lines
                    .iter()
                    .map(|l| format!("{} reads {}", end_words(&l.local), trained_words(l)))
                    .collect();
                format!(
                    "; its ends disagree ({}): the link is judged by the narrower, slower reading",
                    readings.join(", ")
                )
            } else {
                String::new()
            };
            let remote = p.remote.as_ref().map(end_words).unwrap_or_default();
            let what = match (narrow, slow) {
                (true, true) => format!("one lane of {width}, at the slowest speed"),
                (true, false) => format!("one lane of {width}"),
                (false, true) => "the slowest speed InfiniBand trains at".to_owned(),
                (false, false) => format!(
                    "between two switches whose links usually run {}",
                    switch_speed.map_or("???", LaneGeneration::name)
                ),
            };
            let end = subject_end(p);
            let mut f = IB008
                .finding(
                    Subject {
                        device: end.desc.as_deref().map(|d| d.trim().to_owned()),
                        port: Some(end.port),
                        lid: end.lid,
                        guid: end.guid,
                        ..Subject::default()
                    },
                    format!(
                        "link {} ↔ {remote} trained at {trained} ({what}); the fabric's links usually run {width}x{}{disagreement}",
                        end_words(&p.local),
                        speed.name(),
                    ),
                )
                .threshold(Threshold::new(
                    format!(
                        "the fabric's usual width and speed ({width}x{}): 1X against 4X or wider, SDR against FDR or faster; between switches, two generations below their usual speed; a link judged by its narrowest, slowest end",
                        speed.name()
                    ),
                    "IBA link training; infiniband-diags iblinkinfo `Could be`",
                ))
                .remediation("Reseat or replace the link's cable or transceiver; read the port with `mlxlink -d <device> -p <port>` (lanes, BER, cable) and `iblinkinfo` (`Could be`); move the cable to another switch port to tell a cable from a port.");
            for line in &link.lines {
                f = f.evidence(Evidence::new(
                    format!(
                        "ibnetdiscover: {} ↔ {}: {}",
                        end_words(&line.local),
                        line.remote.as_ref().map(end_words).unwrap_or_default(),
                        trained_words(line)
                    ),
                    line.span,
                    at.source(),
                ));
            }
            out.push(f);
        }
    }
    if judged == 0 {
        return Coverage::Skipped(
            "no ibnetdiscover link with a known width and speed in the input".to_owned(),
        );
    }
    Coverage::Checked(judged)
}

/// IB010.
fn check_nothing_discovered(ctx: &Context<'_>, out: &mut Vec<Finding>) -> Coverage {
    let mut checked = 0;
    for at in ctx.sections() {
        let SectionData::Ibnetdiscover(d) = &at.section.data else {
            continue;
        };
        // The topology file's layout only: `-p` lines say nothing of the
        // nodes a listing holds, and a node list (`ibhosts`, `-l`) prints
        // no links at all, nor every kind of node.
        if d.listed {
            continue;
        }
        let Some(first) = d.nodes.first() else {
            continue;
        };
        checked += 1;
        let alone = d.ports.is_empty() && d.nodes.iter().all(|n| n.node_type == NodeType::Ca);
        if !alone {
            continue;
        }
        let cut_possible = ctx.ends_input(at);
        let desc = first.desc.as_deref().map_or("this adapter", str::trim);
        let mut f = IB010
            .finding(
                // The host whose port this is: the listing starts from it.
                Subject {
                    host: at.section.host.clone(),
                    device: first.desc.as_deref().map(|d| d.trim().to_owned()),
                    guid: first.guid,
                    ..Subject::default()
                },
                if cut_possible {
                    format!("ibnetdiscover lists only \"{desc}\" and no link; the paste ends right after it, so it may be cut there: if not, its port reaches no switch")
                } else {
                    format!("ibnetdiscover from \"{desc}\" found no switch and no link: its port reaches nothing")
                },
            )
            .evidence(Evidence::new(
                format!(
                    "ibnetdiscover: {} node(s), all host adapters, no port line",
                    d.nodes.len()
                ),
                first.span,
                at.source(),
            ))
            .threshold(Threshold::new(
                "at least one link from the local port",
                "infiniband-diags ibnetdiscover discovers the subnet through the local port's link",
            ))
            .remediation("Check the port with `ibstat` (State, Physical state); reseat or replace the cable; check the switch port's state and LEDs.");
        if cut_possible {
            f = f.severity(Severity::Info);
        }
        out.push(f);
    }
    if checked == 0 {
        return Coverage::Skipped("no ibnetdiscover topology file in the input".to_owned());
    }
    Coverage::Checked(checked)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::testing::findings_of;

    fn ports_line(lanes: u32, speed: &str, n: u32) -> String {
        format!(
            "CA  {lid:>4}  1 0x0c42a10300c0{n:04x} {lanes}x {speed} - SW  1801 {n:>2} 0x1070fd0300bb0001 ( 'gn{n:02} mlx5_0' - 'leaf-01' )\n",
            lid = 200 + n
        )
    }

    #[test]
    fn a_one_lane_link_among_four_lane_ones_is_named_once() {
        let mut text = String::new();
        for n in 1..=6 {
            text.push_str(&ports_line(if n == 4 { 1 } else { 4 }, "HDR", n));
        }
        let f = findings_of(&IB008, &text);
        assert_eq!(f.len(), 1, "{f:?}");
        assert_eq!(f[0].subject.device.as_deref(), Some("gn04 mlx5_0"));
        assert!(f[0].message.contains("1xHDR"), "{}", f[0].message);
        assert!(
            f[0].message.contains("usually run 4xHDR"),
            "{}",
            f[0].message
        );
    }

    #[test]
    fn sdr_among_fast_links_is_named_and_split_or_older_links_are_not() {
        let mut text = String::new();
        for n in 1..=6 {
            let (lanes, speed) = match n {
                2 => (4, "SDR"),
                3 => (2, "NDR"), // a split port
                5 => (4, "HDR"), // an older adapter
                _ => (4, "NDR"),
            };
            text.push_str(&ports_line(lanes, speed, n));
        }
        let f = findings_of(&IB008, &text);
        assert_eq!(f.len(), 1, "{f:?}");
        assert!(f[0].message.contains("4xSDR"), "{}", f[0].message);
    }

    fn switch_link(port: u32, lanes: u32, speed: &str) -> String {
        format!(
            "SW  {lid:>4} {port:>2} 0x1070fd0300bb0001 {lanes}x {speed} - SW  {peer:>4} {port:>2} 0x1070fd0300cc0002 ( 'leaf-01' - 'spine-01' )\n",
            lid = 1801,
            peer = 1901
        )
    }

    #[test]
    fn an_inter_switch_link_two_generations_slow_is_named_one_is_not() {
        let mut text = String::new();
        for n in 1..=4 {
            text.push_str(&ports_line(4, "EDR", n));
        }
        for port in 20..=25 {
            let speed = match port {
                21 => "DDR",
                23 => "FDR", // one generation: a spine of the last generation
                _ => "EDR",
            };
            text.push_str(&switch_link(port, 4, speed));
        }
        let f = findings_of(&IB008, &text);
        assert_eq!(f.len(), 1, "{f:?}");
        assert!(f[0].message.contains("4xDDR"), "{}", f[0].message);
        assert!(
            f[0].message
                .contains("between two switches whose links usually run EDR"),
            "{}",
            f[0].message
        );
        assert_eq!(f[0].subject.port, Some(21));
        // A host adapter two generations slow is an older adapter: not judged.
        let mut text = String::new();
        for n in 1..=4 {
            text.push_str(&ports_line(4, if n == 2 { "QDR" } else { "EDR" }, n));
        }
        text.push_str(&switch_link(20, 4, "EDR"));
        assert!(findings_of(&IB008, &text).is_empty());
    }

    #[test]
    fn a_link_seen_from_both_ends_is_one_finding_with_both_lines() {
        let text = "Switch\t41 \"S-1070fd0300aa0010\"\t\t# \"leaf-07\" enhanced port 0 lid 12 lmc 0\n\
            [1]\t\"H-0c42a10300b1c2d0\"[1](c42a10300b1c2d0) \t\t# \"gn01 mlx5_0\" lid 31 4xHDR\n\
            [2]\t\"H-0c42a10300b1c2e0\"[1](c42a10300b1c2e0) \t\t# \"gn02 mlx5_0\" lid 32 1xHDR\n\
            [3]\t\"H-0c42a10300b1c2f0\"[1](c42a10300b1c2f0) \t\t# \"gn03 mlx5_0\" lid 33 4xHDR\n\
            \n\
            Ca\t1 \"H-0c42a10300b1c2e0\"\t\t# \"gn02 mlx5_0\"\n\
            [1](c42a10300b1c2e0) \t\"S-1070fd0300aa0010\"[2]\t\t# lid 32 lmc 0 \"leaf-07\" lid 12 1xHDR\n";
        let f = findings_of(&IB008, text);
        assert_eq!(f.len(), 1, "{f:?}");
        assert_eq!(f[0].evidence.len(), 2, "{:?}", f[0].evidence);
        assert_eq!(f[0].subject.device.as_deref(), Some("gn02 mlx5_0"));
        assert_eq!(f[0].subject.lid, Some(32));
    }

    /// The two ends of a link each print their own port's width and speed.
    /// When one says 1X and the other 4X, the link is judged by the 1X,
    /// whichever end is read first, both readings are said, and the
    /// degraded ends do not pull the fabric's usual width down.
    #[test]
    fn a_link_whose_ends_disagree_is_judged_by_its_narrowest_end() {
        let switch = |lanes: [u32; 3]| {
            format!(
                "Switch\t36 \"S-1070fd0300aa0010\"\t\t# \"leaf-07\" enhanced port 0 lid 12 lmc 0\n\
                 [1]\t\"H-0c42a10300b1c2d0\"[1](c42a10300b1c2d0) \t\t# \"gn01 mlx5_0\" lid 31 {}xHDR\n\
                 [2]\t\"H-0c42a10300b1c2e0\"[1](c42a10300b1c2e0) \t\t# \"gn02 mlx5_0\" lid 32 {}xHDR\n\
                 [3]\t\"H-0c42a10300b1c2f0\"[1](c42a10300b1c2f0) \t\t# \"gn03 mlx5_0\" lid 33 {}xHDR\n\n",
                lanes[0], lanes[1], lanes[2]
            )
        };
        // Host `n` (1–3): its GUID ends in d0, e0, f0, on switch port `n`.
        let ca = |n: u32, lanes: u32| {
            let g = ["d0", "e0", "f0"][n as usize - 1];
            format!(
                "Ca\t1 \"H-0c42a10300b1c2{g}\"\t\t# \"gn0{n} mlx5_0\"\n\
                 [1](c42a10300b1c2{g}) \t\"S-1070fd0300aa0010\"[{n}]\t\t# lid 3{n} lmc 0 \"leaf-07\" lid 12 {lanes}xHDR\n\n"
            )
        };
        // gn01 and gn02 read 1X at the adapter, 4X at the switch; gn03 4X
        // at both. The switch's lines come first.
        let text = format!("{}{}{}{}", switch([4, 4, 4]), ca(1, 1), ca(2, 1), ca(3, 4));
        let f = findings_of(&IB008, &text);
        assert_eq!(f.len(), 2, "{f:?}");
        for (finding, name) in f.iter().zip(["gn01 mlx5_0", "gn02 mlx5_0"]) {
            assert_eq!(finding.subject.device.as_deref(), Some(name));
            let m = &finding.message;
            assert!(m.contains("trained at 1xHDR"), "{m}");
            assert!(m.contains("usually run 4xHDR"), "{m}");
            assert!(m.contains("ends disagree"), "{m}");
            assert!(m.contains("\"leaf-07\" port"), "{m}");
            let said: Vec<bool> = finding
                .evidence
                .iter()
                .map(|e| e.text.ends_with("1xHDR"))
                .collect();
            assert_eq!(
                said,
                [false, true],
                "each line with its own reading: {:?}",
                finding.evidence
            );
        }
        // Read the other way round (the 1X end first), the same links.
        let text = format!("{}{}{}{}", ca(1, 4), ca(2, 4), ca(3, 4), switch([1, 1, 4]));
        let f = findings_of(&IB008, &text);
        assert_eq!(f.len(), 2, "{f:?}");
        assert!(f.iter().all(|f| f.message.contains("trained at 1xHDR")));
        // Ends that agree say nothing of a disagreement.
        let text = format!("{}{}{}{}", switch([1, 4, 4]), ca(1, 1), ca(2, 4), ca(3, 4));
        let f = findings_of(&IB008, &text);
        assert_eq!(f.len(), 1, "{f:?}");
        assert!(!f[0].message.contains("disagree"), "{}", f[0].message);
    }

    #[test]
    fn a_link_in_two_listings_is_named_once() {
        let mut listing = String::new();
        for n in 1..=4 {
            listing.push_str(&ports_line(if n == 2 { 1 } else { 4 }, "EDR", n));
        }
        let text = format!("$ ibnetdiscover -p\n{listing}$ ibnetdiscover -p\n{listing}");
        let f = findings_of(&IB008, &text);
        assert_eq!(f.len(), 1, "{f:?}");
    }

    const ALONE: &str = "vendid=0x2c9\ndevid=0x1021\nsysimgguid=0xb8e92403aa000101\ncaguid=0xb8e92403aa000101\nCa\t1 \"H-b8e92403aa000101\"\t\t# \"gn17 HCA-1\"\n";

    #[test]
    fn an_adapter_alone_is_an_error_when_output_follows_and_info_at_the_end() {
        let text = format!("$ ibnetdiscover\n{ALONE}$ date\nMon Nov 30 00:53:23 UTC 2026\n");
        let f = findings_of(&IB010, &text);
        assert_eq!(f.len(), 1, "{f:?}");
        assert_eq!(f[0].severity, Severity::Error);
        assert_eq!(f[0].subject.device.as_deref(), Some("gn17 HCA-1"));
        let f = findings_of(&IB010, &format!("$ ibnetdiscover\n{ALONE}"));
        assert_eq!(f.len(), 1, "{f:?}");
        assert_eq!(
            f[0].severity,
            Severity::Info,
            "a paste may be cut after the adapter"
        );
        assert!(f[0].message.contains("may be cut"), "{}", f[0].message);
    }

    #[test]
    fn a_listing_with_a_switch_or_a_link_is_not_alone() {
        let text =
            "Switch\t41 \"S-1070fd0300aa0010\"\t\t# \"leaf-07\" enhanced port 0 lid 12 lmc 0\n\
            [1]\t\"H-0c42a10300b1c2d0\"[1](c42a10300b1c2d0) \t\t# \"gn01 mlx5_0\" lid 31 4xHDR\n";
        assert!(findings_of(&IB010, text).is_empty());
    }

    #[test]
    fn unconnected_ports_and_unknown_speeds_are_not_judged() {
        let text = "SW  1801 37 0x1070fd0300bb0001 1x SDR                                    'leaf-01'\n\
                    CA   201  1 0x0c42a10300c0ffee 4x ??? - SW  1801 10 0x1070fd0300bb0001 ( 'gn01 mlx5_0' - 'leaf-01' )\n";
        assert!(findings_of(&IB008, text).is_empty());
    }
}
