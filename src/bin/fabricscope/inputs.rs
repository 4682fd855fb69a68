//! Gathering inputs: standard input, files, directory trees of dumps and
//! archives of them.
//!
//! - A path named on the command line that cannot be read is a
//!   [`Problem`] with `named: true`: the commands report it on stderr and
//!   exit 2 (ripgrep's convention) unless `--keep-going`.
//! - Directories are walked with `walkdir`: sorted, hidden and VCS
//!   directories skipped unless `--hidden`, symbolic links followed but a
//!   loop (and any second path to a file already read) is read once;
//!   unreadable directories and files are problems with `named: false`.
//! - `.tar`, `.tar.gz`/`.tgz`, `.gz` and `.zip` files are read in place
//!   ([`crate::archive`]); sosreports contribute only their
//!   `sos_commands/infiniband/` and `sos_commands/nvidia/` outputs.
//! - Hosts are named from the text first, then the path ([`crate::naming`]).

use crate::archive;
use crate::naming::{self, HostFrom, Named, Place};
use rustc_hash::{FxHashMap, FxHashSet};
use std::borrow::Cow;
use std::collections::{HashMap, HashSet};
use std::io::Read;
use std::path::{Path, PathBuf};

/// How to gather inputs.
#[derive(Clone, Debug)]
pub struct InputOptions {
    /// Read hidden files and directories (and VCS directories) too.
    pub hidden: bool,
    /// How to name hosts from paths.
    pub host_from: HostFrom,
    /// A file a walk leaves out, by device and inode: the report being
    /// written (`-o` into the directory analysed is no input).
    pub exclude: Option<(u64, u64)>,
}

impl Default for InputOptions {
    fn default() -> Self {
        Self {
            hidden: false,
            host_from: HostFrom::Auto,
            exclude: None,
        }
    }
}

/// One input to analyse: its bytes, a display name and the host it belongs to.
#[derive(Clone)]
pub struct Input {
    /// Path as given (`archive.tar.gz:member` for archive members), or `-`.
    pub name: String,
    /// Host implied by the file's place or by `hostname` output in it.
    pub host: Option<String>,
    /// Why that host (for `--list-hosts`).
    pub host_why: Cow<'static, str>,
    /// The raw bytes, or why they could not be read.
    pub bytes: Result<Vec<u8>, String>,
    /// The file's modification time (seconds since the Unix epoch): the
    /// snapshot time of a dump whose text carries none.
    pub modified_unix: Option<f64>,
    /// Named on the command line (its failure is fatal without `--keep-going`).
    pub named: bool,
}

/// Something that could not be read, or was left out on purpose.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Problem {
    /// The path.
    pub input: String,
    /// Why.
    pub reason: String,
    /// Named on the command line.
    pub named: bool,
}

/// What a walk found: inputs to read, and what it could not read or skipped.
#[derive(Default)]
pub struct Listing {
    /// Inputs not yet read, in order.
    pub sources: Vec<Source>,
    /// Paths that could not be read (missing, unreadable, loops).
    pub problems: Vec<Problem>,
    /// Things worth saying on stderr: skipped hidden directories, host names
    /// that merge files.
    pub notes: Vec<String>,
}

/// An input not yet read: batch runs list thousands and read them in parallel.
#[derive(Clone)]
pub enum Source {
    /// Standard input.
    Stdin,
    /// A file, with the host its path implies.
    File {
        /// The file.
        path: PathBuf,
        /// The host from its place in a dump tree (none for a named file).
        host: Option<Named>,
        /// Named on the command line.
        named: bool,
        /// Its modification time and size, when something already
        /// stat'ed it (a path named on the command line); files found by a
        /// walk are stat'ed when read, through the open file ([`read_file`]).
        stat: Option<Stat>,
    },
    /// A member of a tar or zip archive, read when the archive was listed
    /// ([`expand_archives`]) so that its hosts form units of their own.
    Member(std::sync::Arc<Input>),
    /// A single gzipped file, expanded when read.
    Archive {
        /// The archive.
        path: PathBuf,
        /// Its kind.
        kind: archive::Kind,
        /// For a `.gz` found in a tree, the host its place implies.
        host: Option<Named>,
        /// Named on the command line.
        named: bool,
        /// How to name the hosts of its members.
        host_from: HostFrom,
    },
}

impl Source {
    /// The host its place names (a host directory, in a tree or an
    /// archive), which groups it with that host's other files.
    pub fn place_host(&self) -> Option<&str> {
        match self {
            Source::File {
                host: Some(named), ..
            } => Some(named.host.as_str()),
            Source::Member(member) => member.host.as_deref(),
            _ => None,
        }
    }

    /// Reads the input's bytes; an archive gives one input per member.
    pub fn read(self) -> Vec<Input> {
        self.read_in(&mut OpenDir::default())
    }

    /// [`Source::read`], a file opened through `dir`: sources read one
    /// after the other from the same directories share one.
    pub fn read_in(self, dir: &mut OpenDir) -> Vec<Input> {
        match self {
            Source::Stdin => vec![stdin()],
            Source::File {
                path,
                host,
                named,
                stat,
            } => vec![file(dir, &path, host, named, stat)],
            Source::Member(member) => vec![Input::clone(&member)],
            Source::Archive {
                path,
                kind,
                host,
                named,
                host_from,
            } => read_archive(&path, kind, host, named, &host_from),
        }
    }
}

/// Expands paths into inputs and reads them (in order). No paths, or `-`,
/// means standard input.
pub fn gather(paths: &[PathBuf], options: &InputOptions) -> (Vec<Input>, Listing) {
    let mut listing = list(paths, options);
    let sources = std::mem::take(&mut listing.sources);
    let mut dir = OpenDir::default();
    (
        sources
            .into_iter()
            .flat_map(|s| s.read_in(&mut dir))
            .collect(),
        listing,
    )
}

/// Expands paths (directories recursively, sorted) without reading them.
pub fn list(paths: &[PathBuf], options: &InputOptions) -> Listing {
    let mut sources = Vec::new();
    let mut listing = list_each(paths, options, &mut |batch| sources.extend(batch));
    listing.sources = sources;
    listing
}

