//! Archives read in place: `.tar`, `.tar.gz`/`.tgz`, `.gz` and `.zip`.
//!
//! Members are streamed out of the archive one by one into memory (never
//! extracted to disk), each under the same size limit as a file, and the
//! whole archive under a total limit so a decompression bomb stops early.
//! Hidden and VCS members are skipped as in a directory walk; inside a
//! sosreport only `sos_commands/infiniband/` and `sos_commands/nvidia/` are
//! read.

use crate::naming::{self, Place};
use std::io::Read;
use std::path::Path;

/// The kinds of archive recognised.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A plain tar file.
    Tar,
    /// A gzip-compressed tar file.
    TarGz,
    /// One gzip-compressed file.
    Gz,
    /// A zip file.
    Zip,
}

impl Kind {
    /// Whether it holds members of its own (tar, zip), each a file of a
    /// tree, named by its path in the archive; a `.gz` holds one dump.
    pub fn has_members(self) -> bool {
        matches!(self, Kind::Tar | Kind::TarGz | Kind::Zip)
    }
}

/// The archive kind of a path, by its name.
pub fn kind_of(path: &Path) -> Option<Kind> {
    // Compared as bytes, case aside, without a lower-cased copy of every
    // name: a fleet's listing asks this of each of its files.
    let name = path.file_name()?.as_encoded_bytes();
    let ends_with = |ext: &str| {
        name.len()
            .checked_sub(ext.len())
            .and_then(|start| name.get(start..))
            .is_some_and(|tail| tail.eq_ignore_ascii_case(ext.as_bytes()))
    };
    if ends_with(".tar.gz") || ends_with(".tgz") {
        Some(Kind::TarGz)
    } else if ends_with(".tar") {
        Some(Kind::Tar)
    } else if ends_with(".gz") {
        Some(Kind::Gz)
    } else if ends_with(".zip") {
        Some(Kind::Zip)
    } else {
        None
    }
}

/// The archive's name without its archive extension (`fleet.tar.gz` →
/// `fleet`).
pub fn stem(path: &Path) -> String {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    for ext in [".tar.gz", ".tgz", ".tar", ".gz", ".zip"] {
        if name.to_ascii_lowercase().ends_with(ext) {
            return name
                .get(..name.len() - ext.len())
                .unwrap_or(&name)
                .to_owned();
        }
    }
    name
}

/// One member read out of an archive.
pub struct Member {
    /// Its path inside the archive.
    pub path: String,
    /// Its bytes, or why they could not be read.
    pub bytes: Result<Vec<u8>, String>,
    /// Its modification time, when the archive records one.
    pub modified_unix: Option<f64>,
}

/// Limits on what an archive may expand to.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// One member's size.
    pub member_bytes: usize,
    /// All members together.
    pub total_bytes: u64,
    /// Number of members.
    pub members: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            member_bytes: fabricscope::ReadOptions::default().max_input_bytes,
            total_bytes: 4 << 30,
            // A fleet's dumps are many small files: 5,000 GPU hosts of 21
            // files each are 105,000 members, which a limit of 100,000
            // turned away whole. Each member costs its bytes and ~150
            // more, so the 4 GiB above binds first for any real dump.
            members: 1_000_000,
        }
    }
}

/// True for member paths a walk would skip: hidden or VCS components, and
/// sosreport files outside its InfiniBand and NVIDIA command outputs (its
/// `hostname` file is kept: it names the host).
pub fn skip_member(path: &str) -> bool {
    let mut parts: Vec<String> = path
        .split('/')
        .filter(|p| !p.is_empty() && *p != ".")
        .map(str::to_owned)
        .collect();
    if parts
        .iter()
        .any(|p| p.starts_with('.') || p == "CVS" || p == "_darcs")
    {
        return true;
    }
    let file = parts.pop().unwrap_or_default();
    let place = Place {
        root_name: String::new(),
        dirs: parts,
        file,
    };
    naming::sos_skip(&place) && !naming::is_sos_hostname(&place)
}

