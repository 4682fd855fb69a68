//! Which host a dump file belongs to, from its place in a dump tree.
//!
//! Text evidence comes first and is the engine's job (a prompt's
//! `user@host`, a `pdsh` prefix; the CLI adds `hostname` output, see
//! [`hostname_in_text`]). When the text names no host, the file's path
//! decides, by a rule the user can choose with `--host-from`:
//!
//! - `auto` (default): a host-like word of the file name
//!   (`ibstat.node01.txt` → `node01`) when the files of a directory differ by
//!   name, otherwise the nearest host-like directory (`node07/ibstat.txt` →
//!   `node07`); dates, tool names and words like `dumps` are never hosts. A
//!   file whose path holds no host-like word is its own host, named after the
//!   file, so distinct files are never merged silently.
//! - `dir`: the directory holding the file (the root's own name for files
//!   directly in it).
//! - `stem`: the file name up to its first dot.
//! - `regex:<re>`: the first capture group (or the whole match) of `<re>`
//!   over the file's path below the root.
//!
//! Whatever the rule, a host that gathers files `auto` would have kept apart
//! is reported as a warning.

use std::borrow::Cow;
use std::collections::{BTreeSet, HashMap};

use rustc_hash::FxHashMap;

/// How to name hosts from paths.
#[derive(Clone, Debug)]
pub enum HostFrom {
    /// File name when it varies within its directory, else directory.
    Auto,
    /// The directory holding the file.
    Dir,
    /// The file name up to its first dot.
    Stem,
    /// A regular expression over the path below the root.
    Regex(regex::Regex),
}

impl HostFrom {
    /// Parses `auto`, `dir`, `stem` or `regex:<re>`.
    pub fn parse(text: &str) -> Result<Self, String> {
        match text {
            "auto" => Ok(Self::Auto),
            "dir" => Ok(Self::Dir),
            "stem" => Ok(Self::Stem),
            other => match other.strip_prefix("regex:") {
                Some(re) => regex::Regex::new(re)
                    .map(Self::Regex)
                    .map_err(|e| format!("--host-from regex: {e}")),
                None => Err(format!(
                    "--host-from {other:?}: use auto, dir, stem or regex:<expression>"
                )),
            },
        }
    }
}

/// A file's place in a dump tree.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Place {
    /// The name of the root directory (or archive) the file was found under.
    pub root_name: String,
    /// Directory names between the root and the file.
    pub dirs: Vec<String>,
    /// The file's name.
    pub file: String,
}

impl Place {
    /// The path below the root, `/`-separated.
    pub fn relative(&self) -> String {
        let mut parts: Vec<&str> = self.dirs.iter().map(String::as_str).collect();
        parts.push(&self.file);
        parts.join("/")
    }
}

/// A host name and why it was chosen.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Named {
    /// The host.
    pub host: String,
    /// Why, for `--list-hosts` (`file name`, `directory`, …): one of a
    /// few fixed texts for all but a regex's misses, so borrowed, not
    /// allocated for each of a fleet's files.
    pub why: Cow<'static, str>,
}

/// Words that name tools, formats or collections, never hosts.
const NOT_HOSTS: &[&str] = &[
    "ibstat",
    "ibstatus",
    "perfquery",
    "iblinkinfo",
    "ibqueryerrors",
    "ibv",
    "devinfo",
    "ibv-devinfo",
    "ibnetdiscover",
    "ibhosts",
    "ibswitches",
    "ibdiagnet",
    "rdma",
    "gids",
    "mst",
    "nvidia",
    "smi",
    "nvidia-smi",
    "nvlink",
    "topo",
    "dcgmi",
    "dcgm",
    "dmon",
    "pmon",
    "txt",
    "log",
    "logs",
    "out",
    "output",
    "outputs",
    "dump",
    "dumps",
    "data",
    "info",
    "capture",
    "captures",
    "collect",
    "collected",
    "report",
    "reports",
    "diag",
    "diags",
    "fabric",
    "counters",
    "errors",
    "status",
    "tmp",
    "sos",
    "sos-commands",
    "infiniband",
    "gz",
    "tgz",
    "tar",
    "zip",
    "json",
    "md",
    "a",
    "q",
    "x",
    "s",
    "e",
    "ec",
    "gt",
    "m",
    "all",
    "before",
    "after",
    "old",
    "new",
    "latest",
    "current",
];

/// A word that may be a host name: letters, digits and dashes, at least one
/// letter, not a date, not a tool or collection word.
fn host_like(word: &str) -> bool {
    let w = word.to_ascii_lowercase();
    !w.is_empty()
        && w.len() <= 63
        && w.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
        && w.chars().any(|c| c.is_ascii_alphabetic())
        && !w.starts_with('-')
        && !NOT_HOSTS.contains(&w.as_str())
        && !looks_like_date(&w)
        && !looks_like_device(&w)
}

/// `mlx5`, `mlx5-0`, `hfi1`, `irdma0`: an adapter, as in
/// `perfquery_mlx5_0_1.txt`, not a host.
fn looks_like_device(w: &str) -> bool {
    const DRIVERS: &[&str] = &[
        "mlx", "hfi", "qib", "irdma", "rxe", "siw", "efa", "qedr", "bnxt",
    ];
    DRIVERS.iter().any(|d| {
        w.strip_prefix(d).is_some_and(|rest| {
            !rest.is_empty() && rest.chars().all(|c| c.is_ascii_digit() || c == '-')
        })
    })
}