/// [`list`], handing the sources over in order as soon as they are named,
/// a batch at a time (a tree's files a directory or so at a time, as the
/// walk leaves their directories), so that the first hosts can be read
/// while the walk goes on. The listing returned has the problems and
/// notes, and no sources.
pub fn list_each(
    paths: &[PathBuf],
    options: &InputOptions,
    each: &mut dyn FnMut(Vec<Source>),
) -> Listing {
    let mut listing = Listing::default();
    if paths.is_empty() {
        each(vec![Source::Stdin]);
        return listing;
    }
    // Tar and zip archives are read into their members as they come.
    let mut expanded = |mut batch: Vec<Source>| {
        expand_archives(&mut batch);
        each(batch);
    };
    for path in paths {
        if path.as_os_str() == "-" {
            expanded(vec![Source::Stdin]);
            continue;
        }
        match std::fs::metadata(path) {
            Err(e) => listing.problems.push(Problem {
                input: path.display().to_string(),
                reason: io_reason(&e),
                named: true,
            }),
            Ok(m) if m.is_dir() => walk(path, options, &mut listing, &mut expanded),
            Ok(m) => expanded(vec![match archive::kind_of(path) {
                Some(kind) => Source::Archive {
                    path: path.clone(),
                    kind,
                    host: None,
                    named: true,
                    host_from: options.host_from.clone(),
                },
                None => Source::File {
                    path: path.clone(),
                    host: None,
                    named: true,
                    stat: Some(Stat::of(&m)),
                },
            }]),
        }
    }
    listing
}

/// Reads every tar and zip archive among `sources` into its members, in
/// the order a directory walk gives the same tree (by path), each member a
/// source of its own. Read as one input, an archive of 1,000 hosts was one
/// unit: analysed on one thread with every host's documents held at once
/// (786 MB against 72 MB for the same files in a directory). Members are
/// held until the run ends: memory still grows with the archive's size
/// (its uncompressed bytes), not with the hosts in it.
fn expand_archives(sources: &mut Vec<Source>) {
    let expands = |s: &Source| matches!(s, Source::Archive { kind, .. } if kind.has_members());
    if !sources.iter().any(expands) {
        return;
    }
    let mut expanded = Vec::with_capacity(sources.len());
    for source in sources.drain(..) {
        let Source::Archive {
            path,
            kind,
            host,
            named,
            host_from,
        } = source
        else {
            expanded.push(source);
            continue;
        };
        let prefix = path.display().to_string().len() + 1;
        let mut members = read_archive(&path, kind, host, named, &host_from);
        fn member_path(i: &Input, prefix: usize) -> Option<&Path> {
            i.name.get(prefix..).map(Path::new)
        }
        members.sort_by(|a, b| member_path(a, prefix).cmp(&member_path(b, prefix)));
        expanded.extend(members.into_iter().map(|m| Source::Member(m.into())));
    }
    *sources = expanded;
}

/// `No such file or directory (os error 2)` → `no such file or directory`.
fn io_reason(e: &std::io::Error) -> String {
    let text = e.to_string();
    let text = text.split(" (os error").next().unwrap_or(&text).to_owned();
    let mut chars = text.chars();
    chars
        .next()
        .map(|c| c.to_lowercase().collect::<String>() + chars.as_str())
        .unwrap_or(text)
}

/// Directory names of version control systems, skipped like hidden ones.
const VCS_DIRS: &[&str] = &[".git", ".hg", ".svn", "CVS", ".bzr", "_darcs"];

fn is_hidden(name: &str) -> bool {
    (name.starts_with('.') && name != "." && name != "..") || VCS_DIRS.contains(&name)
}

#[cfg(unix)]
fn identity(entry: &walkdir::DirEntry) -> Identity {
    use walkdir::DirEntryExt;
    Identity::Entry(entry.ino())
}

#[cfg(not(unix))]
fn identity(entry: &walkdir::DirEntry) -> Identity {
    Identity::Path(
        entry
            .path()
            .canonicalize()
            .unwrap_or_else(|_| entry.path().to_owned()),
    )
}

/// The identity of a file, to read it once however many paths lead to it.
#[cfg(unix)]
fn file_id(m: &std::fs::Metadata) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    Some((m.dev(), m.ino()))
}

#[cfg(not(unix))]
fn file_id(_: &std::fs::Metadata) -> Option<(u64, u64)> {
    None
}

/// Two entries of one directory in the order of their file names, as
/// walkdir's `sort_by_file_name` puts them, without taking each path apart
/// into components twice per comparison (54 M instructions of a 1,000-host
/// listing, all of it on the walk's one thread): siblings' paths are the
/// directory's path, byte for byte, joined with their names, so the first
/// byte in which two of them differ is in their names, and a name that is
/// the start of the other is the shorter path — whole paths compare as
/// their names do (`OsStr` compares bytes).
fn sibling_order(a: &Path, b: &Path) -> std::cmp::Ordering {
    a.as_os_str().cmp(b.as_os_str())
}

/// Walks the tree at `root` (each directory's entries in [`sibling_order`],
/// a directory's tree after its entry, links followed), handing its files'
/// sources to `each` as soon as they can be named: `auto` compares the
/// file names of a directory, so a file is named once the walk has left
/// its directory. In a tree of host directories that is each host's
/// directory as the next one starts.
fn walk(
    root: &Path,
    options: &InputOptions,
    listing: &mut Listing,
    each: &mut dyn FnMut(Vec<Source>),
) {
    let root_name = root
        .canonicalize()
        .ok()
        .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
        .unwrap_or_else(|| root.display().to_string());
    let mut tree = Tree::new(options);
    let mut last_dir = LastDir::default();
    let mut skipped_hidden = 0usize;
    let walker = walkdir::WalkDir::new(root)
        .follow_links(true)
        .sort_by(|a, b| sibling_order(a.path(), b.path()));
    for entry in walker.into_iter().filter_entry(|e| {
        if options.exclude.is_some_and(|id| is_file(e, id)) {
            return false;
        }
        let keep = e.depth() == 0 || options.hidden || !is_hidden(&e.file_name().to_string_lossy());
        if !keep {
            skipped_hidden += 1;
        }
        keep
    }) {
        let depth = match &entry {
            Ok(e) => e.depth(),
            Err(e) => e.depth(),
        };
        // Every directory deeper than this entry is done with.
        tree.hand_over_deeper_than(depth, each);
        match Found::of(entry, root, &root_name, &mut last_dir) {
            Found::Directory => {}
            Found::Problem(problem) => listing.problems.push(problem),
            found => tree.pending.push((depth, found)),
        }
    }
    tree.hand_over_deeper_than(0, each);
    if skipped_hidden > 0 {
        listing.notes.push(format!(
            "{}: skipped {skipped_hidden} hidden or version-control entr{} (--hidden reads them)",
            root.display(),
            if skipped_hidden == 1 { "y" } else { "ies" }
        ));
    }
    listing.notes.extend(tree.namer.warnings());
}

