//! `iblinkinfo`: the links of the whole fabric, node by node.
//!
//! Forms handled (infiniband-diags `iblinkinfo.c`, states and speeds from
//! libibmad `dump.c`):
//! - grouped (default): `CA: <desc>:` and `Switch: 0x<guid> <desc>:` headers,
//!   then one line per port, `<lid> <port>[<ext>] ==(<width> <speed>
//!   <state>/<phys>)==>  <rlid> <rport>[<rext>] "<remote desc>" (<hints>)`,
//!   with the port GUID first on CA lines;
//! - Down ports: `==(              Down/ Polling)==>             [  ] "" ( )`,
//!   no width or speed (not valid on a Down port, IBA C14-24.2.1);
//! - up ports with no far end: `"Port not available"`;
//! - states that overflow their column (`Initialize/  LinkUp`), the older
//!   one-space `Active/ LinkUp`, `10.0 Gbps (FDR10)`;
//! - the `( )` hints: `Could be 4X`, `Could be 25.78125 Gbps`,
//!   `Could be FDR10 (…)`, iblinkinfo's own degraded-link detector;
//! - `-l`: one line per port with the node GUID and description first and
//!   the remote GUID before the remote LID;
//! - `-p`: ` (HOQ:<n> VL_Stall:<n>)` after the link;
//! - grep-filtered pastes: port lines with no header. Such lines are grouped
//!   into header-less nodes by GUID or LID (a switch's ports share its LID).

use crate::model::ib::{Guid, PhysState, PortState};
use crate::model::iblinkinfo::{Iblinkinfo, LinkNode, LinkPort, LinkWidth, NodeType, RemotePort};
use crate::parse::text::{decimal_f64, decimal_u32, Unread};
use crate::parse::{Block, Line, Parsed, Spec};

pub(crate) const FORMAT: Spec<Iblinkinfo> = Spec {
    command: |argv| argv.first() == Some(&"iblinkinfo"),
    starts: |b| b.is_ascii_digit() || matches!(b, b'"' | b'C' | b'S' | b'R'),
    detect,
    parse,
    summary,
    attach_command: None,
    labels: &["switch", "ca", "router"],
};

/// What the last node was opened by, so that the next port line knows
/// whether it belongs to it.
#[derive(Debug, PartialEq)]
enum Current {
    None,
    /// A `CA:`/`Switch:` header: every port line until the next header.
    Header,
    /// Header-less lines sharing this identity (`-l` GUID + description, or
    /// the GUID or LID of a grep-filtered line).
    Identity(String),
}