/// `2024-06-01`, `20240601T1200`, `jun01`: a snapshot's date, not a host.
fn looks_like_date(w: &str) -> bool {
    let digits = w.chars().filter(char::is_ascii_digit).count();
    let letters = w.chars().filter(char::is_ascii_alphabetic).count();
    // Mostly digits with at most a `T`/`Z` separator.
    (digits >= 6 && letters <= 1)
        || [
            "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
        ]
        .iter()
        .any(|m| w.starts_with(m) && w.len() <= 5 && digits == w.len() - 3)
}

/// The host-like word of a file name: pieces split at `.` and `_`, and
/// tool-word pieces dropped from `-`-joined words (`node07-ibstat` →
/// `node07`). The first such piece wins.
fn stem_host(file: &str) -> Option<String> {
    for piece in file.split(['.', '_']) {
        let kept: Vec<&str> = piece
            .split('-')
            .filter(|p| !NOT_HOSTS.contains(&p.to_ascii_lowercase().as_str()))
            .collect();
        let word = kept.join("-");
        if host_like(&word) {
            return Some(word);
        }
    }
    None
}

/// The nearest host-like directory between the root and the file.
fn dir_host(dirs: &[String]) -> Option<String> {
    dirs.iter()
        .rev()
        .find_map(|d| sos_dir_host(d).or_else(|| host_like(d).then(|| d.clone())))
}

/// `sosreport-node07-2024-06-01-abcdef` → `node07`: the words after
/// `sosreport-` up to the first one without a letter (the date).
fn sos_dir_host(dir: &str) -> Option<String> {
    let rest = dir.strip_prefix("sosreport-")?;
    let kept: Vec<&str> = rest
        .split('-')
        .take_while(|p| p.chars().any(|c| c.is_ascii_alphabetic()))
        .collect();
    let host = kept.join("-");
    host_like(&host).then_some(host)
}

/// The sosreport a place belongs to: the components up to the one before
/// `sos_commands`, or up to a `sosreport-…` directory.
pub fn sos_root(place: &Place) -> Option<Vec<String>> {
    // The path's components are walked where they are, not collected first:
    // most places are in no sosreport, and say so without an allocation.
    let path = || std::iter::once(&place.root_name).chain(&place.dirs);
    let len = match path().position(|c| c == "sos_commands") {
        Some(i) => i,
        None => path().position(|c| c.starts_with("sosreport"))? + 1,
    };
    Some(path().take(len).cloned().collect())
}

/// The host a sosreport's `hostname` file names: its first line, up to
/// the first dot (`node07.cluster.local` → `node07`).
pub fn sos_hostname(text: &str) -> Option<String> {
    let h = text
        .lines()
        .next()
        .map(str::trim)
        .filter(|h| !h.is_empty())?;
    Some(h.split('.').next().unwrap_or(h).to_owned())
}

/// True for a sosreport's `hostname` file (read to name the host, not analysed).
pub fn is_sos_hostname(place: &Place) -> bool {
    place.file == "hostname"
        && sos_root(place).is_some_and(|root| root.len() == 1 + place.dirs.len())
}

/// Inside a sosreport only `sos_commands/infiniband|nvidia/` hold fabric
/// output; everything else in it is skipped.
pub fn sos_skip(place: &Place) -> bool {
    let Some(root) = sos_root(place) else {
        return false;
    };
    let below: Vec<&String> = std::iter::once(&place.root_name)
        .chain(&place.dirs)
        .skip(root.len())
        .collect();
    !matches!(below.as_slice(), [s, d, ..] if *s == "sos_commands" && (*d == "infiniband" || *d == "nvidia"))
}

/// Names sosreport members after their report: its `hostname` file when
/// present (`hostnames` maps a report root to that file's first line), else
/// the report directory's name.
pub fn apply_sos_names(
    places: &[Place],
    names: &mut [Named],
    hostnames: &HashMap<Vec<String>, String>,
) {
    for (p, n) in places.iter().zip(names.iter_mut()) {
        let Some(root) = sos_root(p) else { continue };
        if let Some(h) = hostnames.get(&root) {
            *n = Named {
                host: h.clone(),
                why: Cow::Borrowed("sosreport hostname file"),
            };
        } else if let Some(h) = root.iter().rev().find_map(|d| sos_dir_host(d)) {
            *n = Named {
                host: h,
                why: Cow::Borrowed("sosreport directory name"),
            };
        }
    }
}

/// `auto`'s names, before collapse checks.
#[cfg(test)]
fn auto_names(places: &[Place]) -> Vec<Named> {
    auto_names_with(places, &mut FxHashMap::default())
}

