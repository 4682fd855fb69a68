//! The file a report is written to (`-o FILE`), opened as the run starts.
//!
//! Opened first, a path that cannot be written fails the run at once, not
//! after the whole fleet was read. And an earlier report at the path is
//! *replaced*, not truncated, when it is an ordinary file: removed, and
//! the report written to a new file of the same name (as GNU `ld` treats
//! its output). On ext4, the usual file system of the hosts that run
//! this, a file truncated to nothing is written back to disk as it is
//! closed (the `auto_da_alloc` safeguard for programs that rewrite a file
//! in place): the run's last step, on one thread, waited for the pages of
//! the new report to be queued, and for the old report's pages to be
//! dropped by the truncation. 1,000 generated hosts, a 41 MB JSON report
//! written over the last one (`scripts/bench-fleet.py` writes each run's
//! report over the last): 15 ms of the run's 290 (alternating runs, same
//! run). Removed as the run starts, the old file's pages are dropped on
//! a thread of their own while the first hosts are read.
//!
//! What is not an ordinary file (a symbolic link, a file with other hard
//! links, a device such as `/dev/stdout`, a named pipe) is opened and
//! truncated as before, so that what the path points to gets the report.

use std::fs::File;
use std::path::{Path, PathBuf};

/// The report's file, open for writing.
pub struct OutputFile {
    path: PathBuf,
    file: Option<File>,
    /// Whether this run made the file (removed again if the run ends
    /// without writing it).
    created: bool,
}

impl OutputFile {
    /// Opens `path` for the report: an ordinary file there is replaced
    /// (see the module documentation), anything else opened and truncated.
    pub fn open(path: &Path) -> Result<Self, String> {
        let cannot = |e: std::io::Error| format!("cannot write {}: {e}", path.display());
        let existing = std::fs::symlink_metadata(path).ok();
        if existing.as_ref().is_some_and(is_ordinary_file) {
            // Held open while its name is removed, the old file is not
            // freed by the removal (a few ms for a 41 MB report, before
            // any host is read) but when it is closed: on a thread of its
            // own, beside the run.
            let old = File::open(path).ok();
            match std::fs::remove_file(path) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(cannot(e)),
            }
            if let Some(old) = old {
                let _ = std::thread::Builder::new()
                    .name("old-report".into())
                    .spawn(move || drop(old));
            }
        }
        let file = File::create(path).map_err(cannot)?;
        Ok(Self {
            path: path.to_owned(),
            created: existing.is_none_or(|m| is_ordinary_file(&m)),
            file: Some(file),
        })
    }

    /// The path it was opened at.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The open file, to write the report into; `None` once taken.
    pub fn take(&mut self) -> Option<File> {
        self.created = false;
        self.file.take()
    }

    /// [`take`](Self::take), or the error to report when the report was
    /// written to it already (each run writes one report).
    pub fn take_for_writing(&mut self) -> Result<File, String> {
        self.take()
            .ok_or_else(|| format!("cannot write {}: written already", self.path.display()))
    }

    /// Which file it is, so that a walk of the inputs can leave it out: a
    /// report written into the directory being analysed is no input.
    #[cfg(unix)]
    pub fn id(&self) -> Option<(u64, u64)> {
        use std::os::unix::fs::MetadataExt;
        let meta = self.file.as_ref()?.metadata().ok()?;
        meta.is_file().then(|| (meta.dev(), meta.ino()))
    }

    /// Not on this platform: nothing is left out.
    #[cfg(not(unix))]
    pub fn id(&self) -> Option<(u64, u64)> {
        None
    }
}

impl Drop for OutputFile {
    /// A run that ends without a report (nothing to analyse, an error)
    /// leaves no empty file it made behind.
    fn drop(&mut self) {
        if self.created && self.file.take().is_some() {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

/// A regular file with no other name: replacing it changes nothing a user
/// sees but the file's inode (and its permissions, which are the new
/// file's defaults).
fn is_ordinary_file(meta: &std::fs::Metadata) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        meta.file_type().is_file() && meta.nlink() == 1
    }
    #[cfg(not(unix))]
    {
        let _ = meta;
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!(
            "fabricscope-output-file-{}-{name}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn an_earlier_report_is_replaced_by_a_new_file() {
        use std::io::Write;
        let dir = scratch("replace");
        let path = dir.join("report.json");
        std::fs::write(&path, "old report, longer than the new one").unwrap();
        let mut out = OutputFile::open(&path).unwrap();
        // Opened, the old text is gone already.
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "");
        out.take().unwrap().write_all(b"new").unwrap();
        drop(out);
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "new");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[cfg(unix)]
    #[test]
    fn a_file_with_another_name_is_written_in_place() {
        use std::io::Write;
        let dir = scratch("hardlink");
        let path = dir.join("report.json");
        let other = dir.join("other-name.json");
        std::fs::write(&path, "old report").unwrap();
        std::fs::hard_link(&path, &other).unwrap();
        let mut out = OutputFile::open(&path).unwrap();
        out.take().unwrap().write_all(b"new").unwrap();
        drop(out);
        // Both names see the new report: the file was not replaced.
        assert_eq!(std::fs::read_to_string(&other).unwrap(), "new");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[cfg(unix)]
    #[test]
    fn a_symbolic_link_gets_the_report_where_it_points() {
        use std::io::Write;
        let dir = scratch("symlink");
        let target = dir.join("target.json");
        let link = dir.join("link.json");
        std::fs::write(&target, "old report").unwrap();
        std::os::unix::fs::symlink(&target, &link).unwrap();
        let mut out = OutputFile::open(&link).unwrap();
        out.take().unwrap().write_all(b"new").unwrap();
        drop(out);
        assert!(std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "new");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_run_without_a_report_leaves_no_file_it_made() {
        let dir = scratch("unwritten");
        let path = dir.join("report.json");
        drop(OutputFile::open(&path).unwrap());
        assert!(!path.exists());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_path_that_cannot_be_written_fails_at_once() {
        let dir = scratch("unwritable");
        let path = dir.join("no-such-directory").join("report.json");
        let err = OutputFile::open(&path).err().unwrap();
        assert!(err.starts_with("cannot write "), "{err}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