/// Reads `iblinkinfo` output.
#[must_use]
pub fn parse(lines: &[Line<'_>]) -> Parsed<Iblinkinfo> {
    let mut out = Iblinkinfo::default();
    let mut unread = Unread::default();
    let mut current = Current::None;
    for line in lines.iter().filter(|l| !l.is_blank()) {
        read_line(line, &mut out, &mut current, &mut unread);
    }
    Parsed {
        value: out,
        warnings: unread.finish(),
    }
}

fn read_line(line: &Line<'_>, out: &mut Iblinkinfo, current: &mut Current, unread: &mut Unread) {
    let t = line.text().trim();
    if let Some((node_type, guid, desc)) = header(t) {
        out.nodes.push(LinkNode {
            node_type: Some(node_type),
            guid,
            desc: Some(desc.to_owned()),
            ports: Vec::new(),
            span: line.span(),
        });
        *current = Current::Header;
        return;
    }
    if !is_port_line(t) {
        unread.line(line, "not an iblinkinfo header or port line");
        return;
    }
    let Some(read) = port_line(t, line) else {
        unread.line(line, "iblinkinfo port line in an unknown layout");
        return;
    };
    let identity = match (&read.node_desc, read.port.guid) {
        (Some(desc), guid) => Some(format!("{guid:?} {desc}")),
        (None, _) if *current == Current::Header => None,
        (None, Some(guid)) => Some(guid.to_string()),
        (None, None) => Some(format!("lid {}", read.port.lid)),
    };
    let needs_node = match &identity {
        Some(id) => *current != Current::Identity(id.clone()),
        None => out.nodes.is_empty(),
    };
    if needs_node {
        out.nodes.push(LinkNode {
            node_type: None,
            guid: read.node_desc.as_ref().and(read.port.guid),
            desc: read.node_desc.clone(),
            ports: Vec::new(),
            span: line.span(),
        });
    }
    if let Some(id) = identity {
        *current = Current::Identity(id);
    }
    if let Some(node) = out.nodes.last_mut() {
        node.span = node.span.join(line.span());
        node.ports.push(read.port);
    }
}

/// `CA: host01 mlx5_0:` → (Ca, None, "host01 mlx5_0");
/// `Switch: 0x0002c90300a1b2c3 MF0;sw-a:MQM8700/U1:` → (Switch, Some(guid), desc).
fn header(t: &str) -> Option<(NodeType, Option<Guid>, &str)> {
    let (word, rest) = t.split_once(": ")?;
    let node_type = match word {
        "CA" => NodeType::Ca,
        "Switch" => NodeType::Switch,
        "Router" => NodeType::Router,
        _ => return None,
    };
    if rest.contains("==(") {
        return None;
    }
    // An author's ` # note` after the header's closing colon (`CA: node01
    // mlx5_0: # 计算节点`) is not part of the description. A description
    // may hold `#` and `:` (switch names `MF0;sw-a:MQM8700/U1`), never the
    // closing colon then ` #`.
    let rest = match rest.strip_suffix(':') {
        Some(rest) => rest,
        None => rest.split_once(": #").map(|(header, _)| header)?,
    };
    if node_type == NodeType::Switch {
        let (guid, desc) = rest.split_once(' ').unwrap_or((rest, ""));
        if let Some(g) = guid.starts_with("0x").then(|| Guid::parse(guid)).flatten() {
            return Some((node_type, Some(g), desc));
        }
    }
    Some((node_type, None, rest))
}

/// Cheap test for the `==(…)==>` arrow every port line has.
fn is_port_line(t: &str) -> bool {
    t.contains("==(") && t.contains(")==>")
}

/// A port line, and the node description it carries in the `-l` form.
struct PortRead {
    node_desc: Option<String>,
    port: LinkPort,
}

fn port_line(t: &str, line: &Line<'_>) -> Option<PortRead> {
    let open = t.find("==(")?;
    let close = open + t.get(open..)?.find(")==>")?;
    let local = t.get(..open)?.trim();
    let link = t.get(open + 3..close)?;
    let remote = t.get(close + 4..)?.trim();

    let (guid, node_desc, lid, port, ext_port) = local_part(local)?;
    let mut p = LinkPort::new(lid, port, line.span());
    p.guid = guid;
    p.ext_port = ext_port;
    read_link(link, &mut p)?;
    read_remote(remote, &mut p)?;
    Some(PortRead { node_desc, port: p })
}

type Local = (Option<Guid>, Option<String>, u32, u32, Option<u32>);

/// `0x… 12 1[  ]`, `12 1[  ]`, or (`-l`) `0x… "desc" 12 1[  ]`.
fn local_part(local: &str) -> Option<Local> {
    let (guid, rest) = leading_guid(local)?;
    let (desc, rest) = match rest.strip_prefix('"') {
        Some(quoted) => {
            let end = quoted.rfind('"')?;
            let desc = quoted.get(..end)?.trim_start();
            (Some(desc.to_owned()), quoted.get(end + 1..)?.trim())
        }
        None => (None, rest),
    };
    let (lid, port, ext) = lid_port(rest)?;
    Some((guid, desc, lid, port, ext))
}

/// An optional leading `0x…` GUID and the rest.
fn leading_guid(text: &str) -> Option<(Option<Guid>, &str)> {
    let t = text.trim_start();
    if !t.starts_with("0x") {
        return Some((None, t));
    }
    let (word, rest) = t.split_once(' ').unwrap_or((t, ""));
    Some((Some(Guid::parse(word)?), rest.trim_start()))
}

/// `12    1[  ]` → (12, 1, None); `12 33[5]` → (12, 33, Some(5)).
fn lid_port(text: &str) -> Option<(u32, u32, Option<u32>)> {
    let (numbers, ext) = match text.split_once('[') {
        Some((numbers, rest)) => {
            let inside = rest.trim_end().strip_suffix(']')?.trim();
            let ext = if inside.is_empty() {
                None
            } else {
                Some(decimal_u32(inside).ok()?)
            };
            (numbers, ext)
        }
        None => (text, None),
    };
    let mut words = numbers.split_whitespace();
    let lid = decimal_u32(words.next()?).ok()?;
    let port = decimal_u32(words.next()?).ok()?;
    words.next().is_none().then_some((lid, port, ext))
}

/// ` 4X 25.78125 Gbps Active/  LinkUp) (HOQ:18 VL_Stall:7` or `   Down/ Polling`.
fn read_link(link: &str, p: &mut LinkPort) -> Option<()> {
    let (link, extra) = match link.split_once(") (") {
        Some((l, e)) => (l, Some(e)),
        None => (link, None),
    };
    if let Some(extra) = extra {
        let (hoq, stall) = extra.trim().split_once(' ')?;
        p.hoq = Some(decimal_u32(hoq.strip_prefix("HOQ:")?).ok()?);
        p.vl_stall = Some(decimal_u32(stall.trim().strip_prefix("VL_Stall:")?).ok()?);
    }
    let (left, phys) = link.rsplit_once('/')?;
    p.physical_state = PhysState::parse(phys);
    let left = left.trim();
    let (rest, state) = left.rsplit_once(' ').unwrap_or(("", left));
    p.state = PortState::parse(state);
    let rest = rest.trim();
    if rest.is_empty() {
        return Some(());
    }
    let (width, speed) = if rest.starts_with("undefined (") {
        let end = rest.find(')')?;
        (rest.get(..=end)?, rest.get(end + 1..)?)
    } else {
        rest.split_once(' ')?
    };
    p.width = Some(LinkWidth::parse(width));
    let speed = speed.trim();
    p.speed_gbps_per_lane = lane_gbps(speed);
    p.speed_text = Some(speed.to_owned());
    Some(())
}

/// `25.78125 Gbps`, `10.0 Gbps (FDR10)` → the number; `undefined (3)` → None.
fn lane_gbps(speed: &str) -> Option<f64> {
    let (number, rest) = speed.split_once(' ')?;
    rest.starts_with("Gbps")
        .then(|| decimal_f64(number))
        .flatten()
}

/// Everything after `==>`.
fn read_remote(remote: &str, p: &mut LinkPort) -> Option<()> {
    if remote == "\"Port not available\"" {
        p.port_not_available = true;
        return Some(());
    }
    if remote.starts_with('[') {
        // `[  ] "" ( )`: a Down port with nothing known about the far end.
        return remote.ends_with(')').then_some(());
    }
    let (ids, rest) = remote.split_once('"')?;
    let (guid, ids) = leading_guid(ids)?;
    let (lid, port, ext_port) = lid_port(ids.trim())?;
    let end = rest.rfind("\" (")?;
    let desc = rest.get(..end)?;
    let hints = rest.get(end + 3..)?.strip_suffix(')')?;
    p.remote = Some(RemotePort {
        guid,
        lid,
        port,
        ext_port,
        desc: desc.to_owned(),
    });
    read_hints(hints, p);
    Some(())
}

/// `Could be 4X Could be 25.78125 Gbps`, ` Could be FDR10`, or blank.
fn read_hints(hints: &str, p: &mut LinkPort) {
    for hint in hints
        .split("Could be ")
        .map(str::trim)
        .filter(|h| !h.is_empty())
    {
        let width = LinkWidth::parse(hint);
        if width.lanes.is_some() && p.could_be_width.is_none() {
            p.could_be_width = Some(width);
        } else {
            p.could_be_speed_gbps_per_lane = lane_gbps(hint);
            p.could_be_speed = Some(hint.to_owned());
        }
    }
}

/// A header followed by a port line, or a port line (grep-filtered and `-l`
/// pastes have no headers).
///
/// The key is the header, or for a `-l` line its node GUID, description and
/// port, so that a repeated one starts a new snapshot. A grouped port line
/// names only a LID and a port, and without a subnet manager every LID is 0,
/// so its key is made unique with the line number: it never splits a section.
fn detect(lines: &[Line<'_>]) -> Option<Block> {
    let first = lines.first()?;
    let t = first.text().trim();
    if is_port_line(t) {
        let local = t.split("==(").next()?.trim();
        let (_, desc, ..) = local_part(local)?;
        return Some(match desc {
            Some(_) => Block::keyed(local),
            None => Block::keyed(format!("{local} (line {})", first.number)),
        });
    }
    header(t)?;
    let next = lines.iter().skip(1).find(|l| !l.is_blank())?;
    is_port_line(next.text()).then(|| Block::keyed(t))
}

/// Renders a model in iblinkinfo's layout: grouped with headers for nodes
/// that have a type, `-l` lines for nodes with a description but no type,
/// bare port lines otherwise. Used by the round-trip tests.
#[must_use]
pub fn render(info: &Iblinkinfo) -> String {
    let mut s = String::new();
    for node in &info.nodes {
        match node.node_type {
            Some(ty) => {
                let word = match ty {
                    NodeType::Ca => "CA",
                    NodeType::Switch => "Switch",
                    NodeType::Router => "Router",
                };
                let desc = node.desc.as_deref().unwrap_or("");
                match node.guid {
                    Some(g) => s.push_str(&format!("{word}: {g} {desc}:\n")),
                    None => s.push_str(&format!("{word}: {desc}:\n")),
                }
                for p in &node.ports {
                    s.push_str("      ");
                    render_port(&mut s, p, None);
                }
            }
            None => {
                for p in &node.ports {
                    match &node.desc {
                        Some(desc) => render_port(&mut s, p, Some(desc)),
                        None => {
                            s.push_str("      ");
                            render_port(&mut s, p, None);
                        }
                    }
                }
            }
        }
    }
    s
}

fn render_port(s: &mut String, p: &LinkPort, line_desc: Option<&str>) {
    let ext = |e: Option<u32>| e.map(|v| v.to_string()).unwrap_or_default();
    match line_desc {
        Some(desc) => {
            let guid = p.guid.map(|g| g.to_string()).unwrap_or_default();
            s.push_str(&format!("{guid} \"{desc:>30}\" "));
        }
        None => {
            if let Some(g) = p.guid {
                s.push_str(&format!("{g} "));
            }
        }
    }
    s.push_str(&format!(
        "{:6} {:4}[{:>2}] ==",
        p.lid,
        p.port,
        ext(p.ext_port)
    ));
    let state = state_text(p.state);
    let phys = phys_text(p.physical_state);
    match (&p.width, &p.speed_text) {
        (Some(w), Some(speed)) => {
            s.push_str(&format!("({:>3} {speed:>18} {state:>6}/{phys:>8})", w.text));
        }
        _ => s.push_str(&format!("(              {state:>6}/{phys:>8})")),
    }
    if let (Some(hoq), Some(stall)) = (p.hoq, p.vl_stall) {
        s.push_str(&format!(" (HOQ:{hoq} VL_Stall:{stall})"));
    }
    s.push_str("==>  ");
    match &p.remote {
        Some(r) => {
            if let Some(g) = r.guid {
                s.push_str(&format!("{g} "));
            }
            let width = p
                .could_be_width
                .as_ref()
                .map(|w| format!("Could be {}", w.text))
                .unwrap_or_default();
            let speed = p
                .could_be_speed
                .as_ref()
                .map(|v| format!("Could be {v}"))
                .unwrap_or_default();
            s.push_str(&format!(
                "{:6} {:4}[{:>2}] \"{}\" ({width} {speed})\n",
                r.lid,
                r.port,
                ext(r.ext_port),
                r.desc
            ));
        }
        None if p.port_not_available => s.push_str("    \"Port not available\"\n"),
        None => s.push_str("           [  ] \"\" ( )\n"),
    }
}

/// libibmad's names (`Initialize`, not ibstat's `Initializing`); a state
/// outside the spec prints as libibmad's table entry 0, `NoChange`.
fn state_text(state: PortState) -> &'static str {
    state.libibmad_name().unwrap_or("NoChange")
}

/// libibmad's names; a state outside the spec prints as iblinkinfo's `?(8)`.
fn phys_text(state: PhysState) -> &'static str {
    state.libibmad_name().unwrap_or("?(8)")
}