/// [`auto_names`], with the host-like words of file names worked out so
/// far (`stem_of`, by file name), kept by a [`Namer`] from one batch of a
/// walk to the next: a fleet's files repeat a few names (`ibstat.txt` on
/// every host) in many directories, and the word of each name is worked
/// out once (21 times for 21,000 files, not 21,000).
fn auto_names_with(
    places: &[Place],
    stem_of: &mut FxHashMap<String, Option<String>>,
) -> Vec<Named> {
    for p in places {
        if !stem_of.contains_key(p.file.as_str()) {
            stem_of.insert(p.file.clone(), stem_host(&p.file));
        }
    }
    let stem_of = &*stem_of;
    let stem = |p: &Place| stem_of.get(p.file.as_str()).and_then(Option::as_deref);
    // Whether file names vary in each directory: its files, and whether two
    // of them have different stems (the first stem seen, and a flag once
    // another turns up).
    let mut per_dir: FxHashMap<&[String], DirStems<'_>> = FxHashMap::default();
    for p in places {
        let dir = per_dir.entry(&p.dirs).or_default();
        dir.files += 1;
        if let Some(s) = stem(p) {
            match dir.first_stem {
                None => dir.first_stem = Some(s),
                Some(first) => dir.stems_differ |= first != s,
            }
        }
    }
    let mut dir_of: FxHashMap<(&str, &[String]), Option<String>> = FxHashMap::default();
    places
        .iter()
        .map(|p| {
            // The directory named on the command line counts too when it
            // is named like a cluster node (letters and digits: `gpu00138/`,
            // a host's own dump directory); a collection's name (`fleet/`)
            // does not.
            let dir = dir_of
                .entry((p.root_name.as_str(), p.dirs.as_slice()))
                .or_insert_with(|| {
                    dir_host(&p.dirs).or_else(|| {
                        let root = &p.root_name;
                        (host_like(root) && root.chars().any(|c| c.is_ascii_digit()))
                            .then(|| root.clone())
                    })
                });
            let varies = per_dir
                .get(p.dirs.as_slice())
                .is_some_and(|d| d.stems_differ || d.files == 1);
            match (stem(p), dir) {
                (Some(s), None) => Named {
                    host: s.to_owned(),
                    why: Cow::Borrowed("file name"),
                },
                (Some(s), Some(_)) if varies => Named {
                    host: s.to_owned(),
                    why: Cow::Borrowed("file name (names differ in its directory)"),
                },
                (_, Some(d)) => Named {
                    host: d.clone(),
                    why: Cow::Borrowed("directory"),
                },
                (None, None) => {
                    let rel = p.relative();
                    let base = rel.split('.').next().unwrap_or(&rel).to_owned();
                    Named {
                        host: if base.is_empty() { rel } else { base },
                        why: Cow::Borrowed("no host-like word in the path: named after the file"),
                    }
                }
            }
        })
        .collect()
}

/// What [`auto_names`] learns of one directory's files.
#[derive(Default)]
struct DirStems<'a> {
    /// How many files it holds.
    files: usize,
    /// The first host-like file-name word among them.
    first_stem: Option<&'a str>,
    /// Whether another file's word differs from that first one.
    stems_differ: bool,
}

/// Names every file by `rule`; returns the names and warnings about files
/// merged into one host that `auto` would have kept apart (or, for `auto`,
/// same-named files from different directories).
pub fn name_all(places: &[Place], rule: &HostFrom) -> (Vec<Named>, Vec<String>) {
    let mut namer = Namer::new(rule);
    let names = namer.name(places);
    (names, namer.warnings())
}

/// Names a walk's files a few directories at a time, as the walk hands
/// them over, so that the first hosts can be read before the walk ends;
/// the warnings about merged files come once every file is named.
pub struct Namer<'r> {
    rule: &'r HostFrom,
    merged: MergeWarnings,
    /// The host-like word of each file name named so far.
    stem_of: FxHashMap<String, Option<String>>,
}

impl<'r> Namer<'r> {
    /// A namer by `rule`.
    pub fn new(rule: &'r HostFrom) -> Self {
        Self {
            rule,
            merged: MergeWarnings::default(),
            stem_of: FxHashMap::default(),
        }
    }

    /// The names of `places`, which must hold every file of each directory
    /// they are in (`auto` compares a directory's file names).
    pub fn name(&mut self, places: &[Place]) -> Vec<Named> {
        let auto = auto_names_with(places, &mut self.stem_of);
        let names: Vec<Named> = match self.rule {
            // `auto`'s names are the answer: no copy of them.
            HostFrom::Auto => {
                for (p, a) in places.iter().zip(&auto) {
                    self.merged.add(p, a, a);
                }
                return auto;
            }
            HostFrom::Dir => places
                .iter()
                .map(|p| Named {
                    host: p.dirs.last().unwrap_or(&p.root_name).clone(),
                    why: Cow::Borrowed("directory (--host-from dir)"),
                })
                .collect(),
            HostFrom::Stem => places
                .iter()
                .zip(&auto)
                .map(
                    |(p, a)| match p.file.split('.').next().filter(|s| !s.is_empty()) {
                        Some(s) => Named {
                            host: s.to_owned(),
                            why: Cow::Borrowed("file name up to its first dot (--host-from stem)"),
                        },
                        None => a.clone(),
                    },
                )
                .collect(),
            HostFrom::Regex(re) => places
                .iter()
                .zip(&auto)
                .map(|(p, a)| {
                    let rel = p.relative();
                    let hit = re.captures(&rel).and_then(|c| {
                        c.name("host")
                            .or_else(|| c.get(1))
                            .or_else(|| c.get(0))
                            .map(|m| m.as_str().to_owned())
                    });
                    match hit.filter(|h| !h.is_empty()) {
                        Some(h) => Named {
                            host: h,
                            why: Cow::Borrowed("--host-from regex"),
                        },
                        None => Named {
                            host: a.host.clone(),
                            why: Cow::Owned(format!("{} (the regex did not match)", a.why)),
                        },
                    }
                })
                .collect(),
        };
        for ((p, a), n) in places.iter().zip(&auto).zip(&names) {
            self.merged.add(p, a, n);
        }
        names
    }

