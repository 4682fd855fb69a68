//! `ibnetdiscover` (infiniband-diags `ibnetdiscover.c`), in its two
//! layouts.
//!
//! The topology file (the default; tabs between the fields):
//!
//! ```text
//! # Topology file: generated on Wed Aug  6 16:11:23 2025
//! vendid=0x2c9
//! devid=0xd2f2
//! switchguid=0x2c5eab0300b87b40(2c5eab0300b87b40)
//! Switch    65 "S-2c5eab0300b87b40"        # "MF0;leaf-04:MQM9701/U1" enhanced port 0 lid 73 lmc 0
//! [1]    "H-e09d7303007a4bd8"[1](e09d7303007a4bd8)         # "node01 mlx5_5" lid 647 4xNDR
//!
//! Ca    1 "H-e09d7303007a4bd8"        # "node01 mlx5_5"
//! [1](e09d7303007a4bd8)     "S-2c5eab0300b87b40"[1]        # lid 647 lmc 0 "MF0;leaf-04:MQM9701/U1" lid 73 4xNDR
//! ```
//!
//! and `-p` (`--ports`), one line per port, connected or not:
//!
//! ```text
//! CA   134  1 0x7cfe9003003b4bde 4x EDR - SW  1719 10 0x7cfe9003009ce5b0 ( 'o0001 HCA-1' - 'leaf-01' )
//! SW  1781 80 0x08c0eb0300add20e 4x SDR                                    'leaf-02'
//! ```
//!
//! (older infiniband-diags print an unconnected port's description without
//! the quotes: `SW 479 22 0x0002c9020040f161 4x QDR      Infiniscale-IV
//! Mellanox Technologies`).
//!
//! The `key=value` lines before each node header (`vendid=`, `devid=`,
//! `sysimgguid=`, `switchguid=`, `caguid=`, `rtguid=`) and `#` comments are
//! read and carry nothing the rules use.

use crate::model::ib::Guid;
use crate::model::iblinkinfo::{LaneGeneration, LinkWidth, NodeType};
use crate::model::ibnetdiscover::{Ibnetdiscover, NetEnd, NetNode, NetPort};
use crate::parse::text::{decimal_u32, read_each_line, redacted_identifier, trim, Unread};
use crate::parse::{Block, Line, Parsed, Spec};

pub(crate) const FORMAT: Spec<Ibnetdiscover> = Spec {
    // ibswitches, ibhosts and ibnodes are scripts that list the nodes of
    // ibnetdiscover's topology ([`list_node`]).
    command: |argv| {
        argv.first()
            .is_some_and(|c| matches!(*c, "ibnetdiscover" | "ibswitches" | "ibhosts" | "ibnodes"))
    },
    // `s`, `c`, `r`: a GUID key line (`switchguid=`, `caguid=`, `rtguid=`).
    starts: |b| {
        matches!(
            b,
            b'#' | b'v' | b's' | b'c' | b'r' | b'S' | b'C' | b'R' | b'['
        )
    },
    detect,
    parse,
    summary,
    attach_command: None,
    labels: &[],
};

/// The comment that opens a topology file.
const TOPOLOGY_HEADER: &str = "# Topology file:";

/// The comment that ends a topology file's preamble.
const INITIATED_FROM: &str = "# Initiated from node ";

/// The `key=value` lines ibnetdiscover prints before a node header.
const NODE_KEYS: &[&str] = &[
    "vendid",
    "devid",
    "sysimgguid",
    "switchguid",
    "caguid",
    "rtguid",
];

