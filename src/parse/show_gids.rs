//! `show_gids` (NVIDIA/Mellanox OFED, `mlnx-tools`): every configured entry
//! of each RDMA port's GID table.
//!
//! The script walks `/sys/class/infiniband/<dev>/ports/<port>/gids/*`,
//! skips the empty (`0000:…`) and bare `fe80:0000:…:0000` entries, and
//! prints one tab-separated row per GID under a header and a rule of
//! dashes, then the count:
//!
//! ```text
//! DEV     PORT    INDEX   GID                                     IPv4            VER     DEV
//! ---     ----    -----   ---                                     ------------    ---     ---
//! mlx5_0  1       0       fe80:0000:0000:0000:0e42:a1ff:fe00:0001                 v1      ens1f0
//! mlx5_0  1       3       0000:0000:0000:0000:0000:ffff:0a00:0001 10.0.0.1        v2      ens1f0
//! n_gids_found=2
//! ```
//!
//! The IPv4 column is filled only for GIDs beginning `0000` (IPv4-mapped);
//! `VER` is what follows the `v` of `gid_attrs/types` (`IB/RoCE v1`, `RoCE
//! v2`), empty where the kernel has no such file; the last `DEV` is
//! `gid_attrs/ndevs`, empty for an InfiniBand port. Pastes turn the tabs
//! into spaces, so a row is read by the shapes of its words.

use crate::model::show_gids::{GidEntry, ShowGids};
use crate::parse::text::{read_each_line, Unread};
use crate::parse::{Block, Line, Parsed, Spec};

pub(crate) const FORMAT: Spec<ShowGids> = Spec {
    command: |argv| argv.first().is_some_and(|c| c.ends_with("show_gids")),
    starts: |b| b == b'D',
    detect,
    parse,
    summary,
    attach_command: None,
    labels: &[],
};

/// The header's first words: `DEV PORT INDEX GID`.
fn is_header(t: &str) -> bool {
    let mut w = t.split_whitespace();
    ["DEV", "PORT", "INDEX", "GID"]
        .iter()
        .all(|h| w.next() == Some(*h))
}

/// The rule under the header: words of dashes only.
fn is_rule(t: &str) -> bool {
    let mut words = t.split_whitespace().peekable();
    words.peek().is_some() && words.all(|w| w.bytes().all(|b| b == b'-'))
}

/// A GID as sysfs prints it: eight groups of four hex digits.
fn is_gid(t: &str) -> bool {
    t.len() == 39
        && t.split(':').count() == 8
        && t.split(':')
            .all(|g| g.len() == 4 && g.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// A dotted IPv4 address.
fn is_ipv4(t: &str) -> bool {
    let mut n = 0;
    for part in t.split('.') {
        n += 1;
        if part.is_empty() || part.len() > 3 || !part.bytes().all(|b| b.is_ascii_digit()) {
            return false;
        }
    }
    n == 4
}

/// `v1`, `v2`: the RoCE version as the script prints it.
fn is_version(t: &str) -> bool {
    let b = t.as_bytes();
    b.len() == 2
        && matches!(b.first(), Some(b'v' | b'V'))
        && b.get(1).is_some_and(u8::is_ascii_digit)
}

/// A device or interface name.
fn is_name(t: &str) -> bool {
    !t.is_empty()
        && t.len() <= 64
        && t.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | ':' | '@'))
}

/// Reads one row; `None` when the line is not one.
fn row(t: &str, line: &Line<'_>) -> Option<GidEntry> {
    let mut words = t.split_whitespace();
    let device = words.next().filter(|d| is_name(d))?;
    let port = words.next()?.parse().ok()?;
    let index = words.next()?.parse().ok()?;
    let gid = words.next().filter(|g| is_gid(g))?;
    let mut ipv4 = None;
    let mut version = None;
    let mut netdev = None;
    // What follows, in the script's order, each column possibly empty.
    for w in words {
        if ipv4.is_none() && version.is_none() && netdev.is_none() && is_ipv4(w) {
            ipv4 = Some(w.to_owned());
        } else if version.is_none() && netdev.is_none() && is_version(w) {
            version = Some(w.to_ascii_lowercase());
        } else if netdev.is_none() && is_name(w) {
            netdev = Some(w.to_owned());
        } else {
            return None;
        }
    }
    Some(GidEntry {
        device: device.to_owned(),
        port,
        index,
        gid: gid.to_ascii_lowercase(),
        ipv4,
        version,
        netdev,
        span: line.span(),
    })
}

/// The script's last line, `n_gids_found=N`.
fn gids_found(t: &str) -> Option<u32> {
    t.strip_prefix("n_gids_found=")?.trim().parse().ok()
}