    /// Warnings about files read as one host that `auto` would have kept
    /// apart, or same-named files from different directories, over every
    /// file named so far, in the order of the hosts' names.
    ///
    /// Same-named files in several directories on more than
    /// [`ALIKE_LISTED`] hosts are one warning: a fleet collected one
    /// directory per command (`ibstat/node01.txt`, `perfquery/node01.txt`)
    /// or per snapshot gives it for every host, and a thousand lines of one
    /// remark hide the others.
    pub fn warnings(self) -> Vec<String> {
        fold_alike(self.merged.finish())
    }
}

/// How many hosts' same-name warnings are listed one by one.
const ALIKE_LISTED: usize = 3;

/// [`MergeWarnings::finish`]'s warnings, those about same-named files in
/// several directories folded into one when more than [`ALIKE_LISTED`]
/// hosts have one (at the first's place), naming the first as the example.
fn fold_alike(warnings: Vec<MergeWarning>) -> Vec<String> {
    let same_name = warnings
        .iter()
        .filter(|w| matches!(w, MergeWarning::SameName { .. }))
        .count();
    if same_name <= ALIKE_LISTED {
        return warnings.iter().map(ToString::to_string).collect();
    }
    let mut out = Vec::with_capacity(warnings.len() - same_name + 1);
    let mut folded = false;
    for w in warnings {
        match w {
            MergeWarning::SameName {
                host,
                files,
                dirs,
                example,
            } => {
                if !folded {
                    folded = true;
                    out.push(format!(
                        "{same_name} hosts: each host's files of one name in several directories \
                         are read as one host (a directory per snapshot or per command?), e.g. host \
                         {host}: {files} files in {dirs} directories ({example}…); --host-from dir \
                         keeps them apart"
                    ));
                }
            }
            other @ MergeWarning::LookLikeHosts { .. } => out.push(other.to_string()),
        }
    }
    out
}

/// A remark about files read as one host.
enum MergeWarning {
    /// Files `auto` would have named as several hosts.
    LookLikeHosts {
        host: String,
        files: usize,
        hosts: usize,
        example: String,
    },
    /// Files of one name in several directories.
    SameName {
        host: String,
        files: usize,
        dirs: usize,
        example: String,
    },
}

impl std::fmt::Display for MergeWarning {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            MergeWarning::LookLikeHosts {
                host,
                files,
                hosts,
                example,
            } => write!(
                f,
                "host {host}: {files} files that look like {hosts} different hosts are read \
                 as one ({example}…); check --host-from"
            ),
            MergeWarning::SameName {
                host,
                files,
                dirs,
                example,
            } => write!(
                f,
                "host {host}: {files} files of that name in {dirs} directories are read as one \
                 host (snapshots of one machine?) ({example}…); --host-from dir keeps them apart"
            ),
        }
    }
}

/// What [`MergeWarnings`] keeps of the files read as one host: counts and
/// the first few paths, not the files.
struct MergedHost {
    files: usize,
    /// The `auto` host of each file, told apart only once two differ.
    auto_hosts: Distinct<String>,
    /// Whether every file was named by its file name.
    by_name: bool,
    /// The directory of each file, told apart only once two differ.
    dirs: Distinct<Vec<String>>,
    /// The first three files' paths below the root.
    examples: Vec<String>,
}

/// Distinct values seen, kept as the first one until another turns up:
/// most hosts' files all agree.
enum Distinct<T> {
    One(T),
    Many(BTreeSet<T>),
}

impl<T: Ord + Clone> Distinct<T> {
    fn add(&mut self, value: &T) {
        match self {
            Distinct::One(first) if first == value => {}
            Distinct::One(first) => {
                *self = Distinct::Many(BTreeSet::from([first.clone(), value.clone()]));
            }
            Distinct::Many(all) => {
                if !all.contains(value) {
                    all.insert(value.clone());
                }
            }
        }
    }

    fn len(&self) -> usize {
        match self {
            Distinct::One(_) => 1,
            Distinct::Many(all) => all.len(),
        }
    }
}

/// The warnings of [`Namer`], gathered host by host as files are named.
#[derive(Default)]
struct MergeWarnings {
    hosts: FxHashMap<String, MergedHost>,
}

impl MergeWarnings {
    /// One file, its `auto` name and the name it is read under.
    fn add(&mut self, place: &Place, auto: &Named, name: &Named) {
        let by_name = name.why.starts_with("file name");
        match self.hosts.get_mut(name.host.as_str()) {
            Some(host) => {
                host.files += 1;
                host.auto_hosts.add(&auto.host);
                host.by_name &= by_name;
                host.dirs.add(&place.dirs);
                if host.examples.len() < 3 {
                    host.examples.push(place.relative());
                }
            }
            None => {
                self.hosts.insert(
                    name.host.clone(),
                    MergedHost {
                        files: 1,
                        auto_hosts: Distinct::One(auto.host.clone()),
                        by_name,
                        dirs: Distinct::One(place.dirs.clone()),
                        examples: vec![place.relative()],
                    },
                );
            }
        }
    }