/// Whether the walk's entry `e` is the file `(device, inode)`. The inode
/// comes with the directory entry; the device is looked up only when the
/// inode is the same.
#[cfg(unix)]
fn is_file(e: &walkdir::DirEntry, (device, inode): (u64, u64)) -> bool {
    use std::os::unix::fs::MetadataExt;
    use walkdir::DirEntryExt;
    e.ino() == inode
        && e.metadata()
            .is_ok_and(|m| m.dev() == device && m.ino() == inode)
}

/// Not on this platform: no file is left out.
#[cfg(not(unix))]
fn is_file(_: &walkdir::DirEntry, _: (u64, u64)) -> bool {
    false
}

/// What a walk ([`walk`]) keeps between the batches it hands over.
struct Tree<'o> {
    options: &'o InputOptions,
    /// Files found and not yet named, with their depth below the root.
    pending: Vec<(usize, Found)>,
    first: FirstPaths,
    namer: naming::Namer<'o>,
    /// sosreport `hostname` files read so far, by report root.
    sos_hostnames: HashMap<Vec<String>, String>,
}

impl<'o> Tree<'o> {
    fn new(options: &'o InputOptions) -> Self {
        Self {
            options,
            pending: Vec::new(),
            first: FirstPaths::default(),
            namer: naming::Namer::new(&options.host_from),
            sos_hostnames: HashMap::new(),
        }
    }

    /// Names and hands over the pending files deeper than `depth`, up to
    /// the first that is not: once the walk is at `depth`, every
    /// directory below it that it left is complete. Files are handed over
    /// in walk order, so a file in a directory the walk is still in holds
    /// back those after it.
    fn hand_over_deeper_than(&mut self, depth: usize, each: &mut dyn FnMut(Vec<Source>)) {
        let ready = self.pending.iter().take_while(|(d, _)| *d > depth).count();
        if ready == 0 {
            return;
        }
        let batch: Vec<(usize, Found)> = self.pending.drain(..ready).collect();
        let sources = self.name(batch);
        if !sources.is_empty() {
            each(sources);
        }
    }

    /// The sources of `batch`: one path per file, sosreports' own files
    /// left out and their `hostname` files read (a report's `hostname`
    /// comes before its `sos_commands` in the walk), the rest named.
    fn name(&mut self, batch: Vec<(usize, Found)>) -> Vec<Source> {
        // Plain files are named together (auto compares siblings); tar and
        // zip archives name their own members when read. Naming is the
        // places' last use: they go to the namer, and the names come back
        // in the order of the plain files.
        let mut places: Vec<Place> = Vec::with_capacity(batch.len());
        let mut unnamed = Vec::with_capacity(batch.len());
        for (_, found) in batch {
            let Found::File {
                path,
                id,
                place,
                kind,
            } = found
            else {
                continue;
            };
            // A second path to a file already listed (a symlinked
            // directory that is not a loop, a hard link) reads it once.
            if !self.first.is_first(&path, id) {
                continue;
            }
            if naming::is_sos_hostname(&place) {
                // sosreport `hostname` files name their report and are
                // not analysed.
                if let (Some(root), Ok(text)) =
                    (naming::sos_root(&place), std::fs::read_to_string(&path))
                {
                    if let Some(h) = naming::sos_hostname(&text) {
                        self.sos_hostnames.insert(root, h);
                    }
                }
                continue;
            }
            if naming::sos_skip(&place) {
                continue;
            }
            if !kind.is_some_and(archive::Kind::has_members) {
                places.push(place);
            }
            unnamed.push((path, kind));
        }
        let mut names = self.namer.name(&places);
        naming::apply_sos_names(&places, &mut names, &self.sos_hostnames);
        let mut names = names.into_iter();
        unnamed
            .into_iter()
            .map(|(path, kind)| match kind {
                Some(kind) => Source::Archive {
                    path,
                    kind,
                    host: if kind.has_members() {
                        None
                    } else {
                        names.next()
                    },
                    named: false,
                    host_from: self.options.host_from.clone(),
                },
                None => Source::File {
                    path,
                    host: names.next(),
                    named: false,
                    stat: None,
                },
            })
            .collect()
    }
}

/// One entry of a directory walk ([`walk`]).
enum Found {
    Directory,
    /// The walk could not read it (or it loops back).
    Problem(Problem),
    File {
        path: PathBuf,
        id: Identity,
        place: Place,
        kind: Option<archive::Kind>,
    },
}

/// What a stat of a file tells its reading.
#[derive(Clone, Copy)]
pub struct Stat {
    /// Modification time, seconds since the Unix epoch.
    pub modified: Option<f64>,
    /// Size in bytes.
    pub len: u64,
}

impl Stat {
    fn of(m: &std::fs::Metadata) -> Self {
        Stat {
            modified: unix_seconds(m),
            len: m.len(),
        }
    }
}

/// What tells two paths to one file apart from two files, without a stat
/// of every file: a stat of each of 21,000 files by path was half of a
/// 1,000-host listing, all of it before any file could be read.
enum Identity {
    /// The inode number its directory entry gives (a followed link's is
    /// its target's, from the walk's own stat). Files with one number are
    /// told apart by a stat of each ([`FirstPaths`]): a file system
    /// mounted under the tree can reuse a number.
    Entry(u64),
    /// Where there are no inode numbers (not on Unix): the canonical path.
    #[cfg_attr(unix, allow(dead_code))]
    Path(PathBuf),
}

/// Which of a walk's files no earlier file of it is another path to. Only
/// files whose inode number came up before are stat'ed, with the first
/// file that had it: on a tree without links, none.
#[derive(Default)]
struct FirstPaths {
    /// The first path found with each inode number.
    first_with: FxHashMap<u64, PathBuf>,
    /// The devices and inodes of the files stat'ed so far.
    stated: FxHashSet<(u64, u64)>,
    /// Where there are no inode numbers: the canonical paths so far.
    canonical: HashSet<PathBuf>,
}

