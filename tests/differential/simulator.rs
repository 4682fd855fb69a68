//! Running `scripts/ibsim/random-fabric.py`: the real ibsim, opensm and
//! infiniband-diags binaries build each random fabric and its ground truth.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// The programs the generator runs. ibsim-utils gives `ibsim` and
/// `ibsim-run`; infiniband-diags gives the diagnostic tools.
const PROGRAMS: &[&str] = &[
    "python3",
    "ibsim",
    "ibsim-run",
    "opensm",
    "ibstat",
    "perfquery",
    "iblinkinfo",
    "ibqueryerrors",
];

/// The programs missing from `PATH`.
pub fn missing_programs() -> Vec<&'static str> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    PROGRAMS
        .iter()
        .copied()
        .filter(|p| !std::env::split_paths(&path).any(|d| d.join(p).is_file()))
        .collect()
}

/// The seeds to run: `FABRICSCOPE_DIFF_SEEDS` (`1-40` or `3,7,9`) or the
/// default list, chosen to cover cuts before and after the SM, narrow links,
/// every counter band, 4 to 12 hosts and 2 to 4 switches in about a minute.
pub fn seeds() -> Result<Vec<u64>, String> {
    const DEFAULT: &[u64] = &[1, 2, 3, 4, 6, 7, 8, 10, 11, 12];
    let Ok(spec) = std::env::var("FABRICSCOPE_DIFF_SEEDS") else {
        return Ok(DEFAULT.to_vec());
    };
    let mut out = Vec::new();
    for part in spec.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let bad = || format!("FABRICSCOPE_DIFF_SEEDS: {part:?} is not N or N-M");
        match part.split_once('-') {
            Some((a, b)) => {
                let (a, b): (u64, u64) = (
                    a.trim().parse().map_err(|_| bad())?,
                    b.trim().parse().map_err(|_| bad())?,
                );
                out.extend(a..=b);
            }
            None => out.push(part.parse().map_err(|_| bad())?),
        }
    }
    if out.is_empty() {
        return Err("FABRICSCOPE_DIFF_SEEDS lists no seed".to_owned());
    }
    Ok(out)
}

/// A scratch directory for the dumps, removed when dropped unless the test
/// asks to keep it (on failure, so the dumps can be read).
pub struct Scratch {
    pub dir: PathBuf,
    pub keep: bool,
}

impl Scratch {
    pub fn new() -> Self {
        let dir =
            std::env::temp_dir().join(format!("fabricscope-differential-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Self { dir, keep: false }
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        if !self.keep {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}

/// Builds the random fabric of `seed` into `out`; returns how long it took.
pub fn random_fabric(repo: &Path, seed: u64, out: &Path) -> Result<Duration, String> {
    let script = repo.join("scripts/ibsim/random-fabric.py");
    let started = Instant::now();
    let run = Command::new("python3")
        .arg(&script)
        .arg("--seed")
        .arg(seed.to_string())
        .arg("--out")
        .arg(out)
        .current_dir(repo)
        .output()
        .map_err(|e| format!("cannot run {}: {e}", script.display()))?;
    if run.status.success() {
        return Ok(started.elapsed());
    }
    let tail = |bytes: &[u8]| {
        let text = String::from_utf8_lossy(bytes);
        let lines: Vec<&str> = text.lines().collect();
        lines[lines.len().saturating_sub(15)..].join("\n")
    };
    Err(format!(
        "random-fabric.py --seed {seed} failed ({}):\n{}\n{}",
        run.status,
        tail(&run.stdout),
        tail(&run.stderr)
    ))
}