    fn finish(self) -> Vec<MergeWarning> {
        let mut warnings: Vec<MergeWarning> = Vec::new();
        for (host, merged) in self.hosts {
            if merged.files < 2 {
                continue;
            }
            let example = merged.examples.join(", ");
            let distinct_auto = merged.auto_hosts.len();
            if distinct_auto > 1 {
                warnings.push(MergeWarning::LookLikeHosts {
                    host,
                    files: merged.files,
                    hosts: distinct_auto,
                    example,
                });
            } else if merged.by_name && merged.dirs.len() > 1 {
                warnings.push(MergeWarning::SameName {
                    host,
                    files: merged.files,
                    dirs: merged.dirs.len(),
                    example,
                });
            }
        }
        warnings.sort_unstable_by(|a, b| a.host().cmp(b.host()));
        warnings
    }
}

impl MergeWarning {
    fn host(&self) -> &str {
        match self {
            MergeWarning::LookLikeHosts { host, .. } | MergeWarning::SameName { host, .. } => host,
        }
    }
}

/// The host a `hostname` (or `uname -n`) command printed in a paste: the
/// line after a prompt ending in that command, when it is one host-like word.
pub fn hostname_in_text(bytes: &[u8]) -> Option<String> {
    // Prompts sit near the top of a dump; do not scan gigabytes for one.
    let head = bytes.get(..bytes.len().min(1 << 20)).unwrap_or(bytes);
    let text = String::from_utf8_lossy(head);
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        let t = line.trim_end();
        // The asking commands end in one of these words: every other line
        // (nearly all of them) is passed over without searching it.
        let last_word = t.rsplit(char::is_whitespace).next().unwrap_or(t);
        if !matches!(
            last_word,
            "hostname" | "-s" | "-f" | "--short" | "--fqdn" | "-n"
        ) {
            continue;
        }
        let command = ["$ ", "# ", "> "]
            .iter()
            .filter_map(|p| t.rfind(p).map(|i| t.get(i + p.len()..).unwrap_or("")))
            .next()
            .or_else(|| (t == "hostname" || t == "uname -n").then_some(t));
        let Some(command) = command else { continue };
        let words: Vec<&str> = command.split_whitespace().collect();
        let asks = matches!(
            words.as_slice(),
            ["hostname"] | ["hostname", "-s" | "-f" | "--short" | "--fqdn"] | ["uname", "-n"]
        );
        if !asks {
            continue;
        }
        let answer = lines.by_ref().map(str::trim).find(|l| !l.is_empty())?;
        let host = answer.split('.').next().unwrap_or(answer);
        if !answer.contains(char::is_whitespace)
            && host.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
            && host.chars().any(|c| c.is_ascii_alphabetic())
        {
            return Some(host.to_owned());
        }
    }
    None
}

/// The names the naming properties draw paths from, so that names
/// collide: host directories, tool files, files named after hosts, dates.
/// Each property adds its own (sosreports where their `hostname` files
/// are not read from disk).
#[cfg(test)]
pub(crate) mod vocabulary {
    /// Directory names.
    pub(crate) const DIRS: [&str; 6] = [
        "node01",
        "node02",
        "gpu0007",
        "rack1",
        "dumps",
        "2024-06-01",
    ];
    /// File names.
    pub(crate) const FILES: [&str; 8] = [
        "ibstat.txt",
        "perfquery_mlx5_0_1.txt",
        "node01.txt",
        "node02.ibstat",
        "ibstat.node03.txt",
        "node07-ibstat.txt",
        "nvlink_e.txt",
        "a.txt",
    ];
}

#[cfg(test)]
mod tests {
    use super::*;

    fn place(rel: &str) -> Place {
        let mut parts: Vec<String> = rel.split('/').map(str::to_owned).collect();
        let file = parts.pop().unwrap_or_default();
        Place {
            root_name: "dumps".into(),
            dirs: parts,
            file,
        }
    }

    fn hosts(rels: &[&str], rule: &HostFrom) -> (Vec<String>, Vec<String>) {
        let places: Vec<Place> = rels.iter().map(|r| place(r)).collect();
        let (names, warnings) = name_all(&places, rule);
        (names.into_iter().map(|n| n.host).collect(), warnings)
    }

    #[test]
    fn the_issue_cases() {
        let (h, w) = hosts(&["ibstat.node01.txt", "ibstat.node02.txt"], &HostFrom::Auto);
        assert_eq!(h, ["node01", "node02"]);
        assert!(w.is_empty());
        let (h, _) = hosts(&["2024-06-01/node07.txt"], &HostFrom::Auto);
        assert_eq!(h, ["node07"]);
        let (h, _) = hosts(
            &[
                "node07/ibstat.txt",
                "node07/perfquery-x.txt",
                "node08/ibstat.txt",
            ],
            &HostFrom::Auto,
        );
        assert_eq!(h, ["node07", "node07", "node08"]);
        let (h, _) = hosts(&["rack1/node07.txt", "rack1/node08.txt"], &HostFrom::Auto);
        assert_eq!(h, ["node07", "node08"]);
        let (h, _) = hosts(
            &["node07/node07-ibstat.txt", "node07/node07-perfquery.txt"],
            &HostFrom::Auto,
        );
        assert_eq!(h, ["node07", "node07"]);
    }