impl FirstPaths {
    /// Whether the file at `path` is not another path to a file already
    /// seen (each file is asked once, in walk order).
    fn is_first(&mut self, path: &Path, id: Identity) -> bool {
        let number = match id {
            Identity::Path(p) => return self.canonical.insert(p),
            Identity::Entry(n) => n,
        };
        let first = match self.first_with.entry(number) {
            std::collections::hash_map::Entry::Vacant(slot) => {
                slot.insert(path.to_owned());
                return true;
            }
            std::collections::hash_map::Entry::Occupied(first) => first.into_mut(),
        };
        if let Some(id) = device_and_inode(first) {
            self.stated.insert(id);
        }
        // A file that cannot be stat'ed is kept: its read says why.
        device_and_inode(path).is_none_or(|id| self.stated.insert(id))
    }
}

/// A file's device and inode, following links as the walk does.
fn device_and_inode(path: &Path) -> Option<(u64, u64)> {
    std::fs::metadata(path).ok().as_ref().and_then(file_id)
}

impl Found {
    fn of(
        entry: walkdir::Result<walkdir::DirEntry>,
        root: &Path,
        root_name: &str,
        last_dir: &mut LastDir,
    ) -> Self {
        let entry = match entry {
            Ok(e) => e,
            Err(e) => {
                let input = e
                    .path()
                    .map_or_else(|| root.display().to_string(), |p| p.display().to_string());
                let reason = match e.loop_ancestor() {
                    Some(a) => format!(
                        "symbolic link loop back to {} (its files are read once)",
                        a.display()
                    ),
                    None => e.io_error().map_or_else(|| e.to_string(), io_reason),
                };
                return Found::Problem(Problem {
                    input,
                    reason,
                    named: false,
                });
            }
        };
        if entry.file_type().is_dir() {
            return Found::Directory;
        }
        let id = identity(&entry);
        let file = entry.file_name().to_string_lossy().into_owned();
        let dirs = last_dir.dirs_of(&entry, root);
        let kind = archive::kind_of(entry.path());
        // A `.gz` of one dump is named as the dump would be.
        let naming_file = match kind {
            Some(archive::Kind::Gz) => archive::stem(entry.path()),
            _ => file,
        };
        let place = Place {
            root_name: root_name.to_owned(),
            dirs,
            file: naming_file,
        };
        Found::File {
            path: entry.into_path(),
            id,
            place,
            kind,
        }
    }
}

/// The directories between a walk's root and the last file's directory:
/// a directory's files come one after the other, and take their
/// directories apart once, not each.
#[derive(Default)]
struct LastDir {
    path: PathBuf,
    dirs: Vec<String>,
}

impl LastDir {
    /// The directory names between `root` and `entry`'s directory.
    fn dirs_of(&mut self, entry: &walkdir::DirEntry, root: &Path) -> Vec<String> {
        let parent = entry.path().parent().unwrap_or(root);
        if parent != self.path {
            let rel = parent.strip_prefix(root).unwrap_or(parent);
            self.dirs = rel
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect();
            self.path = parent.to_owned();
        }
        self.dirs.clone()
    }
}

fn stdin() -> Input {
    let mut bytes = Vec::new();
    let result = std::io::stdin()
        .read_to_end(&mut bytes)
        .map(|_| bytes)
        .map_err(|e| format!("cannot read standard input: {e}"));
    let mut input = Input {
        name: "-".to_owned(),
        host: None,
        host_why: Cow::Borrowed(""),
        bytes: result,
        modified_unix: None,
        named: true,
    };
    name_from_text(&mut input);
    input
}

/// A file's input name: its path as `path.display()` writes it (an invalid
/// sequence becomes one U+FFFD either way), without the formatting
/// machinery: a copy after a UTF-8 check, for every file of a fleet.
fn input_name(path: &Path) -> String {
    path.to_string_lossy().into_owned()
}

fn file(
    dir: &mut OpenDir,
    path: &Path,
    host: Option<Named>,
    named: bool,
    stat: Option<Stat>,
) -> Input {
    let (bytes, modified_unix) = match read_file_in(dir, path, stat) {
        Ok((bytes, modified)) => (Ok(bytes), modified),
        Err(e) => (Err(format!("cannot read: {}", io_reason(&e))), None),
    };
    let mut input = Input {
        name: input_name(path),
        host_why: host.as_ref().map(|n| n.why.clone()).unwrap_or_default(),
        host: host.map(|n| n.host),
        bytes,
        modified_unix,
        named,
    };
    name_from_text(&mut input);
    input
}

/// A file's bytes, as [`std::fs::read`] gives them, and its modification
/// time, with fewer system calls. The file is stat'ed through the open
/// file (no second walk of its path), unless `stat` says what an earlier
/// stat saw, and read into a buffer one byte larger than its size. A read
/// that asked for more and stopped exactly at that size has found the end
/// (a regular file reads short only there), so most files take four calls
/// (open, stat, read, close) where `std::fs::read` takes five (it makes a
/// last read that returns nothing). A file that grew since its stat fills
/// the buffer and is read on to its end; one that shrank, or a pseudo-file
/// whose stat size means nothing (sysfs says 4096, procfs 0), reads short
/// elsewhere and is read until a read returns nothing, as before.
pub fn read_file(path: &Path, stat: Option<Stat>) -> std::io::Result<(Vec<u8>, Option<f64>)> {
    read_opened(std::fs::File::open(path)?, stat)
}

/// [`read_file`], opening the file through `dir` ([`OpenDir::open`]).
fn read_file_in(
    dir: &mut OpenDir,
    path: &Path,
    stat: Option<Stat>,
) -> std::io::Result<(Vec<u8>, Option<f64>)> {
    read_opened(dir.open(path)?, stat)
}

/// The bytes and time of an opened file ([`read_file`]).
fn read_opened(
    mut file: std::fs::File,
    stat: Option<Stat>,
) -> std::io::Result<(Vec<u8>, Option<f64>)> {
    let stat = stat.or_else(|| file.metadata().ok().as_ref().map(Stat::of));
    let size = stat.and_then(|s| usize::try_from(s.len).ok()).unwrap_or(0);
    let bytes = read_sized(&mut file, size)?;
    Ok((bytes, stat.and_then(|s| s.modified)))
}

