//! Work on the pool's threads, results taken in order as they are ready.
//!
//! A batch run reads and analyses hosts in parallel but must fold their
//! results in input order (ids, the spool, streamed NDJSON), one at a time.
//! Doing that a chunk at a time left a thread idle at every chunk's end,
//! waiting for the chunk's slowest host, and folding a chunk took a pool
//! thread from the next. Here the pool's threads take items one at a time,
//! in order, never more than `ahead` past the one being consumed (so memory
//! stays bounded), and the thread that finishes the next item in order
//! consumes it, and every ready one after it, before it takes new work:
//! results are folded as soon as they and every one before them are ready,
//! by a thread that was running anyway, not by a third thread woken for
//! each (one more thread than cores, and a wake-up per item).

use std::collections::VecDeque;
use std::sync::{Condvar, Mutex, MutexGuard, PoisonError};

/// What the workers share.
struct State<R, E> {
    /// How many items there are so far ([`Feeder::extend_to`]).
    items: usize,
    /// Whether no more items will come.
    closed: bool,
    /// The next item a worker takes.
    next: usize,
    /// How many items have been consumed (the first slot's item).
    taken: usize,
    /// A slot for each item from `taken` up to `next`: its result once a
    /// worker has one.
    slots: VecDeque<Option<R>>,
    /// Whether a worker is consuming: results are consumed by one at a
    /// time, and one that is ready is left to it.
    consuming: bool,
    /// Set when the consumer failed or a worker panicked: no item is
    /// started after it.
    stop: bool,
    /// The consumer's first error.
    error: Option<E>,
}

/// The shared state, its wake-up, and the consumer.
struct Shared<R, E, C> {
    state: Mutex<State<R, E>>,
    /// Workers wait here for room ahead of the last item consumed.
    room: Condvar,
    /// Taken by the worker consuming (never contended: `consuming` says
    /// who may), so that it is lent to one thread at a time.
    consume: Mutex<C>,
}

impl<R, E, C> Shared<R, E, C> {
    fn lock(&self) -> MutexGuard<'_, State<R, E>> {
        // A panic while the lock is held leaves the state whole (every
        // update is one assignment): go on with it.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn stop(&self) {
        self.lock().stop = true;
        self.room.notify_all();
    }
}

/// Stops everything when a worker unwinds, so that no worker waits for
/// room that will never come (the scope then re-raises the panic).
struct StopOnPanic<'a, R, E, C>(&'a Shared<R, E, C>);

impl<R, E, C> Drop for StopOnPanic<'_, R, E, C> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.0.stop();
        }
    }
}