/// The header opens the output (what the script prints first).
fn detect(lines: &[Line<'_>]) -> Option<Block> {
    let first = lines.first()?;
    is_header(first.text().trim()).then(|| Block::keyed("show_gids"))
}

/// Reads `show_gids` output.
#[must_use]
pub fn parse(lines: &[Line<'_>]) -> Parsed<ShowGids> {
    read_each_line(lines, |line, out: &mut ShowGids, unread: &mut Unread| {
        let t = line.text().trim();
        if is_header(t) || is_rule(t) {
            return;
        }
        if let Some(n) = gids_found(t) {
            out.gids_found = Some(n);
        } else if let Some(r) = row(t, line) {
            out.gids.push(r);
        } else {
            unread.line(line, "not a `show_gids` row");
        }
    })
}

/// `6 GID(s) on 1 port(s), 2 RoCE v2 with an IP address` for people.
#[must_use]
pub fn summary(m: &ShowGids) -> String {
    let mut ports: Vec<(&str, u32)> = m.gids.iter().map(|g| (g.device.as_str(), g.port)).collect();
    ports.sort_unstable();
    ports.dedup();
    let routable = m.gids.iter().filter(|g| g.is_routable_v2()).count();
    format!(
        "{} GID(s) on {} port(s), {routable} routable RoCE v2",
        m.gids.len(),
        ports.len()
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::lines_of;

    const TABS: &str = "DEV\tPORT\tINDEX\tGID\t\t\t\t\tIPv4  \t\tVER\tDEV
---\t----\t-----\t---\t\t\t\t\t------------  \t---\t---
mlx5_0\t1\t0\tfe80:0000:0000:0000:0e42:a1ff:fe00:0001\t\t\tv1\tens1f0
mlx5_0\t1\t1\tfe80:0000:0000:0000:0e42:a1ff:fe00:0001\t\t\tv2\tens1f0
mlx5_0\t1\t2\t0000:0000:0000:0000:0000:ffff:0a00:0001\t10.0.0.1  \tv1\tens1f0
mlx5_0\t1\t3\t0000:0000:0000:0000:0000:ffff:0a00:0001\t10.0.0.1  \tv2\tens1f0
mlx5_2\t1\t0\tfe80:0000:0000:0000:0002:c903:00a1:b2c3\t\t\tv1\t
n_gids_found=5
";

    #[test]
    fn reads_the_scripts_tab_separated_rows() {
        let p = parse(&lines_of(TABS));
        assert!(p.warnings.is_empty(), "{:?}", p.warnings);
        let g = &p.value.gids;
        assert_eq!(g.len(), 5);
        assert_eq!(p.value.gids_found, Some(5));
        assert_eq!(
            (g[0].device.as_str(), g[0].port, g[0].index),
            ("mlx5_0", 1, 0)
        );
        assert_eq!(g[0].ipv4, None);
        assert_eq!(g[0].version.as_deref(), Some("v1"));
        assert_eq!(g[0].netdev.as_deref(), Some("ens1f0"));
        assert!(g[1].is_v2() && g[1].is_link_local() && !g[1].is_routable_v2());
        assert_eq!(g[3].ipv4.as_deref(), Some("10.0.0.1"));
        assert!(g[3].is_routable_v2());
        assert_eq!(
            g[4].netdev, None,
            "an InfiniBand port's GID has no interface"
        );
        assert_eq!(
            summary(&p.value),
            "5 GID(s) on 2 port(s), 1 routable RoCE v2"
        );
    }

    #[test]
    fn reads_rows_whose_tabs_became_spaces_and_empty_columns() {
        let p = parse(&lines_of(
            "DEV     PORT    INDEX   GID                                     IPv4            VER     DEV
---     ----    -----   ---                                     ------------    ---     ---
rocep105s0      1       1       fd93:16d3:59b6:010d:0690:81ff:fe00:0002                 v2      enp105s0
mlx5_3  1       0       fe80:0000:0000:0000:0002:c903:00a1:b2c4
mlx5_4  1       2       0000:0000:0000:0000:0000:ffff:0b00:0048 11.0.0.72               ens4
",
        ));
        assert!(p.warnings.is_empty(), "{:?}", p.warnings);
        let g = &p.value.gids;
        assert!(g[0].is_routable_v2(), "a unique-local IPv6 GID is routed");
        assert_eq!((g[1].version.clone(), g[1].netdev.clone()), (None, None));
        assert_eq!(g[2].version, None, "no types file: no version");
        assert_eq!(g[2].netdev.as_deref(), Some("ens4"));
        assert_eq!(p.value.gids_found, None);
    }

    #[test]
    fn an_empty_listing_is_read() {
        let p = parse(&lines_of(
            "DEV\tPORT\tINDEX\tGID\t\t\t\t\tIPv4  \t\tVER\tDEV\n---\t----\t-----\t---\t\t\t\t\t------------  \t---\t---\nn_gids_found=0\n",
        ));
        assert!(p.warnings.is_empty(), "{:?}", p.warnings);
        assert!(p.value.gids.is_empty());
        assert_eq!(p.value.gids_found, Some(0));
    }

    #[test]
    fn a_cut_gid_and_other_text_are_unread() {
        let p = parse(&lines_of(
            "DEV PORT INDEX GID IPv4 VER DEV\nmlx5_0 1 3 0000:0000:0000:0000:0000:ffff:0a\nthe port is down\n",
        ));
        assert!(p.value.gids.is_empty());
        assert_eq!(p.warnings.len(), 1, "one merged run: {:?}", p.warnings);
        assert!(p.warnings[0].span.contains(2) && p.warnings[0].span.contains(3));
    }

    #[test]
    fn detection_wants_the_header() {
        assert!(detect(&lines_of(
            "DEV\tPORT\tINDEX\tGID\t\t\t\t\tIPv4  \t\tVER\tDEV\n"
        ))
        .is_some());
        assert!(detect(&lines_of("DEV PORT INDEX\n")).is_none());
        assert!(detect(&lines_of("DEVICE PORT INDEX GID\n")).is_none());
    }

    proptest::proptest! {
        /// Any words after a row's first four: no panic, at most one row a line.
        #[test]
        fn any_row_is_read_without_panic(head in "\\PC{0,30}", tail in "\\PC{0,40}") {
            let text = format!("{head} 1 3 0000:0000:0000:0000:0000:ffff:0a00:0001 {tail}\n");
            let p = parse(&lines_of(&text));
            proptest::prop_assert!(p.value.gids.len() <= 1);
            proptest::prop_assert_eq!(p.value.gids.len() + usize::from(!p.warnings.is_empty()), 1);
        }
    }
}