/// Reads `ibnetdiscover` output.
#[must_use]
pub fn parse(lines: &[Line<'_>]) -> Parsed<Ibnetdiscover> {
    read_each_line(lines, read_line)
}

fn read_line(line: &Line<'_>, out: &mut Ibnetdiscover, unread: &mut Unread) {
    let t = trim(line.text());
    if t.starts_with('#') || is_group_heading(t) {
        return;
    }
    if let Some((key, _)) = t.split_once('=') {
        if NODE_KEYS.contains(&key) {
            return;
        }
    }
    if let Some(node) = node_header(t, line) {
        out.nodes.push(node);
        return;
    }
    if let Some(node) = list_node(t, line) {
        out.nodes.push(node);
        out.listed = true;
        return;
    }
    if t.starts_with('[') {
        match out.nodes.last() {
            Some(node) => match topology_port(t, node, line) {
                Some(port) => out.ports.push(port),
                None => unread.line(line, "not an ibnetdiscover port line"),
            },
            None => unread.line(
                line,
                "a port line with no node header (`Switch`, `Ca`) before it: whose port it is, is not in the paste",
            ),
        }
        return;
    }
    match ports_line(t, line).or_else(|| unquoted_unconnected_port(t, line)) {
        Some(port) => out.ports.push(port),
        None => unread.line(line, "not a line of ibnetdiscover output"),
    }
}

/// The headings `ibnetdiscover -g` prints between its groups of nodes:
/// `Non-Chassis Nodes`, and `Chassis 3`, with the chassis' GUID after it
/// when known (`Chassis 3 (guid 0x8f104004122fc)`): infiniband-diags
/// `ibnetdiscover.c` (`out_chassis`, `dump_topology`). Read as output
/// lines, each was an unread line (IN002) of every grouped topology.
fn is_group_heading(t: &str) -> bool {
    if t == "Non-Chassis Nodes" {
        return true;
    }
    let Some(rest) = t.strip_prefix("Chassis ") else {
        return false;
    };
    let (number, after) = rest.split_once(' ').unwrap_or((rest, ""));
    !number.is_empty()
        && number.bytes().all(|b| b.is_ascii_digit())
        && (after.is_empty() || (after.starts_with('(') && after.ends_with(')')))
}

/// A node header's type word in the topology file.
fn header_type(word: &str) -> Option<NodeType> {
    match word {
        "Switch" => Some(NodeType::Switch),
        "Ca" => Some(NodeType::Ca),
        "Rt" => Some(NodeType::Router),
        _ => None,
    }
}

/// A port's type word in the `-p` layout.
fn ports_type(word: &str) -> Option<NodeType> {
    match word {
        "SW" => Some(NodeType::Switch),
        "CA" => Some(NodeType::Ca),
        "RT" => Some(NodeType::Router),
        _ => None,
    }
}

/// `"S-2c5eab0300b87b40"` → the node's type and GUID, with the text after
/// it (`S-` switch, `H-` host adapter, `R-` router). A GUID the author
/// hid before sharing (`"S-9c05<redacted>"`) leaves the GUID unknown
/// ([`guid_or_redacted`]).
fn node_name(t: &str) -> Option<(NodeType, Option<Guid>, &str)> {
    let rest = t.strip_prefix('"')?;
    let (name, after) = rest.split_once('"')?;
    let (kind, hex) = name.split_at_checked(2)?;
    let node_type = match kind {
        "S-" => NodeType::Switch,
        "H-" => NodeType::Ca,
        "R-" => NodeType::Router,
        _ => return None,
    };
    Some((node_type, guid_or_redacted(hex)?, after))
}

/// A GUID as printed: `Some(Some(guid))`; `Some(None)` for one an author
/// replaced with a placeholder before sharing (`9c05<redacted>`,
/// `b83fxxxxxxxx`: [`redacted_identifier`]), unknown on purpose, its line
/// read all the same (before, such a node header was an unread line and
/// every port line under it had no node); `None` for anything else.
fn guid_or_redacted(text: &str) -> Option<Option<Guid>> {
    match Guid::parse(text) {
        Some(g) => Some(Some(g)),
        None => redacted_identifier(text).then_some(None),
    }
}

/// The first double-quoted text: a node description.
fn double_quoted(t: &str) -> Option<(&str, &str)> {
    let (_, rest) = t.split_once('"')?;
    rest.split_once('"')
}

/// A line of a node list, one per node and no links: `ibnetdiscover -l`
/// (`-S`, `-H`, `-R`: `Switch\t : 0x… ports 36 devid 0xc738 vendid 0x2c9
/// "desc"`, infiniband-diags `list_node`) and the `ibswitches`, `ibhosts`
/// and `ibnodes` scripts over the topology file (`Switch\t: 0x… ports 36
/// "desc" enhanced port 0 lid 14 lmc 0`, `Ca\t: 0x… ports 2 "desc"`).
/// Before, such lines were unread (IN002) under `ibnetdiscover -l`, and
/// the scripts' output was no supported tool's.
fn list_node(t: &str, line: &Line<'_>) -> Option<NetNode> {
    let (word, rest) = t.split_once(':')?;
    let node_type = match word.trim_end() {
        "Router" => NodeType::Router,
        w => header_type(w)?,
    };
    let (hex, rest) = rest.trim_start().split_once(char::is_whitespace)?;
    if !hex.starts_with("0x") {
        return None;
    }
    let guid = guid_or_redacted(hex)?;
    let rest = rest.trim_start().strip_prefix("ports ")?;
    let (count, rest) = rest.trim_start().split_once(char::is_whitespace)?;
    let port_count = decimal_u32(count).ok()?;
    // The description runs from the first quote to the last: a node's own
    // description may hold quotes, and only `lid` words follow it.
    let open = rest.find('"')?;
    let close = rest.rfind('"').filter(|c| *c > open)?;
    let between = rest.get(..open)?.trim();
    if !(between.is_empty() || between.starts_with("devid ")) {
        return None;
    }
    Some(NetNode {
        node_type,
        guid,
        port_count,
        desc: Some(rest.get(open + 1..close)?.to_owned()),
        lid: after_word(rest.get(close + 1..)?, "lid"),
        span: line.span(),
    })
}

/// `Switch    65 "S-…"        # "desc" enhanced port 0 lid 73 lmc 0`.
fn node_header(t: &str, line: &Line<'_>) -> Option<NetNode> {
    let (word, rest) = t.split_once(char::is_whitespace)?;
    let node_type = header_type(word)?;
    let rest = rest.trim_start();
    let (count, rest) = rest.split_once(char::is_whitespace)?;
    let port_count = decimal_u32(count).ok()?;
    let (_, guid, rest) = node_name(rest.trim_start())?;
    let comment = rest.split_once('#').map(|(_, c)| c);
    let (desc, after) = match comment.and_then(double_quoted) {
        Some((d, after)) => (Some(d.to_owned()), after),
        None => (None, ""),
    };
    Some(NetNode {
        node_type,
        guid,
        port_count,
        desc,
        lid: after_word(after, "lid"),
        span: line.span(),
    })
}

/// The number after `word` among the words of `t`.
fn after_word(t: &str, word: &str) -> Option<u32> {
    let mut words = t.split_whitespace();
    words.find(|w| *w == word)?;
    decimal_u32(words.next()?).ok()
}

/// `[7]` at the start of `t`: the number and the rest.
fn bracketed(t: &str) -> Option<(u32, &str)> {
    let rest = t.strip_prefix('[')?;
    let (n, after) = rest.split_once(']')?;
    Some((decimal_u32(n).ok()?, after))
}

/// `(e09d7303007a4bd8)` at the start of `t`: the GUID (unknown when
/// redacted, [`guid_or_redacted`]) and the rest.
fn parenthesised_guid(t: &str) -> Option<(Option<Guid>, &str)> {
    let rest = t.strip_prefix('(')?;
    let (g, after) = rest.split_once(')')?;
    Some((guid_or_redacted(g)?, after))
}

/// `4xNDR` (topology file) or `4x` and `NDR` (`-p`): the width, and the
/// speed unless it is `???`.
fn width_speed(width: &str, speed: &str) -> Option<(LinkWidth, Option<LaneGeneration>)> {
    let lanes = width.strip_suffix(['x', 'X'])?;
    decimal_u32(lanes).ok()?;
    let speed = match speed {
        "???" => None,
        name => Some(LaneGeneration::from_name(name)?),
    };
    Some((LinkWidth::parse(width), speed))
}

/// `4xNDR` as one word.
fn joined_width_speed(word: &str) -> Option<(LinkWidth, Option<LaneGeneration>)> {
    let x = word.find(['x', 'X'])?;
    let (width, speed) = word.split_at(x + 1);
    width_speed(width, speed)
}

/// A port line of the topology file, under the node block `node`:
/// `[1]    "H-…"[1](guid)         # "desc" lid 647 4xNDR` under a switch,
/// `[1](guid)     "S-…"[1]        # lid 647 lmc 0 "desc" lid 73 4xNDR` under a CA.
fn topology_port(t: &str, node: &NetNode, line: &Line<'_>) -> Option<NetPort> {
    let (port, rest) = bracketed(t)?;
    let rest = parenthesised_guid(rest).map_or(rest, |(_, after)| after);
    // An external port number (`[1][ext 2]`-style suffixes) is skipped.
    let rest = rest
        .strip_prefix('[')
        .and_then(|r| r.split_once(']'))
        .map_or(rest, |(_, after)| after);
    let (remote_type, remote_guid, rest) = node_name(rest.trim_start())?;
    let (remote_port, rest) = bracketed(rest)?;
    let (_, comment) = rest.split_once('#')?;
    // Under a CA the comment starts with the port's own `lid N lmc M`.
    let (local_lid, comment) = match comment.trim_start().strip_prefix("lid ") {
        Some(after) => {
            let (lid, after) = after.split_once(char::is_whitespace)?;
            (decimal_u32(lid).ok(), after)
        }
        None => (node.lid, comment),
    };
    let (desc, after) = double_quoted(comment)?;
    let mut words = after.split_whitespace();
    let remote_lid = match (words.next(), words.next()) {
        (Some("lid"), Some(lid)) => decimal_u32(lid).ok(),
        _ => None,
    };
    let (width, speed) = words.next().and_then(joined_width_speed)?;
    Some(NetPort {
        local: NetEnd {
            node_type: Some(node.node_type),
            guid: node.guid,
            lid: local_lid,
            port,
            desc: node.desc.clone(),
        },
        remote: Some(NetEnd {
            node_type: Some(remote_type),
            guid: remote_guid,
            lid: remote_lid,
            port: remote_port,
            desc: Some(desc.to_owned()),
        }),
        width: Some(width),
        speed,
        span: line.span(),
    })
}

/// `TYPE LID PORT GUID`: the words of one end in `-p`.
fn ports_end<'t>(words: &mut impl Iterator<Item = &'t str>) -> Option<NetEnd> {
    let node_type = ports_type(words.next()?)?;
    let lid = decimal_u32(words.next()?).ok()?;
    let port = decimal_u32(words.next()?).ok()?;
    let guid = guid_or_redacted(words.next()?.strip_prefix("0x")?)?;
    Some(NetEnd {
        node_type: Some(node_type),
        guid,
        lid: Some(lid),
        port,
        desc: None,
    })
}