/// Reads up to `limit` bytes; more is an error naming the limit.
fn read_limited(reader: impl Read, limit: usize) -> Result<Vec<u8>, String> {
    let mut bytes = Vec::new();
    reader
        .take(limit as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot read: {e}"))?;
    if bytes.len() > limit {
        return Err(format!("larger than the {} MiB limit", limit >> 20));
    }
    Ok(bytes)
}

/// Members read so far and the bytes they expand to: the limits every
/// archive kind shares, checked in one place.
#[derive(Default)]
struct Members {
    list: Vec<Member>,
    total: u64,
}

impl Members {
    /// Reads one member of `size` declared bytes from `reader`. A member too
    /// large is kept with its error; too many members or too many bytes in
    /// all fail the archive.
    fn add(
        &mut self,
        path: String,
        size: u64,
        reader: impl Read,
        modified_unix: Option<f64>,
        limits: Limits,
    ) -> Result<(), String> {
        self.check_count(limits)?;
        let bytes = if size > limits.member_bytes as u64 {
            Err(format!(
                "larger than the {} MiB limit",
                limits.member_bytes >> 20
            ))
        } else {
            read_limited(reader, limits.member_bytes)
        };
        self.total += bytes.as_ref().map_or(0, |b| b.len() as u64);
        if self.total > limits.total_bytes {
            return Err(format!(
                "expands to more than {} GiB",
                limits.total_bytes >> 30
            ));
        }
        self.list.push(Member {
            path,
            bytes,
            modified_unix,
        });
        Ok(())
    }

    /// A member that could not even be opened, kept with its reason.
    fn unreadable(&mut self, path: String, reason: String, limits: Limits) -> Result<(), String> {
        self.check_count(limits)?;
        self.list.push(Member {
            path,
            bytes: Err(reason),
            modified_unix: None,
        });
        Ok(())
    }

    fn check_count(&self, limits: Limits) -> Result<(), String> {
        if self.list.len() >= limits.members {
            return Err(format!("more than {} members", limits.members));
        }
        Ok(())
    }
}

/// Reads every member of the archive at `path`. The error is for the archive
/// as a whole (cannot open, not an archive); members that cannot be read
/// carry their own error.
pub fn read(path: &Path, kind: Kind, limits: Limits) -> Result<Vec<Member>, String> {
    let file =
        std::fs::File::open(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    match kind {
        Kind::Tar => read_tar(file, limits),
        Kind::TarGz => read_tar(flate2::read::MultiGzDecoder::new(file), limits),
        Kind::Gz => {
            let name = stem(path);
            let bytes = read_limited(flate2::read::MultiGzDecoder::new(file), limits.member_bytes);
            Ok(vec![Member {
                path: name,
                bytes,
                modified_unix: None,
            }])
        }
        Kind::Zip => read_zip(file, limits),
    }
}

fn read_tar(reader: impl Read, limits: Limits) -> Result<Vec<Member>, String> {
    let mut archive = tar::Archive::new(reader);
    let entries = archive
        .entries()
        .map_err(|e| format!("not a tar archive: {e}"))?;
    let mut members = Members::default();
    for entry in entries {
        let entry = entry.map_err(|e| format!("damaged tar archive: {e}"))?;
        if !entry.header().entry_type().is_file() {
            continue;
        }
        let path = entry
            .path()
            .map(|p| p.to_string_lossy().into_owned())
            .unwrap_or_default();
        if skip_member(&path) {
            continue;
        }
        let modified_unix = entry.header().mtime().ok().map(|t| t as f64);
        let size = entry.header().size().unwrap_or(0);
        members.add(path, size, entry, modified_unix, limits)?;
    }
    Ok(members.list)
}

fn read_zip(file: std::fs::File, limits: Limits) -> Result<Vec<Member>, String> {
    let mut archive = zip::ZipArchive::new(file).map_err(|e| format!("not a zip archive: {e}"))?;
    let mut members = Members::default();
    for i in 0..archive.len() {
        let entry = match archive.by_index(i) {
            Ok(e) => e,
            Err(e) => {
                members.unreadable(format!("member #{i}"), format!("cannot read: {e}"), limits)?;
                continue;
            }
        };
        if entry.is_dir() {
            continue;
        }
        let path = entry.name().to_owned();
        if skip_member(&path) {
            continue;
        }
        let size = entry.size();
        members.add(path, size, entry, None, limits)?;
    }
    Ok(members.list)
}

/// The places of an archive's members for host naming: below the archive,
/// with a single top directory shared by every member taken as the root (a
/// `tar czf fleet.tar.gz fleet/` names hosts as `fleet/` does).
pub fn places(archive_stem: &str, members: &[Member]) -> Vec<Place> {
    let split: Vec<Vec<&str>> = members
        .iter()
        .map(|m| {
            m.path
                .split('/')
                .filter(|p| !p.is_empty() && *p != ".")
                .collect()
        })
        .collect();
    let top = split
        .first()
        .and_then(|p| p.first().copied())
        .filter(|top| split.iter().all(|p| p.len() > 1 && p.first() == Some(top)));
    split
        .iter()
        .map(|parts| {
            let (root, rest) = match top {
                Some(t) => (t.to_owned(), parts.get(1..).unwrap_or_default()),
                None => (archive_stem.to_owned(), parts.as_slice()),
            };
            let (file, dirs) = rest.split_last().unwrap_or((&"", &[]));
            Place {
                root_name: root,
                dirs: dirs.iter().map(|d| (*d).to_owned()).collect(),
                file: (*file).to_owned(),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_by_name() {
        assert_eq!(kind_of(Path::new("a/fleet.tar.gz")), Some(Kind::TarGz));
        assert_eq!(kind_of(Path::new("fleet.TGZ")), Some(Kind::TarGz));
        assert_eq!(kind_of(Path::new("fleet.tar")), Some(Kind::Tar));
        assert_eq!(kind_of(Path::new("node1.txt.gz")), Some(Kind::Gz));
        assert_eq!(kind_of(Path::new("x.zip")), Some(Kind::Zip));
        assert_eq!(kind_of(Path::new("x.txt")), None);
        assert_eq!(stem(Path::new("d/fleet.tar.gz")), "fleet");
    }

    #[test]
    fn sosreport_members_outside_fabric_output_are_skipped() {
        assert!(!skip_member("sosreport-n1/sos_commands/infiniband/ibstat"));
        assert!(!skip_member(
            "sosreport-n1/sos_commands/nvidia/nvidia-smi_-q"
        ));
        assert!(skip_member("sosreport-n1/sos_commands/kernel/dmesg"));
        assert!(skip_member("fleet/.git/config"));
        assert!(!skip_member("fleet/node01.txt"));
    }
}