/// `3 node(s), 10 port(s): 8 Active, 2 Down; 1 could be wider or faster`.
#[must_use]
pub fn summary(info: &Iblinkinfo) -> String {
    let mut states: Vec<(&str, usize)> = Vec::new();
    let mut ports = 0usize;
    let mut degraded = 0usize;
    for (_, p) in info.ports() {
        ports += 1;
        degraded += usize::from(p.degraded());
        let name = state_text(p.state);
        match states.iter_mut().find(|(n, _)| *n == name) {
            Some((_, count)) => *count += 1,
            None => states.push((name, 1)),
        }
    }
    let states: Vec<String> = states.iter().map(|(n, c)| format!("{c} {n}")).collect();
    let mut s = format!(
        "{} node(s), {ports} port(s){}{}",
        info.nodes.len(),
        if states.is_empty() { "" } else { ": " },
        states.join(", ")
    );
    if degraded > 0 {
        s.push_str(&format!("; {degraded} could be wider or faster"));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::iblinkinfo::LaneGeneration;
    use crate::parse::lines_of;

    /// Built from the printf formats of iblinkinfo.c, field by field.
    const GROUPED: &str = r#"CA: node01 mlx5_0:
      0x0c42a10300a1b2c3      7    1[  ] ==( 4X        53.125 Gbps Active/  LinkUp)==>       3   11[  ] "MF0;leaf01:MQM8700/U1" ( )
Switch: 0x0c42a103006f0000 MF0;leaf01:MQM8700/U1:
                3    1[  ] ==( 4X       106.25 Gbps Active/  LinkUp)==>      12    1[  ] "node02 mlx5_0" ( )
                3    2[  ] ==( 1X        53.125 Gbps Active/  LinkUp)==>      13    1[  ] "node03 mlx5_0" (Could be 4X Could be 106.25 Gbps)
                3    3[  ] ==(              Down/ Polling)==>             [  ] "" ( )
                3    4[  ] ==( 4X     25.78125 Gbps Initialize/  LinkUp)==>      14    1[  ] "node04 mlx5_0" ( )
                3    5[  ] ==( 4X   10.0 Gbps (FDR10) Active/  LinkUp)==>      15    1[  ] "node05 mlx4_0" ( )
                3    6[  ] ==( 4X     25.78125 Gbps Active/  LinkUp)==>    "Port not available"
"#;

    #[test]
    fn reads_the_grouped_form() {
        let parsed = parse(&lines_of(GROUPED));
        assert!(parsed.warnings.is_empty(), "{:?}", parsed.warnings);
        let nodes = &parsed.value.nodes;
        assert_eq!(nodes.len(), 2);
        assert_eq!(nodes[0].node_type, Some(NodeType::Ca));
        assert_eq!(nodes[0].desc.as_deref(), Some("node01 mlx5_0"));
        let ca = &nodes[0].ports[0];
        assert_eq!(ca.guid, Some(Guid(0x0c42_a103_00a1_b2c3)));
        assert_eq!((ca.lid, ca.port), (7, 1));
        assert_eq!(ca.width.as_ref().unwrap().lanes, Some(4));
        assert_eq!(ca.speed_gbps_per_lane, Some(53.125));
        assert_eq!(ca.generation(), Some(LaneGeneration::Hdr));
        assert_eq!(ca.nominal_rate_gbps(), Some(200.0));
        let r = ca.remote.as_ref().unwrap();
        assert_eq!(
            (r.lid, r.port, r.desc.as_str()),
            (3, 11, "MF0;leaf01:MQM8700/U1")
        );
        assert!(!ca.degraded());

        let sw = &nodes[1];
        assert_eq!(sw.node_type, Some(NodeType::Switch));
        assert_eq!(sw.guid, Some(Guid(0x0c42_a103_006f_0000)));
        assert_eq!(sw.ports.len(), 6);
        let ndr = &sw.ports[0];
        assert_eq!(ndr.rate_gbps(), Some(425.0));
        assert_eq!(ndr.nominal_rate_gbps(), Some(400.0));
        let narrow = &sw.ports[1];
        assert_eq!(narrow.width.as_ref().unwrap().lanes, Some(1));
        assert_eq!(narrow.could_be_width.as_ref().unwrap().lanes, Some(4));
        assert_eq!(narrow.could_be_speed.as_deref(), Some("106.25 Gbps"));
        assert_eq!(narrow.could_be_speed_gbps_per_lane, Some(106.25));
        let down = &sw.ports[2];
        assert_eq!(down.state, PortState::Down);
        assert_eq!(down.physical_state, PhysState::Polling);
        assert!(down.width.is_none() && down.remote.is_none());
        let init = &sw.ports[3];
        assert_eq!(init.state, PortState::Initializing);
        assert_eq!(init.physical_state, PhysState::LinkUp);
        let fdr10 = &sw.ports[4];
        assert_eq!(fdr10.speed_gbps_per_lane, Some(10.0));
        assert_eq!(fdr10.generation(), Some(LaneGeneration::Fdr10));
        assert_eq!(fdr10.nominal_rate_gbps(), Some(40.0));
        assert!(sw.ports[5].port_not_available);
        assert_eq!((sw.span.first_line, sw.span.last_line), (3, 9));
    }

    #[test]
    fn edr_signalling_rate_differs_from_its_name() {
        let text = "      0x0c42a10300a1b2c3     7    1[  ] ==( 4X     25.78125 Gbps Active/  LinkUp)==>       3   11[  ] \"sw\" ( )\n";
        let p = &parse(&lines_of(text)).value.nodes[0].ports[0];
        let rate = p.rate_gbps().unwrap();
        assert!((rate - 103.125).abs() < 1e-9, "{rate}");
        assert_eq!(p.nominal_rate_gbps(), Some(100.0));
    }

    #[test]
    fn a_note_after_a_headers_colon_is_not_its_description() {
        assert_eq!(
            header("CA: lab-n07 mlx4_0: # 计算节点"),
            Some((NodeType::Ca, None, "lab-n07 mlx4_0"))
        );
        assert_eq!(
            header("Switch: 0x0002c9020046d111 MF0;sw#3:IS5030/U1: # 接入交换机"),
            Some((
                NodeType::Switch,
                Some(Guid(0x0002_c902_0046_d111)),
                "MF0;sw#3:IS5030/U1"
            ))
        );
        // A `#` and colons inside the description stay in it.
        assert_eq!(
            header("Switch: 0x0002c9020046d111 MF0;sw #3:IS5030/U1:"),
            Some((
                NodeType::Switch,
                Some(Guid(0x0002_c902_0046_d111)),
                "MF0;sw #3:IS5030/U1"
            ))
        );
        assert_eq!(header("CA: lab-n07 mlx4_0 # no colon"), None);
    }

    #[test]
    fn line_form_and_additional_fields() {
        let text = concat!(
            "0x0c42a103006f0000 \"         MF0;leaf01:MQM8700/U1\"      3    1[  ] ==( 4X 25.78125 Gbps Active/  LinkUp) (HOQ:18 VL_Stall:7)==>  0x0c42a10300a1b2c3     12    1[  ] \"node02 mlx5_0\" ( Could be 53.125 Gbps)\n",
            "0x0c42a103006f0000 \"         MF0;leaf01:MQM8700/U1\"      3    2[ 5] ==(              Down/Disabled)==>             [  ] \"\" ( )\n",
            "0x0c42a10300a1b2c4 \"                 node03 mlx5_0\"     13    1[  ] ==( 4X 25.78125 Gbps Active/ LinkUp)==>  0x0c42a103006f0000      3    9[  ] \"MF0;leaf01:MQM8700/U1\" ( )\n",
        );
        let parsed = parse(&lines_of(text));
        assert!(parsed.warnings.is_empty(), "{:?}", parsed.warnings);
        let nodes = &parsed.value.nodes;
        assert_eq!(nodes.len(), 2);
        assert_eq!(nodes[0].node_type, None);
        assert_eq!(nodes[0].desc.as_deref(), Some("MF0;leaf01:MQM8700/U1"));
        assert_eq!(nodes[0].guid, Some(Guid(0x0c42_a103_006f_0000)));
        let first = &nodes[0].ports[0];
        assert_eq!((first.hoq, first.vl_stall), (Some(18), Some(7)));
        let r = first.remote.as_ref().unwrap();
        assert_eq!(r.guid, Some(Guid(0x0c42_a103_00a1_b2c3)));
        assert_eq!(first.could_be_width, None);
        assert_eq!(first.could_be_speed_gbps_per_lane, Some(53.125));
        assert_eq!(nodes[0].ports[1].ext_port, Some(5));
        assert_eq!(nodes[0].ports[1].physical_state, PhysState::Disabled);
        assert_eq!(nodes[1].ports[0].physical_state, PhysState::LinkUp);
    }

    #[test]
    fn grep_filtered_lines_group_by_lid() {
        let text = concat!(
            "           3    2[  ] ==( 1X 53.125 Gbps Active/  LinkUp)==>      13    1[  ] \"node03\" (Could be 4X )\n",
            "           3    7[  ] ==( 2X 53.125 Gbps Active/  LinkUp)==>      19    1[  ] \"node09\" (Could be 4X )\n",
            "           4    1[  ] ==( 1X 53.125 Gbps Active/  LinkUp)==>      21    1[  ] \"node11\" (Could be 4X )\n",
        );
        let parsed = parse(&lines_of(text));
        assert!(parsed.warnings.is_empty(), "{:?}", parsed.warnings);
        let sizes: Vec<usize> = parsed.value.nodes.iter().map(|n| n.ports.len()).collect();
        assert_eq!(sizes, [2, 1]);
        assert!(parsed.value.ports().all(|(_, p)| p.degraded()));
    }

    #[test]
    fn older_layouts_without_padding() {
        // Older infiniband-diags: speed not padded to 18 columns, one space
        // before LinkUp, CA lines indented by four, a switch without description.
        let text = concat!(
            "CA: hostA HCA-1:\n",
            "    0x0002c903000d7aad      5    1[  ] ==( 4X 10.0 Gbps Active/ LinkUp)==>       2    4[  ] \"Infiniscale-IV Mellanox Technologies\" ( )\n",
            "Switch: 0x0002c9020046c588:\n",
            "         223   33[  ] ==( 4X  10.0 Gbps (FDR10) Active/  LinkUp)==>     145    1[  ] \"gpfs HCA-1\" ( )\n",
            "           1   35[  ] ==( 4X  5.0 Gbps Active/  LinkUp)==>       2    1[  ] \"gw\" ( Could be 10.0 Gbps)\n",
        );
        let parsed = parse(&lines_of(text));
        assert!(parsed.warnings.is_empty(), "{:?}", parsed.warnings);
        let nodes = &parsed.value.nodes;
        assert_eq!(nodes[0].ports[0].physical_state, PhysState::LinkUp);
        assert_eq!(nodes[0].ports[0].speed_gbps_per_lane, Some(10.0));
        assert_eq!(nodes[1].desc.as_deref(), Some(""));
        assert_eq!(nodes[1].guid, Some(Guid(0x0002_c902_0046_c588)));
        assert_eq!(nodes[1].ports[0].generation(), Some(LaneGeneration::Fdr10));
        let slow = &nodes[1].ports[1];
        assert_eq!(slow.generation(), Some(LaneGeneration::Ddr));
        assert_eq!(slow.could_be_speed_gbps_per_lane, Some(10.0));
        assert_eq!(slow.could_be_width, None);
    }

    #[test]
    fn broken_lines_are_warnings() {
        let text = "CA: node01 mlx5_0:\n      0x0c42a10300a1b2c3 seven 1[  ] ==( 4X 53.125 Gbps Active/  LinkUp)==> 3 1[  ] \"x\" ( )\nsomething else\n      0x0c42a10300a1b2c3      7    2[  ] ==(              Down/ Polling)==>             [  ] \"\" ( )\n";
        let parsed = parse(&lines_of(text));
        let lines: Vec<usize> = parsed.warnings.iter().map(|w| w.span.first_line).collect();
        assert_eq!(lines, [2, 3]);
        assert_eq!(parsed.value.nodes[0].ports.len(), 1);
        assert_eq!(parsed.value.nodes[0].ports[0].port, 2);
    }

    #[test]
    fn detects_headers_before_ports_and_port_lines() {
        let lines = lines_of(GROUPED);
        assert_eq!(detect(&lines).unwrap().key, "CA: node01 mlx5_0:");
        assert!(detect(lines.get(3..).unwrap()).is_some());
        assert!(detect(&lines_of("CA: node01 mlx5_0:\nsomething")).is_none());
        assert!(detect(&lines_of("CA 'mlx5_0'")).is_none());
    }

    #[test]
    fn render_then_parse_gives_the_same_model() {
        let first = parse(&lines_of(GROUPED)).value;
        let again = parse(&lines_of(&render(&first)));
        assert!(again.warnings.is_empty(), "{:?}", again.warnings);
        assert_eq!(strip_spans(first), strip_spans(again.value));
    }

    fn strip_spans(mut m: Iblinkinfo) -> Iblinkinfo {
        for n in &mut m.nodes {
            n.span = crate::span::LineSpan::line(1);
            for p in &mut n.ports {
                p.span = crate::span::LineSpan::line(1);
            }
        }
        m
    }
}