/// A `-p` line: `CA 134 1 0x… 4x EDR - SW 1719 10 0x… ( 'desc' - 'desc' )`,
/// or an unconnected port `SW 1781 80 0x… 4x SDR 'desc'`.
fn ports_line(t: &str, line: &Line<'_>) -> Option<NetPort> {
    let (head, quoted) = match t.find(['(', '\'']) {
        Some(at) => t.split_at(at),
        None => (t, ""),
    };
    let mut words = head.split_whitespace();
    let mut local = ports_end(&mut words)?;
    let (width, speed) = width_speed(words.next()?, words.next()?)?;
    let remote = match words.next() {
        Some("-") => Some(ports_end(&mut words)?),
        Some(_) => return None,
        None => None,
    };
    if words.next().is_some() {
        return None;
    }
    // The descriptions: `( 'local' - 'remote' )` for a link, `'local'` alone
    // for an unconnected port. Descriptions may hold spaces and dashes: the
    // first and last quoted texts are taken.
    let quotes: Vec<usize> = quoted.match_indices('\'').map(|(i, _)| i).collect();
    let text = |a: usize, b: usize| quoted.get(a + 1..b).map(str::to_owned);
    let mut remote = remote;
    match (remote.as_mut(), quotes.as_slice()) {
        (Some(r), [a, b, .., c, d])
            if quoted.starts_with('(') && quoted.trim_end().ends_with(')') =>
        {
            local.desc = text(*a, *b);
            r.desc = text(*c, *d);
        }
        (None, [a, b]) if !quoted.starts_with('(') => local.desc = text(*a, *b),
        (_, []) => {}
        _ => return None,
    }
    Some(NetPort {
        local,
        remote,
        width: Some(width),
        speed,
        span: line.span(),
    })
}