    #[test]
    fn a_host_directory_named_on_the_command_line_names_its_files() {
        let places: Vec<Place> = ["ibstat.txt", "nvlink_e.txt", "perfquery_mlx5_0_1.txt"]
            .iter()
            .map(|f| Place {
                root_name: "gpu00138".into(),
                dirs: Vec::new(),
                file: (*f).into(),
            })
            .collect();
        let (names, warnings) = name_all(&places, &HostFrom::Auto);
        let hosts: Vec<&str> = names.iter().map(|n| n.host.as_str()).collect();
        assert_eq!(hosts, ["gpu00138", "gpu00138", "gpu00138"]);
        assert!(warnings.is_empty(), "{warnings:?}");
        assert!(!host_like("mlx5") && !host_like("hfi1") && host_like("gpu00138"));
    }

    #[test]
    fn files_without_a_host_like_word_stay_apart() {
        let (h, w) = hosts(&["ibstat.txt", "2024-06-01/ibstat.txt"], &HostFrom::Auto);
        assert_eq!(h, ["ibstat", "2024-06-01/ibstat"]);
        assert!(w.is_empty());
    }

    #[test]
    fn explicit_rules_and_collapse_warnings() {
        let files = ["ibstat.node01.txt", "ibstat.node02.txt"];
        let (h, w) = hosts(&files, &HostFrom::Stem);
        assert_eq!(h, ["ibstat", "ibstat"]);
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(w[0].contains("2 different hosts"), "{w:?}");
        let (h, w) = hosts(&files, &HostFrom::Dir);
        assert_eq!(h, ["dumps", "dumps"]);
        assert_eq!(w.len(), 1);
        let re = HostFrom::parse(r"regex:\.(node\d+)\.").unwrap();
        let (h, w) = hosts(&files, &re);
        assert_eq!(h, ["node01", "node02"]);
        assert!(w.is_empty());
        // Same name in two dated directories: one host, said out loud.
        let (h, w) = hosts(
            &["2024-06-01/node07.txt", "2024-06-08/node07.txt"],
            &HostFrom::Auto,
        );
        assert_eq!(h, ["node07", "node07"]);
        assert!(w[0].contains("snapshots"), "{w:?}");
        assert!(HostFrom::parse("regex:(").is_err());
        assert!(HostFrom::parse("name").is_err());
    }

    /// A fleet collected one directory per command gives every host the
    /// same remark: past three hosts it is said once, with an example and
    /// the count; a remark of another kind is still said for its host.
    #[test]
    fn same_name_warnings_of_many_hosts_are_one() {
        let per_command = |hosts: &[&str]| -> Vec<String> {
            hosts
                .iter()
                .flat_map(|h| {
                    ["ibstat", "perfquery", "topo"]
                        .into_iter()
                        .map(move |tool| format!("{tool}/{h}.txt"))
                })
                .collect()
        };
        let three = per_command(&["node01", "node02", "node03"]);
        let three: Vec<&str> = three.iter().map(String::as_str).collect();
        let (_, w) = hosts(&three, &HostFrom::Auto);
        assert_eq!(w.len(), 3, "{w:?}");
        assert!(w.iter().all(|w| w.contains("snapshots")), "{w:?}");

        let files = per_command(&["node01", "node02", "node03", "node04", "node05"]);
        let files: Vec<&str> = files.iter().map(String::as_str).collect();
        let (h, w) = hosts(&files, &HostFrom::Auto);
        assert_eq!(h.iter().filter(|h| *h == "node04").count(), 3);
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(w[0].starts_with("5 hosts: "), "{w:?}");
        assert!(
            w[0].contains("host node01: 3 files in 3 directories (ibstat/node01.txt"),
            "{w:?}"
        );
        assert!(w[0].contains("--host-from dir"), "{w:?}");

        // A remark of the other kind keeps its place and its host.
        let same = |host: &str| MergeWarning::SameName {
            host: host.to_owned(),
            files: 2,
            dirs: 2,
            example: format!("a/{host}.txt, b/{host}.txt"),
        };
        let looks = MergeWarning::LookLikeHosts {
            host: "n2".to_owned(),
            files: 2,
            hosts: 2,
            example: "x, y".to_owned(),
        };
        let w = fold_alike(vec![same("n1"), looks, same("n3"), same("n4"), same("n5")]);
        assert_eq!(w.len(), 2, "{w:?}");
        assert!(w[0].starts_with("4 hosts: "), "{w:?}");
        assert!(
            w[1].starts_with("host n2: 2 files that look like 2"),
            "{w:?}"
        );
    }