/// The directory of the file opened last, held open after a second file
/// of it was opened, for files opened one after the other from the same
/// directories (a unit's: one host's dumps). A file in it is opened
/// relative to it (`openat`): the kernel looks up the file's name alone
/// rather than walking every directory of its path again, which was a
/// third of the time `open` took on 21,000 files of a 1,000-host fleet
/// (5 directories deep). Linux only (elsewhere, and when the directory
/// cannot be held, files are opened by path); the directory is held with
/// `O_PATH`, which needs no permission to read it, so a file opens
/// relative to it exactly when it opens by path, with the same errors.
#[derive(Default)]
pub struct OpenDir {
    /// The directory of the last file opened.
    #[cfg(target_os = "linux")]
    last: std::path::PathBuf,
    /// That directory, held once a second file of it was opened.
    #[cfg(target_os = "linux")]
    held: Option<rustix::fd::OwnedFd>,
}

impl OpenDir {
    /// Opens `path` for reading, relative to the held directory when it
    /// is the file's.
    pub fn open(&mut self, path: &Path) -> std::io::Result<std::fs::File> {
        #[cfg(target_os = "linux")]
        if let Some(opened) = self.open_in_held(path) {
            return opened;
        }
        std::fs::File::open(path)
    }

    /// `path` opened relative to its directory, held (and opened first if
    /// need be) when the last file was in it too; nothing when it is
    /// opened by path instead.
    #[cfg(target_os = "linux")]
    fn open_in_held(&mut self, path: &Path) -> Option<std::io::Result<std::fs::File>> {
        use rustix::fs::{Mode, OFlags};
        let parent = path.parent().filter(|p| !p.as_os_str().is_empty())?;
        let name = path.file_name()?;
        if parent != self.last {
            self.last = parent.to_path_buf();
            self.held = None;
            return None;
        }
        if self.held.is_none() {
            let flags = OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC;
            self.held = rustix::fs::open(parent, flags, Mode::empty()).ok();
        }
        let dir = self.held.as_ref()?;
        let flags = OFlags::RDONLY | OFlags::CLOEXEC;
        Some(
            rustix::fs::openat(dir, name, flags, Mode::empty())
                .map(std::fs::File::from)
                .map_err(std::io::Error::from),
        )
    }
}

