//! The command's allocator, and how soon it gives freed memory back.

/// mimalloc instead of the system allocator: batch runs allocate millions
/// of small strings and maps, and glibc's malloc and free were a quarter of
/// the profile of a 1,000-host run.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// The environment variable that sets how long mimalloc keeps freed pages
/// before it gives them back to the system, in milliseconds.
#[cfg(unix)]
const PURGE_DELAY: &str = "MIMALLOC_PURGE_DELAY";

/// The delay the command runs with: mimalloc 2's default. mimalloc 3
/// keeps freed pages for a second, and a batch run's fleet step (where its
/// memory peaks) comes within a second of the hosts' memory being freed.
/// Peak RSS, generated hosts, three alternating runs each: 5,000 hosts
/// 185-204 MB with the default, 132-135 MB with 10 ms; 10,000 hosts
/// 325-345 MB and 234-239 MB; CPU within the runs' noise.
#[cfg(unix)]
const PURGE_DELAY_MS: &str = "10";

/// Runs the command again, in place, with [`PURGE_DELAY`] set, unless it
/// is set already (by the user, or by this). mimalloc reads its options
/// from the environment once, as the process starts, and sets them
/// otherwise only through an unsafe call; replacing the process (same
/// process id, arguments, streams and exit code) costs a millisecond. When
/// that fails, the command goes on with the default delay.
///
/// `analyze` and `parse` call it: a batch run frees most of what it
/// allocates as it goes. `parse` now prints and drops each section as it
/// is read, and its peak no longer depends on the delay (12 MB pdsh paste:
/// 28 MB either way; 48 against 44 MB when it held every section).
pub fn give_back_freed_memory_sooner() {
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt;
        if std::env::var_os(PURGE_DELAY).is_some() {
            return;
        }
        let Ok(exe) = std::env::current_exe() else {
            return;
        };
        let mut args = std::env::args_os();
        let mut command = std::process::Command::new(exe);
        if let Some(name) = args.next() {
            command.arg0(name);
        }
        // Returns only if the process could not be replaced.
        let _ = command.args(args).env(PURGE_DELAY, PURGE_DELAY_MS).exec();
    }
}