/// The next whitespace-separated word of `rest`, `rest` moved past it.
fn next_word<'t>(rest: &mut &'t str) -> Option<&'t str> {
    let t = rest.trim_start();
    if t.is_empty() {
        return None;
    }
    let end = t.find(char::is_whitespace).unwrap_or(t.len());
    let (word, after) = t.split_at(end);
    *rest = after;
    Some(word)
}

/// A `-p` line of an unconnected port whose description is printed without
/// quotes, as older infiniband-diags print it:
/// `SW   479 22 0x0002c9020040f161 4x QDR      Infiniscale-IV Mellanox Technologies`.
///
/// The text after the speed is free, so the fixed fields before it must
/// be exactly what the tool prints: a type word, a decimal LID and port,
/// the GUID as `0x` and 16 hex digits (`0x%016` in `ibnetdiscover.c`), a
/// width and a known speed. A description that starts like a link (`-`,
/// `(`) or a quote is another layout's (read, or said unread, by
/// [`ports_line`]).
fn unquoted_unconnected_port(t: &str, line: &Line<'_>) -> Option<NetPort> {
    let mut rest = t;
    let node_type = ports_type(next_word(&mut rest)?)?;
    let lid = decimal_u32(next_word(&mut rest)?).ok()?;
    let port = decimal_u32(next_word(&mut rest)?).ok()?;
    let hex = next_word(&mut rest)?.strip_prefix("0x")?;
    if hex.len() != 16 {
        return None;
    }
    let guid = Guid::parse(hex)?;
    let (width, speed) = width_speed(next_word(&mut rest)?, next_word(&mut rest)?)?;
    let desc = rest.trim();
    if desc.is_empty() || desc.starts_with(['-', '(', '\'', ')']) {
        return None;
    }
    Some(NetPort {
        local: NetEnd {
            node_type: Some(node_type),
            guid: Some(guid),
            lid: Some(lid),
            port,
            desc: Some(desc.to_owned()),
        },
        remote: None,
        width: Some(width),
        speed,
        span: line.span(),
    })
}