/// The rest of `file`, expected to be `size` bytes ([`read_file`]).
fn read_sized(file: &mut std::fs::File, size: usize) -> std::io::Result<Vec<u8>> {
    let mut bytes = Vec::new();
    bytes.try_reserve_exact(size.saturating_add(1))?;
    bytes.resize(size.saturating_add(1), 0);
    let mut filled = 0;
    while let Some(rest) = bytes.get_mut(filled..).filter(|r| !r.is_empty()) {
        match file.read(rest) {
            Ok(0) => break,
            Ok(n) => {
                filled += n;
                if filled == size {
                    // Asked for at least one byte more than the stat saw
                    // and got exactly its size: the end.
                    bytes.truncate(filled);
                    return Ok(bytes);
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    let full = filled == bytes.len();
    bytes.truncate(filled);
    if full {
        // Larger than the stat saw: whatever else it holds, to its end.
        std::io::Read::by_ref(file)
            .take(u64::MAX)
            .read_to_end(&mut bytes)?;
    }
    Ok(bytes)
}

/// `hostname` output in the text outranks the path.
fn name_from_text(input: &mut Input) {
    if let Ok(bytes) = &input.bytes {
        if !may_ask_hostname(bytes) {
            return;
        }
        if let Some(h) = naming::hostname_in_text(bytes) {
            input.host = Some(h);
            input.host_why = "hostname output in the text".into();
        }
    }
}

/// Whether the text could hold a `hostname` / `uname -n` command: every
/// command [`naming::hostname_in_text`] takes has one of those words, in
/// the first MiB it reads. One vector search of the bytes for `name`
/// (and a look at what precedes each one) instead of a look at the last
/// word of every line, for the many dumps without a prompt.
///
/// The bytes are searched as they are, without checking that they are
/// UTF-8 (that check was a scan of every file's text of its own, made
/// again when the text is read): the lossy decoding
/// [`naming::hostname_in_text`] reads replaces bad bytes with U+FFFD,
/// which is not ASCII, and keeps every other byte, so its text holds the
/// ASCII word `hostname` or `uname` only where the bytes do.
fn may_ask_hostname(bytes: &[u8]) -> bool {
    static NAME: std::sync::OnceLock<memchr::memmem::Finder<'static>> = std::sync::OnceLock::new();
    let head = bytes.get(..bytes.len().min(1 << 20)).unwrap_or(bytes);
    NAME.get_or_init(|| memchr::memmem::Finder::new(b"name"))
        .find_iter(head)
        .any(|at| {
            let before = head.get(..at).unwrap_or_default();
            before.ends_with(b"host") || before.ends_with(b"u")
        })
}

/// The prefilter as it was written first (the text decoded, then searched
/// for both words): the oracle of [`may_ask_hostname`]'s tests.
#[cfg(test)]
fn may_ask_hostname_by_text(bytes: &[u8]) -> bool {
    let head = bytes.get(..bytes.len().min(1 << 20)).unwrap_or(bytes);
    match std::str::from_utf8(head) {
        Ok(text) => text.contains("hostname") || text.contains("uname"),
        Err(_) => true,
    }
}

fn read_archive(
    path: &Path,
    kind: archive::Kind,
    host: Option<Named>,
    named: bool,
    host_from: &HostFrom,
) -> Vec<Input> {
    let display = path.display().to_string();
    let modified = modified_unix(path);
    let members = match archive::read(path, kind, archive::Limits::default()) {
        Ok(m) => m,
        Err(reason) => {
            return vec![Input {
                name: display,
                host: None,
                host_why: Cow::Borrowed(""),
                bytes: Err(reason),
                modified_unix: modified,
                named,
            }]
        }
    };
    if kind == archive::Kind::Gz {
        return members
            .into_iter()
            .map(|m| {
                let mut input = Input {
                    name: display.clone(),
                    host_why: host.as_ref().map(|n| n.why.clone()).unwrap_or_default(),
                    host: host.as_ref().map(|n| n.host.clone()),
                    bytes: m.bytes,
                    modified_unix: modified,
                    named,
                };
                name_from_text(&mut input);
                input
            })
            .collect();
    }
    let stem = archive::stem(path);
    let places = archive::places(&stem, &members);
    let mut sos_hostnames: HashMap<Vec<String>, String> = HashMap::new();
    for (m, p) in members.iter().zip(&places) {
        if naming::is_sos_hostname(p) {
            if let (Some(root), Ok(bytes)) = (naming::sos_root(p), &m.bytes) {
                if let Some(h) = naming::sos_hostname(&String::from_utf8_lossy(bytes)) {
                    sos_hostnames.insert(root, h);
                }
            }
        }
    }
    let keep: Vec<bool> = places
        .iter()
        .map(|p| !naming::is_sos_hostname(p) && !naming::sos_skip(p))
        .collect();
    let kept_places: Vec<Place> = places
        .iter()
        .zip(&keep)
        .filter(|(_, k)| **k)
        .map(|(p, _)| p.clone())
        .collect();
    let (mut names, warnings) = naming::name_all(&kept_places, host_from);
    naming::apply_sos_names(&kept_places, &mut names, &sos_hostnames);
    for w in warnings {
        eprintln!("fabricscope: {display}: {w}");
    }
    members
        .into_iter()
        .zip(keep)
        .filter(|(_, k)| *k)
        .map(|(m, _)| m)
        .zip(names)
        .map(|(m, n)| {
            let mut input = Input {
                name: format!("{display}:{}", m.path),
                host: Some(n.host),
                host_why: n.why,
                bytes: m.bytes.map_err(|e| format!("cannot read: {e}")),
                modified_unix: m.modified_unix.or(modified),
                named: false,
            };
            name_from_text(&mut input);
            input
        })
        .collect()
}

fn modified_unix(path: &Path) -> Option<f64> {
    unix_seconds(&std::fs::metadata(path).ok()?)
}

/// The modification time in `m`, in seconds since the Unix epoch.
fn unix_seconds(m: &std::fs::Metadata) -> Option<f64> {
    let since = m
        .modified()
        .ok()?
        .duration_since(std::time::UNIX_EPOCH)
        .ok()?;
    Some(since.as_secs_f64())
}

#[cfg(test)]
mod sibling_order_tests {
    use super::sibling_order;
    use proptest::strategy::Strategy;
    use std::path::Path;

    fn name() -> impl Strategy<Value = String> {
        proptest::collection::vec(
            proptest::sample::select(vec![
                "a", "b", "gpu", "0", "1", "9", ".", "-", "_", "txt", "A", "\u{e9}", "~", " ",
            ]),
            1..6,
        )
        .prop_map(|parts| parts.concat())
    }

    proptest::proptest! {
        /// Siblings compare as their file names do (walkdir's
        /// `sort_by_file_name`), under any directory, however written.
        #[test]
        fn siblings_compare_as_their_file_names(
            dir in proptest::sample::select(vec!["", "/", "fleet", "fleet/", "./fleet", "/tmp/a b/c.d", "../x"]),
            a in name(),
            b in name(),
        ) {
            // `.` and `..` are not entries a directory lists.
            proptest::prop_assume!(![&a, &b].iter().any(|n| *n == "." || *n == ".."));
            let (a, b) = (Path::new(dir).join(&a), Path::new(dir).join(&b));
            proptest::prop_assert_eq!(sibling_order(&a, &b), a.file_name().cmp(&b.file_name()));
        }
    }
}

#[cfg(test)]
mod path_name_tests {
    proptest::proptest! {
        /// A file's name is its path as `Path::display` shows it, whatever
        /// its bytes.
        #[cfg(unix)]
        #[test]
        fn a_files_name_is_its_path_as_displayed(
            bytes in proptest::collection::vec(
                proptest::prop_oneof![
                    proptest::sample::select(vec![b'/', b'a', b'.', 0x80, 0xc3, 0xa9, 0xe2, 0xff]),
                    proptest::prelude::any::<u8>(),
                ],
                0..24,
            )
        ) {
            use std::os::unix::ffi::OsStrExt;
            let path = std::path::Path::new(std::ffi::OsStr::from_bytes(&bytes));
            proptest::prop_assert_eq!(super::input_name(path), path.display().to_string());
        }
    }
}

#[cfg(test)]
mod hostname_prefilter_tests {
    use super::{may_ask_hostname, naming};
    use proptest::strategy::Strategy;

    /// The prefilter may only pass over texts in which the full reading
    /// finds no host.
    #[test]
    fn texts_the_prefilter_passes_over_name_no_host() {
        let texts: &[&[u8]] = &[
            b"[root@localhost ~]# hostname\nnode07.cluster.local\n",
            b"$ hostname -s\nnode08\n",
            b"$ uname -n\nnode09\n",
            b"hostname\nnode10\n",
            b"uname -n\nnode11\n",
            b"$ ibstat\nCA 'mlx5_0'\n",
            b"PortXmitData:....................1\n",
            b"\xff$ hostname\nnode12\n",
            b"",
        ];
        for text in texts {
            let named = naming::hostname_in_text(text).is_some();
            assert!(!named || may_ask_hostname(text), "{text:?}");
        }
        assert!(!may_ask_hostname(b"$ ibstat\nCA 'mlx5_0'\n"));
        assert!(may_ask_hostname(b"$ uname -n\nnode11\n"));
        assert!(may_ask_hostname(b"\xff$ hostname\nnode12\n"));
        assert!(!may_ask_hostname(b"\xff$ host name\nname\n"));
    }

    proptest::proptest! {
        /// On valid UTF-8 the byte search answers as the text search did;
        /// on any bytes, where it passes over a text, the full reading
        /// finds no host (the text search passed over none that was not
        /// UTF-8).
        #[test]
        fn the_byte_search_passes_over_what_names_no_host(
            parts in proptest::collection::vec(
                proptest::prop_oneof![
                    proptest::sample::select(vec![
                        "hostname", "host", "name", "uname", "u", "$ ", "# ", "\n",
                        " -n", " -s", "node07", "hostnam", "ame", "\u{fffd}", "\u{e9}",
                    ]).prop_map(|s| s.as_bytes().to_vec()),
                    proptest::collection::vec(proptest::prelude::any::<u8>(), 0..4),
                ],
                0..12,
            )
        ) {
            let bytes = parts.concat();
            let fast = may_ask_hostname(&bytes);
            if std::str::from_utf8(&bytes).is_ok() {
                proptest::prop_assert_eq!(fast, super::may_ask_hostname_by_text(&bytes));
            }
            if !fast {
                proptest::prop_assert_eq!(naming::hostname_in_text(&bytes), None);
            }
        }
    }
}

#[cfg(test)]
mod read_file_tests {
    use super::{read_file, Stat};

    /// Whatever size an earlier stat saw (none, the file's, less, more), a
    /// file reads as `std::fs::read` reads it, and a missing one fails as
    /// it does. Its time is the earlier stat's, or else the file's own.
    #[test]
    fn reads_as_fs_read_whatever_the_size_hint() {
        let dir =
            std::env::temp_dir().join(format!("fabricscope-read-file-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        for len in [0usize, 1, 31, 32, 33, 4096, 70_000] {
            let path = dir.join(format!("f{len}"));
            let bytes: Vec<u8> = (0..len).map(|i| (i % 251) as u8).collect();
            std::fs::write(&path, &bytes).expect("write");
            let n = len as u64;
            let own_time = super::unix_seconds(&std::fs::metadata(&path).expect("stat"));
            assert!(own_time.is_some());
            assert_eq!(
                read_file(&path, None).expect("read"),
                (bytes.clone(), own_time)
            );
            for hint in [n, 0, n / 2, n + 1, n * 2 + 7] {
                let stat = Stat {
                    modified: Some(1.5),
                    len: hint,
                };
                assert_eq!(
                    read_file(&path, Some(stat)).expect("read"),
                    (bytes.clone(), Some(1.5)),
                    "{len} {hint:?}"
                );
            }
        }
        let missing = dir.join("missing");
        assert_eq!(
            read_file(&missing, None).map(|_| ()).map_err(|e| e.kind()),
            std::fs::read(&missing).map(|_| ()).map_err(|e| e.kind())
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// Files opened one after the other through one `OpenDir` (from two
    /// directories in turn, back and forth, as a unit's may be) read as
    /// `std::fs::read` reads them, and missing ones fail as it does,
    /// whether or not the directory is held yet.
    #[test]
    fn files_opened_in_a_held_directory_read_as_by_path() {
        let root =
            std::env::temp_dir().join(format!("fabricscope-open-dir-{}", std::process::id()));
        let (a, b) = (root.join("a"), root.join("b"));
        std::fs::create_dir_all(&a).expect("temp dir");
        std::fs::create_dir_all(&b).expect("temp dir");
        for (i, dir) in [&a, &a, &b].iter().enumerate() {
            std::fs::write(dir.join(format!("f{i}")), format!("file {i}\n")).expect("write");
        }
        let order = [
            a.join("f0"),
            a.join("f1"),
            a.join("missing"),
            a.join("f0"),
            b.join("f2"),
            b.join("missing"),
            a.join("f1"),
            a.join("missing"),
            root.join("a"), // a directory: read fails as by path
        ];
        let mut open = super::OpenDir::default();
        for path in &order {
            let got = super::read_file_in(&mut open, path, None).map(|(bytes, _)| bytes);
            let want = std::fs::read(path);
            assert_eq!(
                got.as_ref().map_err(std::io::Error::kind),
                want.as_ref().map_err(std::io::Error::kind),
                "{}",
                path.display()
            );
        }
        let _ = std::fs::remove_dir_all(&root);
    }
}

#[cfg(all(test, unix))]
mod second_path_tests {
    use super::{list, list_each, FirstPaths, Identity, InputOptions, Source};
    use std::path::{Path, PathBuf};

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!(
            "fabricscope-second-path-{name}-{}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("temp dir");
        dir
    }

    fn listed(root: &Path) -> Vec<PathBuf> {
        let listing = list(&[root.to_owned()], &InputOptions::default());
        let mut paths: Vec<PathBuf> = listing
            .sources
            .iter()
            .map(|s| match s {
                Source::File { path, .. } => path.strip_prefix(root).expect("below").to_owned(),
                _ => PathBuf::from("(not a file)"),
            })
            .collect();
        paths.sort();
        paths
    }

    /// A hard link, a link to a file and a linked directory that is not a
    /// loop are second paths: each file is listed once, under the path
    /// the walk meets first. Different files are all listed.
    #[test]
    fn each_file_is_listed_once_whatever_leads_to_it() {
        let root = scratch("tree");
        std::fs::create_dir_all(root.join("a")).expect("dir");
        std::fs::create_dir_all(root.join("c")).expect("dir");
        std::fs::write(root.join("a/one.txt"), "one").expect("write");
        std::fs::write(root.join("a/two.txt"), "two").expect("write");
        std::fs::write(root.join("c/three.txt"), "three").expect("write");
        std::fs::hard_link(root.join("a/one.txt"), root.join("c/hard.txt")).expect("link");
        std::os::unix::fs::symlink("../a/two.txt", root.join("c/soft.txt")).expect("link");
        std::os::unix::fs::symlink("c", root.join("d")).expect("link");
        assert_eq!(
            listed(&root),
            ["a/one.txt", "a/two.txt", "c/three.txt"]
                .map(PathBuf::from)
                .to_vec()
        );
        let _ = std::fs::remove_dir_all(&root);
    }

    fn below(root: &Path, sources: &[Source]) -> Vec<PathBuf> {
        sources
            .iter()
            .map(|s| match s {
                Source::File { path, .. } => path.strip_prefix(root).expect("below").to_owned(),
                _ => PathBuf::from("(not a file)"),
            })
            .collect()
    }

    /// The batches a walk of `root` hands over, as paths below it.
    fn batches_of(root: &Path) -> Vec<Vec<PathBuf>> {
        let mut batches = Vec::new();
        list_each(&[root.to_owned()], &InputOptions::default(), &mut |b| {
            batches.push(below(root, &b))
        });
        batches
    }

    /// The walk hands each host directory's files over as it leaves the
    /// directory, in walk order (each directory's entries by name, a
    /// directory's tree after it); the batches together are the listing.
    #[test]
    fn a_walk_hands_over_each_directory_as_it_leaves_it() {
        let root = scratch("batches");
        let mut expected = Vec::new();
        for d in 0..7 {
            let dir = root.join(format!("node{d:02}"));
            std::fs::create_dir_all(dir.join("sub")).expect("dir");
            for f in 0..(20 + d) {
                std::fs::write(dir.join(format!("f{f:04}.txt")), "x").expect("write");
                expected.push(PathBuf::from(format!("node{d:02}/f{f:04}.txt")));
            }
            std::fs::write(dir.join("sub/last.txt"), "x").expect("write");
            expected.push(PathBuf::from(format!("node{d:02}/sub/last.txt")));
        }
        let batches = batches_of(&root);
        // node00's tree, as node01 starts; ...; node06's at the end.
        assert_eq!(batches.len(), 7, "{batches:?}");
        assert_eq!(batches.concat(), expected);
        let listing = list(std::slice::from_ref(&root), &InputOptions::default());
        assert_eq!(below(&root, &listing.sources), expected);
        let _ = std::fs::remove_dir_all(&root);
    }

    /// A file of a directory the walk is still in holds back what comes
    /// after it (files are handed over in order, and named only once
    /// their directory is complete): a file at the root, before the host
    /// directories, is handed over with them at the end.
    #[test]
    fn a_file_of_an_unfinished_directory_holds_back_the_rest() {
        let root = scratch("held");
        std::fs::write(root.join("a.txt"), "x").expect("write");
        std::fs::write(root.join("z.txt"), "x").expect("write");
        for d in ["node01", "node02"] {
            std::fs::create_dir_all(root.join(d)).expect("dir");
            std::fs::write(root.join(d).join("ibstat.txt"), "x").expect("write");
        }
        let batches = batches_of(&root);
        let want: Vec<PathBuf> = ["a.txt", "node01/ibstat.txt", "node02/ibstat.txt", "z.txt"]
            .map(PathBuf::from)
            .to_vec();
        assert_eq!(batches, vec![want]);
        let _ = std::fs::remove_dir_all(&root);
    }

    /// Entries with one inode number are told apart by a stat: two files
    /// (as on two file systems that reuse a number) are both first, two
    /// paths to one file are not; a file that cannot be stat'ed is kept,
    /// for its read to say why.
    #[test]
    fn one_inode_number_is_checked_with_a_stat() {
        let root = scratch("numbers");
        let (a, b, link) = (root.join("a"), root.join("b"), root.join("link"));
        std::fs::write(&a, "a").expect("write");
        std::fs::write(&b, "b").expect("write");
        std::fs::hard_link(&a, &link).expect("link");
        let mut first = FirstPaths::default();
        let gone = root.join("gone");
        let firsts: Vec<bool> = [(&a, 7), (&b, 7), (&link, 7), (&gone, 7), (&b, 8)]
            .into_iter()
            .map(|(path, number)| first.is_first(path, Identity::Entry(number)))
            .collect();
        assert_eq!(firsts, vec![true, true, false, true, true]);
        let _ = std::fs::remove_dir_all(&root);
    }
}

#[cfg(all(test, unix))]
mod walk_naming_tests {
    use super::{list, InputOptions, Source};
    use crate::naming::{self, HostFrom, Place};
    use proptest::prelude::*;
    use std::path::{Path, PathBuf};

    /// Relative file paths from the naming properties' vocabulary, so
    /// that names collide, with files directly under the root before and
    /// after the directories. No sosreports: a real `hostname` file names
    /// its report from its text, which naming the places alone cannot.
    fn trees() -> impl Strategy<Value = Vec<String>> {
        let dir = prop::sample::select(naming::vocabulary::DIRS.to_vec());
        let file = prop::sample::select([&naming::vocabulary::FILES[..], &["zz.log"]].concat());
        prop::collection::vec(
            (prop::collection::vec(dir, 0..3), file).prop_map(|(dirs, file)| {
                let mut parts: Vec<&str> = dirs;
                parts.push(file);
                parts.join("/")
            }),
            1..30,
        )
    }

    fn place(root_name: &str, rel: &Path) -> Place {
        let mut dirs: Vec<String> = rel
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect();
        let file = dirs.pop().unwrap_or_default();
        Place {
            root_name: root_name.to_owned(),
            dirs,
            file,
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]
        /// Named batch by batch as the walk leaves each directory, every
        /// file gets the host (and the run the warnings) that naming all of
        /// the tree's files at once gives, in walk order.
        #[test]
        fn a_walk_names_as_naming_the_whole_tree_at_once(
            files in trees(),
            rule in prop::sample::select(vec!["auto", "dir", "stem"]),
        ) {
            static RUN: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
            let root = std::env::temp_dir().join(format!(
                "fabricscope-walk-naming-{}-{}",
                std::process::id(),
                RUN.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
            ));
            let _ = std::fs::remove_dir_all(&root);
            for f in &files {
                let path = root.join(f);
                if let Some(parent) = path.parent() {
                    // A file and a directory of one name: the first wins.
                    if std::fs::create_dir_all(parent).is_err() {
                        continue;
                    }
                }
                let _ = std::fs::write(&path, "x");
            }
            let options = InputOptions {
                host_from: HostFrom::parse(rule).unwrap(),
                ..InputOptions::default()
            };
            let listing = list(std::slice::from_ref(&root), &options);
            let root_name = root.file_name().unwrap().to_string_lossy().into_owned();
            let mut paths: Vec<PathBuf> = Vec::new();
            let mut hosts: Vec<String> = Vec::new();
            for s in &listing.sources {
                let Source::File { path, host, .. } = s else {
                    panic!("only files are listed here");
                };
                paths.push(path.strip_prefix(&root).unwrap().to_owned());
                hosts.push(host.as_ref().map(|n| n.host.clone()).unwrap_or_default());
            }
            let places: Vec<Place> = paths.iter().map(|p| place(&root_name, p)).collect();
            let (names, warnings) = naming::name_all(&places, &options.host_from);
            let want: Vec<String> = names.into_iter().map(|n| n.host).collect();
            let _ = std::fs::remove_dir_all(&root);
            prop_assert_eq!(hosts, want);
            prop_assert_eq!(listing.notes, warnings);
            // Walk order: each directory's entries by name, a directory's
            // tree after its entry.
            let mut sorted = paths.clone();
            sorted.sort_by(|a, b| a.components().cmp(b.components()));
            prop_assert_eq!(paths, sorted);
        }
    }
}
