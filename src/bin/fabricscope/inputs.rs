//! Gathering inputs: standard input, files, and directory trees of dumps.

use std::io::Read;
use std::path::{Path, PathBuf};

/// One input to read: its bytes, a display name and the host it belongs to.
pub struct Input {
    /// Path as given, or `-` for standard input.
    pub name: String,
    /// Host implied by the file's place (its parent directory in a dump tree).
    pub host: Option<String>,
    /// The raw bytes, or why they could not be read.
    pub bytes: Result<Vec<u8>, String>,
    /// The file's modification time (seconds since the Unix epoch): the
    /// snapshot time of a dump whose text carries none.
    pub modified_unix: Option<f64>,
}

/// Expands paths (directories recursively, sorted) into inputs. No paths, or
/// `-`, means standard input.
pub fn gather(paths: &[PathBuf]) -> Vec<Input> {
    list(paths).into_iter().map(Source::read).collect()
}

/// An input not yet read: batch runs list thousands and read them in parallel.
pub enum Source {
    /// Standard input.
    Stdin,
    /// A file, with the root directory it was found under (if any).
    File {
        /// The file.
        path: PathBuf,
        /// The directory given on the command line that holds it.
        root: Option<PathBuf>,
    },
}

impl Source {
    /// Reads the input's bytes.
    pub fn read(self) -> Input {
        match self {
            Source::Stdin => stdin(),
            Source::File { path, root } => file(&path, root.as_deref()),
        }
    }
}

/// Expands paths (directories recursively, sorted) without reading them.
pub fn list(paths: &[PathBuf]) -> Vec<Source> {
    if paths.is_empty() {
        return vec![Source::Stdin];
    }
    let mut sources = Vec::new();
    for path in paths {
        if path.as_os_str() == "-" {
            sources.push(Source::Stdin);
        } else if path.is_dir() {
            let mut files = Vec::new();
            walk(path, &mut files);
            files.sort();
            sources.extend(files.into_iter().map(|f| Source::File {
                path: f,
                root: Some(path.clone()),
            }));
        } else {
            sources.push(Source::File {
                path: path.clone(),
                root: None,
            });
        }
    }
    sources
}

fn stdin() -> Input {
    let mut bytes = Vec::new();
    let result = std::io::stdin()
        .read_to_end(&mut bytes)
        .map(|_| bytes)
        .map_err(|e| format!("cannot read standard input: {e}"));
    Input {
        name: "-".to_owned(),
        host: None,
        bytes: result,
        modified_unix: None,
    }
}

fn file(path: &Path, root: Option<&Path>) -> Input {
    Input {
        name: path.display().to_string(),
        host: root.and_then(|r| host_of(path, r)),
        bytes: std::fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display())),
        modified_unix: modified_unix(path),
    }
}

fn modified_unix(path: &Path) -> Option<f64> {
    let modified = std::fs::metadata(path).ok()?.modified().ok()?;
    let since = modified.duration_since(std::time::UNIX_EPOCH).ok()?;
    Some(since.as_secs_f64())
}

/// The host of a file in a dump tree: the name of the directory right below
/// the root that holds it (`dumps/node07/ibstat.txt` → `node07`), or for a
/// file directly in the root, its name up to the first dot
/// (`dumps/node07.txt` → `node07`).
fn host_of(path: &Path, root: &Path) -> Option<String> {
    let rel = path.strip_prefix(root).ok()?;
    let mut parts = rel.components();
    let first = parts.next()?.as_os_str().to_string_lossy().into_owned();
    if parts.next().is_some() {
        Some(first)
    } else {
        first
            .split('.')
            .next()
            .map(str::to_owned)
            .filter(|s| !s.is_empty())
    }
}

fn walk(dir: &Path, files: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            walk(&path, files);
        } else {
            files.push(path);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_comes_from_the_directory_below_the_root() {
        let root = Path::new("dumps");
        assert_eq!(
            host_of(Path::new("dumps/node07/ibstat.txt"), root).as_deref(),
            Some("node07")
        );
        assert_eq!(
            host_of(Path::new("dumps/node08.txt"), root).as_deref(),
            Some("node08")
        );
    }
}