/// Runs `work` on items `0, 1, …` on the pool's threads and hands each
/// result to `consume`, in item order, one at a time, with at most `ahead`
/// items (at least one) started past the last one consumed. The first
/// error of `consume` stops the run: items not yet started are not, and the
/// error is returned.
///
/// The items are made known by `feed` while the workers already run: it
/// is called on the calling thread once the workers are started, and says
/// through its [`Feeder`] how many items there are so far; when it
/// returns, there are no more. A batch run lists
/// a dump tree this way while the first hosts are analysed: listed first,
/// the walk of a 1,000-host tree kept the other core idle for its ~25 ms.
///
/// `work` and `consume` run on the pool's threads, so neither may wait on
/// the pool itself (a nested `par_iter`): a thread waiting there can be
/// given another item, and that one can wait for room that only the first
/// can make. Nor may `feed`: the pool's threads are the workers', busy
/// until the feed ends.
pub fn for_each_fed_in_order<R: Send, E: Send>(
    ahead: usize,
    work: impl Fn(usize) -> R + Sync,
    consume: impl FnMut(usize, R) -> Result<(), E> + Send,
    feed: impl FnOnce(&Feeder<'_, R, E>),
) -> Result<(), E> {
    let ahead = ahead.max(1);
    let shared = Shared {
        state: Mutex::new(State {
            items: 0,
            closed: false,
            next: 0,
            taken: 0,
            slots: VecDeque::with_capacity(ahead),
            consuming: false,
            stop: false,
            error: None,
        }),
        room: Condvar::new(),
        consume: Mutex::new(consume),
    };
    rayon::in_place_scope(|scope| {
        for _ in 0..rayon::current_num_threads().max(1) {
            scope.spawn(|_| {
                let _guard = StopOnPanic(&shared);
                worker(&shared, ahead, &work);
            });
        }
        // Closed however the feed ends (a panic too), so that no worker
        // waits for items that will never come.
        let feeder = Feeder {
            room: &shared.room,
            state: &shared.state,
        };
        let _close = CloseOnDrop(&feeder);
        feed(&feeder);
    });
    match shared
        .state
        .into_inner()
        .unwrap_or_else(PoisonError::into_inner)
        .error
    {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// How a feed ([`for_each_fed_in_order`]) makes items known to the workers.
pub struct Feeder<'a, R, E> {
    room: &'a Condvar,
    state: &'a Mutex<State<R, E>>,
}

impl<R, E> Feeder<'_, R, E> {
    fn lock(&self) -> MutexGuard<'_, State<R, E>> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// There are `items` items so far (fewer than before is ignored).
    pub fn extend_to(&self, items: usize) {
        let mut state = self.lock();
        state.items = state.items.max(items);
        drop(state);
        self.room.notify_all();
    }

    fn close(&self) {
        self.lock().closed = true;
        self.room.notify_all();
    }
}

/// Closes a feed when it ends.
struct CloseOnDrop<'f, 'a, R, E>(&'f Feeder<'a, R, E>);

impl<R, E> Drop for CloseOnDrop<'_, '_, R, E> {
    fn drop(&mut self) {
        self.0.close();
    }
}

/// A pool thread: takes the next item while there is room, works on it
/// outside the lock, and puts the result in its slot; when that makes the
/// next result in order ready and no other worker is consuming, consumes
/// the ready results itself.
fn worker<R, E, C: FnMut(usize, R) -> Result<(), E>>(
    shared: &Shared<R, E, C>,
    ahead: usize,
    work: &impl Fn(usize) -> R,
) {
    loop {
        let item = {
            let mut state = shared.lock();
            // Waits for the next item to be known and for room for it; ends
            // when the run stops or no more items will come.
            loop {
                let known = state.next < state.items;
                if state.stop || (!known && state.closed) {
                    return;
                }
                if known && state.next < state.taken + ahead {
                    break;
                }
                state = shared
                    .room
                    .wait(state)
                    .unwrap_or_else(PoisonError::into_inner);
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
        if item == first && !state.consuming {
            state.consuming = true;
            consume_ready(shared, state);
        }
    }
}

/// Consumes the ready results in order, the lock released while each is
/// consumed (workers go on putting theirs in their slots), until the next
/// is not ready; then leaves consuming to whoever finishes it.
fn consume_ready<'s, R, E, C: FnMut(usize, R) -> Result<(), E>>(
    shared: &'s Shared<R, E, C>,
    mut state: MutexGuard<'s, State<R, E>>,
) {
    while !state.stop && matches!(state.slots.front(), Some(Some(_))) {
        let item = state.taken;
        state.taken += 1;
        let result = state.slots.pop_front().flatten();
        drop(state);
        shared.room.notify_all();
        let outcome = match result {
            Some(result) => {
                let mut consume = shared
                    .consume
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner);
                (*consume)(item, result)
            }
            None => Ok(()),
        };
        state = shared.lock();
        if let Err(e) = outcome {
            state.error = Some(e);
            state.stop = true;
            shared.room.notify_all();
        }
    }
    state.consuming = false;
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// Items `0..items`, all known at once.
    fn for_each_in_order<R: Send, E: Send>(
        items: usize,
        ahead: usize,
        work: impl Fn(usize) -> R + Sync,
        consume: impl FnMut(usize, R) -> Result<(), E> + Send,
    ) -> Result<(), E> {
        for_each_fed_in_order(ahead, work, consume, |feeder| feeder.extend_to(items))
    }

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

    proptest::proptest! {
        /// Items made known a few at a time while the workers run (with
        /// pauses, so that workers wait for them) are each consumed once,
        /// in order, with their own result.
        #[test]
        fn items_fed_while_running_come_in_order(
            steps in proptest::collection::vec(0usize..9, 0..40),
            ahead in 1usize..6,
        ) {
            let mut seen = Vec::new();
            let done: Result<(), ()> = for_each_fed_in_order(
                ahead,
                |i| i * 5,
                |i, r| {
                    seen.push((i, r));
                    Ok(())
                },
                |feeder| {
                    let mut known = 0;
                    for step in &steps {
                        known += step;
                        feeder.extend_to(known);
                        // Fewer than before is ignored.
                        feeder.extend_to(known / 2);
                        std::thread::sleep(std::time::Duration::from_micros(50));
                    }
                },
            );
            proptest::prop_assert!(done.is_ok());
            let total: usize = steps.iter().sum();
            let want: Vec<(usize, usize)> = (0..total).map(|i| (i, i * 5)).collect();
            proptest::prop_assert_eq!(seen, want);
        }
    }

    /// A feed that panics closes the run: the workers end instead of
    /// waiting for items that will never come, and the panic goes on.
    #[test]
    fn a_panicking_feed_ends_the_run_instead_of_hanging_it() {
        let run = std::panic::catch_unwind(|| {
            let _: Result<(), ()> = for_each_fed_in_order(
                4,
                |i| i,
                |_, _| Ok(()),
                |feeder| {
                    feeder.extend_to(3);
                    panic!("the listing failed");
                },
            );
        });
        assert!(run.is_err());
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
