//! Work on the pool's threads, results taken in order on the calling thread.
//!
//! A batch run reads and analyses hosts in parallel but must fold their
//! results in input order (ids, the spool, streamed NDJSON), on one thread.
//! Doing that a chunk at a time left a thread idle at every chunk's end,
//! waiting for the chunk's slowest host, and folding a chunk took a pool
//! thread from the next. Here the pool's threads take items one at a time,
//! in order, never more than `ahead` past the one being consumed (so memory
//! stays bounded), while the calling thread consumes each result as soon as
//! it and every one before it are ready.

use std::collections::VecDeque;
use std::sync::{Condvar, Mutex, MutexGuard, PoisonError};

/// What the workers and the consumer share.
struct State<R> {
    /// The next item a worker takes.
    next: usize,
    /// How many items the consumer has taken (the first slot's item).
    taken: usize,
    /// A slot for each item from `taken` up to `next`: its result once a
    /// worker has one.
    slots: VecDeque<Option<R>>,
    /// Set when the consumer stopped early or a worker panicked: no item is
    /// started after it.
    stop: bool,
}

/// The shared state and its two wake-ups.
struct Shared<R> {
    state: Mutex<State<R>>,
    /// Workers wait here for room ahead of the consumer.
    room: Condvar,
    /// The consumer waits here for the next result.
    ready: Condvar,
}

impl<R> Shared<R> {
    fn lock(&self) -> MutexGuard<'_, State<R>> {
        // A panic while the lock is held leaves the state whole (every
        // update is one assignment): go on with it.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn stop(&self) {
        self.lock().stop = true;
        self.room.notify_all();
        self.ready.notify_all();
    }
}

/// Stops everything when a worker unwinds, so that the consumer does not
/// wait for a result that will never come (the scope then re-raises the
/// panic).
struct StopOnPanic<'a, R>(&'a Shared<R>);

impl<R> Drop for StopOnPanic<'_, R> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.0.stop();
        }
    }
}

/// Runs `work` on items `0..items` on the pool's threads and hands each
/// result to `consume` on the calling thread, in item order, with at most
/// `ahead` items (at least one) started past the one being consumed. The
/// first error of `consume` stops the run: items not yet started are not,
/// and the error is returned.
pub fn for_each_in_order<R: Send, E>(
    items: usize,
    ahead: usize,
    work: impl Fn(usize) -> R + Sync,
    mut consume: impl FnMut(usize, R) -> Result<(), E>,
) -> Result<(), E> {
    let ahead = ahead.max(1);
    let shared = Shared {
        state: Mutex::new(State {
            next: 0,
            taken: 0,
            slots: VecDeque::with_capacity(ahead),
            stop: false,
        }),
        room: Condvar::new(),
        ready: Condvar::new(),
    };
    let workers = rayon::current_num_threads().clamp(1, items.max(1));
    rayon::in_place_scope(|scope| {
        for _ in 0..workers {
            scope.spawn(|_| {
                let _guard = StopOnPanic(&shared);
                worker(&shared, items, ahead, &work);
            });
        }
        let outcome = consumer(&shared, items, &mut consume);
        if outcome.is_err() {
            shared.stop();
        }
        outcome
    })
}

/// A pool thread: takes the next item while there is room, works on it
/// outside the lock, and puts the result in its slot.
fn worker<R>(shared: &Shared<R>, items: usize, ahead: usize, work: &impl Fn(usize) -> R) {
    loop {
        let item = {
            let mut state = shared.lock();
            while !state.stop && state.next < items && state.next >= state.taken + ahead {
                state = shared
                    .room
                    .wait(state)
                    .unwrap_or_else(PoisonError::into_inner);
            }
            if state.stop || state.next >= items {
                return;
            }
            let item = state.next;
            state.next += 1;
            state.slots.push_back(None);
            item
        };
        let result = work(item);
        let mut state = shared.lock();
        let first = state.taken;
        if let Some(slot) = state.slots.get_mut(item - first) {
            *slot = Some(result);
        }
        drop(state);
        if item == first {
            shared.ready.notify_one();
        }
    }
}

/// The calling thread: takes each result in order as soon as it is ready.
fn consumer<R, E>(
    shared: &Shared<R>,
    items: usize,
    consume: &mut impl FnMut(usize, R) -> Result<(), E>,
) -> Result<(), E> {
    for item in 0..items {
        let result = {
            let mut state = shared.lock();
            loop {
                if matches!(state.slots.front(), Some(Some(_))) {
                    break;
                }
                if state.stop {
                    // A worker panicked: the scope re-raises it.
                    return Ok(());
                }
                state = shared
                    .ready
                    .wait(state)
                    .unwrap_or_else(PoisonError::into_inner);
            }
            state.taken += 1;
            state.slots.pop_front().flatten()
        };
        shared.room.notify_all();
        if let Some(result) = result {
            consume(item, result)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    proptest::proptest! {
        /// Every item is consumed once, in order, with its own result, and
        /// no worker runs further ahead than allowed.
        #[test]
        fn results_come_in_order_within_the_window(items in 0usize..300, ahead in 0usize..20) {
            let taken = AtomicUsize::new(0);
            let furthest = AtomicUsize::new(0);
            let mut seen = Vec::new();
            let done: Result<(), ()> = for_each_in_order(
                items,
                ahead,
                |i| {
                    let lead = i.saturating_sub(taken.load(Ordering::SeqCst));
                    furthest.fetch_max(lead, Ordering::SeqCst);
                    // Uneven work, so that results finish out of order.
                    let spin = (i * 7919) % 13;
                    std::hint::black_box((0..spin * 100).fold(i, usize::wrapping_add));
                    i * 3
                },
                |i, r| {
                    seen.push((i, r));
                    taken.store(i + 1, Ordering::SeqCst);
                    Ok(())
                },
            );
            proptest::prop_assert!(done.is_ok());
            let want: Vec<(usize, usize)> = (0..items).map(|i| (i, i * 3)).collect();
            proptest::prop_assert_eq!(seen, want);
            // The test sees an item consumed only after the run counts it.
            proptest::prop_assert!(furthest.load(Ordering::SeqCst) <= ahead.max(1));
        }

        /// The consumer's first error ends the run and is returned; no item
        /// after it is consumed.
        #[test]
        fn the_first_error_stops_the_run(items in 1usize..200, fail_at in 0usize..200) {
            let mut consumed = 0;
            let done = for_each_in_order(
                items,
                4,
                |i| i,
                |i, _| {
                    consumed += 1;
                    if i == fail_at { Err(i) } else { Ok(()) }
                },
            );
            if fail_at < items {
                proptest::prop_assert_eq!(done, Err(fail_at));
                proptest::prop_assert_eq!(consumed, fail_at + 1);
            } else {
                proptest::prop_assert_eq!(done, Ok(()));
                proptest::prop_assert_eq!(consumed, items);
            }
        }
    }

    #[test]
    fn a_panicking_worker_ends_the_run_instead_of_hanging_it() {
        let run = std::panic::catch_unwind(|| {
            let _: Result<(), ()> = for_each_in_order(
                50,
                4,
                |i| {
                    assert!(i != 10, "item 10");
                    i
                },
                |_, _| Ok(()),
            );
        });
        assert!(run.is_err());
    }
}