/// Recognises the start of ibnetdiscover output: the topology file's
/// header comment, the `vendid=`/`devid=` lines of a node block, a node
/// header, a port line of the topology file, or a `-p` line read whole.
fn detect(lines: &[Line<'_>]) -> Option<Block> {
    let first = lines.first()?;
    let t = trim(first.text());
    let line = first.number;
    // Keyed by line: every piece of one listing continues its section (a
    // second run is told apart by the prompt before it).
    let at_line = || Block::keyed(format!("ibnetdiscover at line {line}"));
    if t == "#" {
        // The comment line that opens the topology file's header.
        let next = lines.iter().skip(1).find(|l| !l.is_blank())?;
        return trim(next.text()).starts_with(TOPOLOGY_HEADER).then(at_line);
    }
    if t.starts_with(TOPOLOGY_HEADER) || t.starts_with(INITIATED_FROM) {
        return Some(at_line());
    }
    if t.starts_with("vendid=0x") {
        let next = lines.iter().skip(1).find(|l| !l.is_blank())?;
        return trim(next.text()).starts_with("devid=0x").then(at_line);
    }
    // `ibnetdiscover | grep <guid>` keeps a node's GUID key lines
    // (`sysimgguid=`, `switchguid=`, `caguid=`) without the `vendid=` one:
    // such a line opens the output when a key line or the node's header
    // follows it. Before, under the command's prompt, it was an output of
    // its own (`0 node(s)`) and the header under it another.
    if is_guid_key_line(t) {
        let next = lines.iter().skip(1).find(|l| !l.is_blank())?;
        let n = trim(next.text());
        return (is_guid_key_line(n) || node_header(n, next).is_some()).then(at_line);
    }
    if node_header(t, first).is_some() || list_node(t, first).is_some() {
        return Some(at_line());
    }
    if t.starts_with('[') {
        // A port line with its node header cut off: unmistakable by its
        // quoted `S-`/`H-` node name followed by `[port]`.
        let (_, rest) = bracketed(t)?;
        let rest = parenthesised_guid(rest).map_or(rest, |(_, after)| after);
        let (_, _, rest) = node_name(rest.trim_start())?;
        bracketed(rest)?;
        return Some(at_line());
    }
    ports_line(t, first)
        .or_else(|| unquoted_unconnected_port(t, first))
        .map(|_| at_line())
}

/// `switchguid=0x…(…)`, `caguid=0x…`: one of the [`NODE_KEYS`] lines
/// that hold a GUID.
fn is_guid_key_line(t: &str) -> bool {
    // Split at the first `=` (a byte search): detection asks this of the
    // first line of every input, and a key holds no `=`.
    t.split_once('=').is_some_and(|(key, value)| {
        value.starts_with("0x") && key.ends_with("guid") && NODE_KEYS.contains(&key)
    })
}

/// `12 nodes, 40 links (3 ports unconnected)`.
fn summary(d: &Ibnetdiscover) -> String {
    if d.listed && d.ports.is_empty() {
        return format!("{} node(s) listed (a node list: no links)", d.nodes.len());
    }
    let connected = d.ports.iter().filter(|p| p.connected()).count();
    let unconnected = d.ports.len() - connected;
    let mut s = format!(
        "{} node(s), {connected} connected port line(s)",
        d.nodes.len()
    );
    if unconnected > 0 {
        s.push_str(&format!(" ({unconnected} unconnected)"));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::lines_of;

    const TOPOLOGY: &str = "#
# Topology file: generated on Mon Mar  2 10:00:00 2026
#
# Initiated from node 0c42a10300b1c2d0 port 0c42a10300b1c2d0

vendid=0x2c9
devid=0xd2f0
sysimgguid=0x1070fd0300aa0010
switchguid=0x1070fd0300aa0010(1070fd0300aa0010)
Switch\t41 \"S-1070fd0300aa0010\"\t\t# \"MF0;leaf-07:MQM8700/U1\" enhanced port 0 lid 12 lmc 0
[1]\t\"H-0c42a10300b1c2d0\"[1](c42a10300b1c2d0) \t\t# \"gn01 mlx5_0\" lid 31 4xHDR
[2]\t\"H-0c42a10300b1c2e0\"[1](c42a10300b1c2e0) \t\t# \"gn02 mlx5_0\" lid 32 1xHDR
[40]\t\"S-1070fd0300aa0020\"[3]\t\t# \"MF0;spine-01:MQM8700/U1\" lid 5 4xHDR

vendid=0x2c9
devid=0x101b
sysimgguid=0x0c42a10300b1c2d0
caguid=0x0c42a10300b1c2d0
Ca\t1 \"H-0c42a10300b1c2d0\"\t\t# \"gn01 mlx5_0\"
[1](c42a10300b1c2d0) \t\"S-1070fd0300aa0010\"[1]\t\t# lid 31 lmc 0 \"MF0;leaf-07:MQM8700/U1\" lid 12 4xHDR
";

    #[test]
    fn group_headings_are_read_and_nothing_else_like_them() {
        let grouped = format!(
            "#\n# Topology file: generated on Mon Mar  2 10:00:00 2026\n#\n\nChassis 2 (guid 0x8f104004122fc)\n\nNon-Chassis Nodes\n\n{TOPOLOGY}"
        );
        let p = parse(&lines_of(&grouped));
        assert!(p.warnings.is_empty(), "{:?}", p.warnings);
        assert_eq!(p.value.nodes.len(), 2);
        for line in [
            "Chassis 2",
            "Chassis 12 (guid 0x8f104004122fc)",
            "Non-Chassis Nodes",
        ] {
            assert!(is_group_heading(line), "{line}");
        }
        for line in [
            "Chassis",
            "Chassis two",
            "Chassis 2 of 4",
            "Non-Chassis Nodes:",
            "Chassis 2 (guid",
        ] {
            assert!(!is_group_heading(line), "{line}");
        }
    }

    #[test]
    fn reads_the_topology_file() {
        let p = parse(&lines_of(TOPOLOGY));
        assert!(p.warnings.is_empty(), "{:?}", p.warnings);
        let d = p.value;
        assert_eq!(d.nodes.len(), 2);
        assert_eq!(d.nodes[0].node_type, NodeType::Switch);
        assert_eq!(d.nodes[0].port_count, 41);
        assert_eq!(d.nodes[0].lid, Some(12));
        assert_eq!(d.nodes[0].desc.as_deref(), Some("MF0;leaf-07:MQM8700/U1"));
        assert_eq!(d.ports.len(), 4);
        let narrow = &d.ports[1];
        assert_eq!(narrow.local.port, 2);
        assert_eq!(narrow.local.lid, Some(12));
        assert_eq!(narrow.width.as_ref().and_then(|w| w.lanes), Some(1));
        assert_eq!(narrow.speed, Some(LaneGeneration::Hdr));
        let remote = narrow.remote.as_ref().unwrap();
        assert_eq!(remote.desc.as_deref(), Some("gn02 mlx5_0"));
        assert_eq!((remote.lid, remote.port), (Some(32), 1));
        assert_eq!(remote.node_type, Some(NodeType::Ca));
        // Under the CA: its own LID first, then the switch's.
        let ca_port = &d.ports[3];
        assert_eq!(ca_port.local.node_type, Some(NodeType::Ca));
        assert_eq!(ca_port.local.lid, Some(31));
        let sw = ca_port.remote.as_ref().unwrap();
        assert_eq!((sw.lid, sw.port), (Some(12), 1));
        assert_eq!(sw.node_type, Some(NodeType::Switch));
        assert_eq!(sw.guid, Guid::parse("1070fd0300aa0010"));
    }

    #[test]
    fn guids_an_author_hid_are_unknown_and_their_lines_read() {
        // A blog's listing with every GUID cut to a prefix and a
        // placeholder; the `-p` layout with one masked by `x`.
        let text = "sysimgguid=0x7c12<redacted>\n\
                    switchguid=0x7c12<redacted>(7c12<redacted>)\n\
                    Switch\t65 \"S-7c12<redacted>\"\t\t# \"MF0;sw-lab-02:MQM9700/U1\" enhanced port 0 lid 3 lmc 0\n\
                    [1]\t\"H-a1b2<redacted>\"[1](a1b2<redacted>) \t\t# \"lab-n14 mlx5_1\" lid 41 2xNDR\n\
                    [2]\t\"H-a1b3<redacted>\"[1](a1b3<redacted>) \t\t# \"lab-n15 mlx5_1\" lid 44 2xNDR\n\
                    CA    41  1 0xa1b2xxxxxxxxxxxx 2x NDR - SW     3  1 0x7c12xxxxxxxxxxxx ( 'lab-n14 mlx5_1' - 'sw-lab-02' )\n";
        let p = parse(&lines_of(text));
        assert!(p.warnings.is_empty(), "{:?}", p.warnings);
        let d = p.value;
        assert_eq!(d.nodes.len(), 1);
        assert_eq!(
            (d.nodes[0].node_type, d.nodes[0].guid, d.nodes[0].lid),
            (NodeType::Switch, None, Some(3))
        );
        assert_eq!(d.ports.len(), 3);
        let remote = d.ports[1].remote.as_ref().unwrap();
        assert_eq!(
            (remote.guid, remote.lid, remote.desc.as_deref()),
            (None, Some(44), Some("lab-n15 mlx5_1"))
        );
        assert_eq!(d.ports[0].local.lid, Some(3));
        assert_eq!(d.ports[2].local.guid, None);
        assert_eq!(d.ports[2].remote.as_ref().unwrap().lid, Some(3));
        // A node name that is neither hex nor a placeholder stays unread.
        let p = parse(&lines_of("Switch\t65 \"S-7c12zz\"\t\t# \"sw\"\n"));
        assert_eq!(p.warnings.len(), 1, "{:?}", p.warnings);
        assert!(detect(&lines_of(
            "Switch\t65 \"S-7c12<redacted>\"\t\t# \"sw\" enhanced port 0 lid 3 lmc 0\n"
        ))
        .is_some());
    }

    #[test]
    fn reads_the_ports_layout() {
        let text = "CA   201  1 0x0c42a10300c0ffee 4x EDR - SW  1801 10 0x1070fd0300bb0001 ( 'x0001 HCA-1' - 'ib-leaf-1' )\n\
                    SW  1801 37 0x1070fd0300bb0001 4x ???                                    'ib-leaf-1'\n\
                    SW    51 81 0x1070fd0300bb0002 4x HDR - CA    60  1 0x0c42a10300c0ff00 ( ' spine-IB03 ' - 'Aggregation Node' )\n";
        let p = parse(&lines_of(text));
        assert!(p.warnings.is_empty(), "{:?}", p.warnings);
        let d = p.value;
        assert_eq!(d.ports.len(), 3);
        assert_eq!(d.ports[0].local.desc.as_deref(), Some("x0001 HCA-1"));
        assert_eq!(d.ports[0].remote.as_ref().unwrap().port, 10);
        assert_eq!(d.ports[0].speed, Some(LaneGeneration::Edr));
        assert!(!d.ports[1].connected());
        assert_eq!(d.ports[1].speed, None, "`???` is no speed");
        assert_eq!(d.ports[2].local.desc.as_deref(), Some(" spine-IB03 "));
        assert_eq!(
            d.ports[2].remote.as_ref().unwrap().desc.as_deref(),
            Some("Aggregation Node")
        );
    }

    /// Older infiniband-diags print an unconnected port's description
    /// without quotes after the padding: it is the description, spaces and
    /// all, and the port is read as the quoted form is.
    #[test]
    fn an_unconnected_port_described_without_quotes_is_read() {
        let text = "SW   312 17 0x0008f10400d2c7a0 4x DDR                                   ISR9288 Voltaire\n\
                    SW   312 18 0x0008f10400d2c7a0 1x SDR       spine's spare (rack 4)\n\
                    SW   312 19 0x0008f10400d2c7a0 4x DDR                                   'ISR9288 Voltaire'\n";
        let p = parse(&lines_of(text));
        assert!(p.warnings.is_empty(), "{:?}", p.warnings);
        let ports = &p.value.ports;
        assert_eq!(ports.len(), 3);
        assert!(ports.iter().all(|p| !p.connected()));
        let p0 = &ports[0];
        assert_eq!(p0.local.desc.as_deref(), Some("ISR9288 Voltaire"));
        assert_eq!(p0.local.guid, Some(Guid(0x0008_f104_00d2_c7a0)));
        assert_eq!((p0.local.lid, p0.local.port), (Some(312), 17));
        assert_eq!(p0.local.node_type, Some(NodeType::Switch));
        assert_eq!(p0.width.as_ref().and_then(|w| w.lanes), Some(4));
        assert_eq!(p0.speed, Some(LaneGeneration::Ddr));
        // A quote or parentheses inside the description are its own.
        assert_eq!(
            ports[1].local.desc.as_deref(),
            Some("spine's spare (rack 4)")
        );
        // The quoted form reads the same description.
        assert_eq!(ports[2].local.desc, p0.local.desc);
        // A link line cut after its dash, or a quote left open, is not a
        // description: said unread.
        let text = "SW   312 20 0x0008f10400d2c7a0 4x DDR - SW\n\
                    SW   312 21 0x0008f10400d2c7a0 4x DDR 'ISR9288\n";
        let p = parse(&lines_of(text));
        assert!(p.value.ports.is_empty(), "{:?}", p.value.ports);
        assert!(
            [1, 2]
                .iter()
                .all(|l| p.warnings.iter().any(|w| w.span.contains(*l))),
            "{:?}",
            p.warnings
        );
    }

    #[test]
    fn detects_each_layout_and_nothing_else() {
        for text in [
            "# Topology file: generated on Mon Mar  2 10:00:00 2026\n",
            "#\n# Topology file: generated on Mon Mar  2 10:00:00 2026\n",
            "# Initiated from node 0c42a10300b1c2d0 port 0c42a10300b1c2d0\n",
            "vendid=0x2c9\ndevid=0xd2f0\n",
            // `ibnetdiscover | grep <guid>` keeps the node's GUID key line
            // and its header, not the `vendid=` line above them.
            "switchguid=0x10e0405c3ba0a0(10e0405c3ba0a0)\nSwitch 36 \"S-0010e0405c3ba0a0\" # \"sw\" enhanced port 0 lid 21 lmc 0\n",
            "sysimgguid=0x10e0405c3ba0a3\nswitchguid=0x10e0405c3ba0a0(10e0405c3ba0a0)\n",
            "caguid=0x0c42a10300b1c2d0\nCa\t1 \"H-0c42a10300b1c2d0\"\t\t# \"gn01 mlx5_0\"\n",
            "Ca\t1 \"H-0c42a10300b1c2d0\"\t\t# \"gn01 mlx5_0\"\n",
            "[2]\t\"H-0c42a10300b1c2e0\"[1](c42a10300b1c2e0) \t\t# \"gn02 mlx5_0\" lid 32 4xHDR\n",
            "CA   201  1 0x0c42a10300c0ffee 4x EDR - SW  1801 10 0x1070fd0300bb0001 ( 'a' - 'b' )\n",
            "SW   312 17 0x0008f10400d2c7a0 4x DDR                                   ISR9288 Voltaire\n",
        ] {
            assert!(detect(&lines_of(text)).is_some(), "{text}");
        }
        for text in [
            "# a comment\n",
            "#\n# a comment\n",
            "vendid=0x2c9\nsomething else\n",
            "switchguid=0x10e0405c3ba0a0(10e0405c3ba0a0)\nsomething else\n",
            "caguid=0x0c42a10300b1c2d0\n",
            "CA 'mlx5_0'\n",
            "[1] some note\n",
            "SW is a switch\n",
            "Switch: 0x1070fd0300aa0010 MF0;leaf-07:MQM8700/U1:\n",
            // Prose about a port: no 16-digit GUID, or no width and speed.
            "SW 312 17 0x8f10400d2c7a0 4x DDR is the slow one\n",
            "SW 312 17 0x0008f10400d2c7a0 runs at DDR, see the ISR9288\n",
            "CA 12 1 0x0008f10400d2c7a0 4 lanes at DDR\n",
        ] {
            assert!(detect(&lines_of(text)).is_none(), "{text}");
        }
    }

    /// A generated fabric: a switch and its host links, as the topology
    /// file and as `-p` print them.
    fn fabric(links: &[(u32, &str)]) -> (String, String) {
        let mut topology =
            "Switch\t41 \"S-1070fd0300aa0010\"\t\t# \"leaf\" enhanced port 0 lid 12 lmc 0\n"
                .to_owned();
        let mut ports = String::new();
        for (i, (lanes, speed)) in links.iter().enumerate() {
            let n = i + 1;
            topology.push_str(&format!(
                "[{n}]\t\"H-0c42a10300b1{n:04x}\"[1](c42a10300b1{n:04x}) \t\t# \"gn{n:03} mlx5_0\" lid {} {lanes}x{speed}\n",
                100 + n
            ));
            ports.push_str(&format!(
                "SW    12 {n:>2} 0x1070fd0300aa0010 {lanes}x {speed} - CA   {:>3}  1 0x0c42a10300b1{n:04x} ( 'leaf' - 'gn{n:03} mlx5_0' )\n",
                100 + n
            ));
        }
        (topology, ports)
    }

    proptest::proptest! {
        /// Both layouts of one fabric read as the same links, whatever
        /// their widths and speeds.
        #[test]
        fn both_layouts_read_as_the_same_links(
            links in proptest::collection::vec(
                (proptest::sample::select(vec![1u32, 2, 4, 8, 12]),
                 proptest::sample::select(vec!["SDR", "DDR", "QDR", "FDR10", "FDR", "EDR", "HDR", "NDR", "XDR", "???"])),
                1..40,
            )
        ) {
            let (topology, ports) = fabric(&links);
            let seen = |text: &str| {
                let p = parse(&lines_of(text));
                proptest::prop_assert!(p.warnings.is_empty(), "{:?}", p.warnings);
                Ok(p.value.ports.iter().map(|p| (
                    p.remote.as_ref().and_then(|r| r.lid),
                    p.width.as_ref().and_then(|w| w.lanes),
                    p.speed,
                )).collect::<Vec<_>>())
            };
            let want: Vec<_> = links.iter().enumerate().map(|(i, (lanes, speed))| (
                u32::try_from(101 + i).ok(),
                Some(*lanes),
                LaneGeneration::from_name(speed),
            )).collect();
            proptest::prop_assert_eq!(seen(&topology)?, want.clone());
            proptest::prop_assert_eq!(seen(&ports)?, want);
        }

        /// Any line is read or said unread, never lost, and never panics.
        #[test]
        fn every_line_is_read_or_said(lines in proptest::collection::vec("[ -~\t]{0,90}", 0..30)) {
            let text = lines.join("\n");
            let input = lines_of(&text);
            let p = parse(&input);
            for line in input.iter().filter(|l| !l.is_blank()) {
                let t = trim(line.text());
                let read = t.starts_with('#')
                    || t.split_once('=').is_some_and(|(k, _)| NODE_KEYS.contains(&k))
                    || p.value.nodes.iter().any(|n| n.span.contains(line.number))
                    || p.value.ports.iter().any(|n| n.span.contains(line.number));
                let said = p.warnings.iter().any(|w| w.span.contains(line.number));
                proptest::prop_assert!(read || said, "line {} lost: {:?}", line.number, t);
            }
        }
    }

    #[test]
    fn lines_it_cannot_read_are_said_and_the_rest_kept() {
        let text =
            "[1]\t\"H-0c42a10300b1c2d0\"[1](c42a10300b1c2d0) \t\t# \"gn01 mlx5_0\" lid 31 4xHDR\n\
                    Switch\t41 \"S-1070fd0300aa0010\"\t\t# \"leaf\" enhanced port 0 lid 12 lmc 0\n\
                    [1]\t\"H-0c42a10300b1c2d0\"[1]\t\t# \"gn01 mlx5_0\" lid 31 4xWHAT\n\
                    [2]\t\"H-0c42a10300b1c2e0\"[1]\t\t# \"gn02 mlx5_0\" lid 32 4xHDR\n";
        let p = parse(&lines_of(text));
        assert_eq!(p.value.ports.len(), 1);
        assert_eq!(p.value.ports[0].local.port, 2);
        let lines: Vec<usize> = p.warnings.iter().map(|w| w.span.first_line).collect();
        assert_eq!(lines, [1, 3], "{:?}", p.warnings);
        assert!(p.warnings[0].message.contains("no node header"));
    }
}