    #[test]
    fn sosreports_are_named_after_their_report() {
        let p = place("sosreport-node07-2024-06-01-abc/sos_commands/infiniband/ibstat");
        assert!(!sos_skip(&p));
        assert!(sos_skip(&place(
            "sosreport-node07-2024-06-01-abc/etc/hosts"
        )));
        assert!(is_sos_hostname(&place(
            "sosreport-node07-2024-06-01-abc/hostname"
        )));
        let (mut names, _) = name_all(std::slice::from_ref(&p), &HostFrom::Auto);
        apply_sos_names(std::slice::from_ref(&p), &mut names, &HashMap::new());
        assert_eq!(names[0].host, "node07");
        let mut map = HashMap::new();
        map.insert(
            vec![
                "dumps".to_owned(),
                "sosreport-node07-2024-06-01-abc".to_owned(),
            ],
            "gpu-07".to_owned(),
        );
        apply_sos_names(std::slice::from_ref(&p), &mut names, &map);
        assert_eq!(names[0].host, "gpu-07");
    }

    #[test]
    fn a_sosreport_hostname_file_names_its_short_host() {
        assert_eq!(
            sos_hostname("node07.cluster.local\n").as_deref(),
            Some("node07")
        );
        assert_eq!(
            sos_hostname("  gpu-12 \nignored\n").as_deref(),
            Some("gpu-12")
        );
        assert_eq!(sos_hostname("\nnode07\n"), None);
    }

    #[test]
    fn hostname_output_names_the_host() {
        let text = b"[root@localhost ~]# hostname\nnode07.cluster.local\n[root@localhost ~]# ibstat\nCA 'mlx5_0'\n";
        assert_eq!(hostname_in_text(text).as_deref(), Some("node07"));
        assert_eq!(hostname_in_text(b"$ hostname\nnot a host name\n"), None);
        assert_eq!(hostname_in_text(b"$ ibstat\nhostname\n"), None);
    }

    /// The naming code before its maps were keyed by the fast hasher and
    /// its directory and warning checks stopped building sets for every
    /// host: the oracle of the properties below.
    mod before {
        use super::super::{dir_host, host_like, stem_host, Named, Place};
        use std::collections::{BTreeMap, BTreeSet, HashMap};

        /// The sosreport a place belongs to: the components up to the one before
        /// `sos_commands`, or up to a `sosreport-…` directory.
        pub fn sos_root(place: &Place) -> Option<Vec<String>> {
            let all: Vec<&String> = std::iter::once(&place.root_name)
                .chain(&place.dirs)
                .collect();
            if let Some(i) = all.iter().position(|c| *c == "sos_commands") {
                return Some(all.get(..i)?.iter().map(|c| (*c).clone()).collect());
            }
            let i = all.iter().position(|c| c.starts_with("sosreport"))?;
            Some(all.get(..=i)?.iter().map(|c| (*c).clone()).collect())
        }

        /// `auto`'s names, before collapse checks.
        pub fn auto_names(places: &[Place]) -> Vec<Named> {
            // Stem hosts per directory, to see whether file names vary there.
            let mut per_dir: HashMap<&[String], BTreeSet<Option<String>>> = HashMap::new();
            let mut count: HashMap<&[String], usize> = HashMap::new();
            // A fleet's files repeat a few names (`ibstat.txt` on every host) in
            // many directories: each name's stem and each directory's host are
            // worked out once (this runs serially before any file is read).
            let mut stem_of: HashMap<&str, Option<String>> = HashMap::new();
            let stems: Vec<Option<String>> = places
                .iter()
                .map(|p| {
                    stem_of
                        .entry(p.file.as_str())
                        .or_insert_with(|| stem_host(&p.file))
                        .clone()
                })
                .collect();
            for (p, s) in places.iter().zip(&stems) {
                let names = per_dir.entry(&p.dirs).or_default();
                if s.is_some() {
                    names.insert(s.clone());
                }
                *count.entry(&p.dirs).or_default() += 1;
            }
            let mut dir_of: HashMap<(&str, &[String]), Option<String>> = HashMap::new();
            places
                .iter()
                .zip(stems)
                .map(|(p, stem)| {
                    // The directory named on the command line counts too when it
                    // is named like a cluster node (letters and digits: `gpu00138/`,
                    // a host's own dump directory); a collection's name (`fleet/`)
                    // does not.
                    let dir = dir_of
                        .entry((p.root_name.as_str(), p.dirs.as_slice()))
                        .or_insert_with(|| {
                            dir_host(&p.dirs).or_else(|| {
                                let root = &p.root_name;
                                (host_like(root) && root.chars().any(|c| c.is_ascii_digit()))
                                    .then(|| root.clone())
                            })
                        })
                        .clone();
                    let varies = per_dir.get(p.dirs.as_slice()).map_or(0, BTreeSet::len) > 1
                        || count.get(p.dirs.as_slice()).copied().unwrap_or(0) == 1;
                    match (stem, dir) {
                        (Some(s), None) => Named {
                            host: s,
                            why: "file name".into(),
                        },
                        (Some(s), Some(_)) if varies => Named {
                            host: s,
                            why: "file name (names differ in its directory)".into(),
                        },
                        (_, Some(d)) => Named {
                            host: d,
                            why: "directory".into(),
                        },
                        (None, None) => {
                            let rel = p.relative();
                            let base = rel.split('.').next().unwrap_or(&rel).to_owned();
                            Named {
                                host: if base.is_empty() { rel } else { base },
                                why: "no host-like word in the path: named after the file".into(),
                            }
                        }
                    }
                })
                .collect()
        }

