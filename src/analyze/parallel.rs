//! The fleet step's independent pieces of work, run at once on the
//! command-line client's thread pool ([`rayon`]'s: the crate built with the
//! `cli` feature) and one after the other otherwise (the WebAssembly build
//! has no threads). The fleet step comes after every host is folded, on one
//! thread while the others idle: what it runs at once cuts the run's wall
//! time. Either way the results, and their order, are the same.

use std::cmp::Ordering;

/// Runs `a` and `b` (at once where there are threads) and returns both
/// results.
pub(crate) fn join<A, B, RA, RB>(a: A, b: B) -> (RA, RB)
where
    A: FnOnce() -> RA + Send,
    B: FnOnce() -> RB + Send,
    RA: Send,
    RB: Send,
{
    #[cfg(feature = "cli")]
    {
        rayon::join(a, b)
    }
    #[cfg(not(feature = "cli"))]
    {
        (a(), b())
    }
}

/// Sorts `items` by `compare`, stably: the order of `slice::sort_by` (a
/// stable sort's result depends on the comparison alone).
pub(crate) fn sort_by<T, F>(items: &mut [T], compare: F)
where
    T: Send,
    F: Fn(&T, &T) -> Ordering + Sync,
{
    #[cfg(feature = "cli")]
    {
        rayon::slice::ParallelSliceMut::par_sort_by(items, compare);
    }
    #[cfg(not(feature = "cli"))]
    {
        items.sort_by(compare);
    }
}

/// Sorts `items` by `compare`, which must be a total order (no two items
/// equal): then any sort gives `sort_by`'s order, and this one sorts in
/// place. A stable merge sort takes a buffer as large as the slice (the
/// incidents of 10,000 hosts: 35 MB at the peak of the run).
pub(crate) fn sort_unstable_by<T, F>(items: &mut [T], compare: F)
where
    T: Send,
    F: Fn(&T, &T) -> Ordering + Sync,
{
    #[cfg(feature = "cli")]
    {
        rayon::slice::ParallelSliceMut::par_sort_unstable_by(items, compare);
    }
    #[cfg(not(feature = "cli"))]
    {
        items.sort_unstable_by(compare);
    }
}

/// What `each` makes of every run of `per_task` items of `items` (the
/// last run shorter), concatenated in the items' order.
///
/// The runs are mapped a wave at a time (a few per thread), each wave's
/// results moved into the one vector and let go of before the next wave:
/// the results are never held twice over (the incidents of a 5,000-host
/// fleet are 17 MB). The vector starts with room for one result per item,
/// what the callers make, so that it is not copied as it grows.
pub(crate) fn flat_map_chunks<T, R, F>(items: &mut [T], per_task: usize, each: F) -> Vec<R>
where
    T: Send,
    R: Send,
    F: Fn(&mut [T]) -> Vec<R> + Sync,
{
    let per_task = per_task.max(1);
    #[cfg(feature = "cli")]
    let per_wave = per_task.saturating_mul(rayon::current_num_threads().max(1) * TASKS_PER_THREAD);
    #[cfg(not(feature = "cli"))]
    let per_wave = per_task;
    let mut all = Vec::with_capacity(items.len());
    for wave in items.chunks_mut(per_wave) {
        #[cfg(feature = "cli")]
        let parts: Vec<Vec<R>> = {
            use rayon::prelude::*;
            wave.par_chunks_mut(per_task).map(&each).collect()
        };
        #[cfg(not(feature = "cli"))]
        let parts: Vec<Vec<R>> = wave.chunks_mut(per_task).map(&each).collect();
        for part in parts {
            all.extend(part);
        }
    }
    all
}

/// Tasks of [`flat_map_chunks`] per thread in a wave: enough for the
/// threads to even out uneven tasks.
#[cfg(feature = "cli")]
const TASKS_PER_THREAD: usize = 4;

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        /// With a total order, the in-place sort gives the stable sort's
        /// order.
        #[test]
        fn a_total_order_sorts_as_the_stable_sort(items in proptest::collection::vec((0u8..8, 0u32..1000), 0..5000)) {
            let tagged: Vec<(u8, u32, usize)> = items.iter().enumerate().map(|(i, &(a, b))| (a, b, i)).collect();
            let mut got = tagged.clone();
            sort_unstable_by(&mut got, |x, y| x.0.cmp(&y.0).then(x.2.cmp(&y.2)));
            let mut want = tagged;
            want.sort_by_key(|x| x.0);
            proptest::prop_assert_eq!(got, want);
        }

        /// The sort is `sort_by`'s, ties in their order.
        #[test]
        fn sorts_as_the_standard_stable_sort(items in proptest::collection::vec((0u8..8, 0u32..1000), 0..5000)) {
            let mut got = items.clone();
            sort_by(&mut got, |a, b| a.0.cmp(&b.0));
            let mut want = items;
            want.sort_by_key(|a| a.0);
            proptest::prop_assert_eq!(got, want);
        }

        /// Chunks are mapped and joined in order, whatever their size.
        #[test]
        fn chunks_come_back_in_order(items in proptest::collection::vec(0u32..1000, 0..3000), per_task in 0usize..300) {
            let mut work = items.clone();
            let got = flat_map_chunks(&mut work, per_task, |run| {
                run.iter_mut().map(|x| { *x += 1; u64::from(*x) * 2 }).collect()
            });
            let want: Vec<u64> = items.iter().map(|x| u64::from(*x + 1) * 2).collect();
            proptest::prop_assert_eq!(got, want);
            proptest::prop_assert_eq!(work, items.iter().map(|x| x + 1).collect::<Vec<_>>());
        }

        /// Items that make no result or several (more than the room the
        /// vector starts with) come back in order too, over many waves.
        #[test]
        fn uneven_results_come_back_in_order(items in proptest::collection::vec(0u32..1000, 0..3000), per_task in 0usize..20) {
            let mut work = items.clone();
            let got = flat_map_chunks(&mut work, per_task, |run| {
                run.iter().flat_map(|&x| std::iter::repeat_n(x, (x % 3) as usize)).collect()
            });
            let want: Vec<u32> = items.iter().flat_map(|&x| std::iter::repeat_n(x, (x % 3) as usize)).collect();
            proptest::prop_assert_eq!(got, want);
        }
    }

    #[test]
    fn join_returns_both_results() {
        assert_eq!(join(|| 1 + 1, || "two"), (2, "two"));
    }
}