        /// Warnings about files that `names` reads as one host: files `auto` would
        /// have kept apart, or same-named files from different directories.
        pub fn merge_warnings(places: &[Place], auto: &[Named], names: &[Named]) -> Vec<String> {
            let mut groups: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
            for (i, n) in names.iter().enumerate() {
                groups.entry(&n.host).or_default().push(i);
            }
            let mut warnings = Vec::new();
            for (host, members) in groups {
                if members.len() < 2 {
                    continue;
                }
                let get = |i: usize| places.get(i);
                let distinct_auto: BTreeSet<&str> = members
                    .iter()
                    .filter_map(|&i| auto.get(i).map(|a| a.host.as_str()))
                    .collect();
                let dirs: BTreeSet<&[String]> = members
                    .iter()
                    .filter_map(|&i| get(i).map(|p| p.dirs.as_slice()))
                    .collect();
                let by_name = members
                    .iter()
                    .all(|&i| names.get(i).is_some_and(|n| n.why.starts_with("file name")));
                // Built only for a warning: most groups are one host's files.
                let example = || {
                    members
                        .iter()
                        .take(3)
                        .filter_map(|&i| get(i).map(Place::relative))
                        .collect::<Vec<String>>()
                        .join(", ")
                };
                if distinct_auto.len() > 1 {
                    warnings.push(format!(
                        "host {host}: {} files that look like {} different hosts are read as one ({}…); \
                         check --host-from",
                        members.len(),
                        distinct_auto.len(),
                        example()
                    ));
                } else if by_name && dirs.len() > 1 {
                    warnings.push(format!(
                        "host {host}: {} files of that name in {} directories are read as one host \
                         (snapshots of one machine?) ({}…); --host-from dir keeps them apart",
                        members.len(),
                        dirs.len(),
                        example()
                    ));
                }
            }
            warnings
        }
    }

    /// Places drawn from [`vocabulary`] and sosreports, so that names
    /// collide.
    fn places_strategy() -> impl proptest::strategy::Strategy<Value = Vec<Place>> {
        use proptest::prelude::*;
        let dir = prop::sample::select(
            [
                &vocabulary::DIRS[..],
                &[
                    "sosreport-node09-2024-06-01-x",
                    "sos_commands",
                    "infiniband",
                    "mlx5_0",
                ],
            ]
            .concat(),
        );
        let file = prop::sample::select(
            [&vocabulary::FILES[..], &["hostname", ".txt", "jun01.log"]].concat(),
        );
        let root = prop::sample::select(vec!["fleet", "gpu00138", "dumps"]);
        prop::collection::vec(
            (root, prop::collection::vec(dir, 0..3), file).prop_map(|(r, d, f)| Place {
                root_name: r.to_owned(),
                dirs: d.into_iter().map(str::to_owned).collect(),
                file: f.to_owned(),
            }),
            0..24,
        )
    }

    proptest::proptest! {
        #[test]
        fn names_and_warnings_match_the_code_before(places in places_strategy()) {
            for p in &places {
                proptest::prop_assert_eq!(sos_root(p), before::sos_root(p));
            }
            let auto = auto_names(&places);
            let was = before::auto_names(&places);
            proptest::prop_assert_eq!(&auto, &was);
            proptest::prop_assert_eq!(
                warnings_of(&places, &auto, &auto),
                before::merge_warnings(&places, &was, &was)
            );
            // A rule that merges what `auto` keeps apart: every file one host.
            let one: Vec<Named> = places
                .iter()
                .map(|_| Named { host: "h".into(), why: Cow::Borrowed("file name") })
                .collect();
            proptest::prop_assert_eq!(
                warnings_of(&places, &auto, &one),
                before::merge_warnings(&places, &was, &one)
            );
        }

        /// Named a few whole directories at a time, as a walk hands them
        /// over, files get the names and warnings of one naming of all.
        #[test]
        fn naming_directory_by_directory_names_as_all_at_once(
            mut places in places_strategy(),
            cuts in proptest::collection::vec(proptest::bool::ANY, 24),
            rule in proptest::sample::select(vec!["auto", "dir", "stem", r"regex:node(\d+)"]),
        ) {
            let rule = HostFrom::parse(rule).unwrap();
            // A walk gives a directory's files together.
            places.sort_by(|a, b| a.dirs.cmp(&b.dirs));
            let (all, all_warnings) = name_all(&places, &rule);
            let mut namer = Namer::new(&rule);
            let mut names = Vec::new();
            let mut start = 0;
            for end in 1..=places.len() {
                let dir_ends = places.get(end).is_none_or(|p| p.dirs != places[end - 1].dirs);
                if dir_ends && (end == places.len() || cuts[end]) {
                    names.extend(namer.name(&places[start..end]));
                    start = end;
                }
            }
            proptest::prop_assert_eq!(names, all);
            proptest::prop_assert_eq!(namer.warnings(), all_warnings);
        }
    }

    fn warnings_of(places: &[Place], auto: &[Named], names: &[Named]) -> Vec<String> {
        let mut merged = MergeWarnings::default();
        for ((p, a), n) in places.iter().zip(auto).zip(names) {
            merged.add(p, a, n);
        }
        merged.finish().iter().map(ToString::to_string).collect()
    }
}
