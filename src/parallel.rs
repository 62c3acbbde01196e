//! Machinery for strategies that spread chunks over OS threads: a fixed set of buffers going round
//! the threads, putting finished chunks back in input order, and thread faults that become errors
//! rather than hangs.

use std::io;
use std::thread::{self, Scope, ScopedJoinHandle};

use crate::error::{Error, panic_message};
use crate::thread_room::STACK;

/// At most `limit` reusable items, made on demand and kept by the one thread that hands them out
/// and takes them back: memory stays bounded whatever the input's size, and running out of items
/// is how that thread knows to wait for one to come back before reading on.
#[derive(Debug)]
pub struct Slots<T> {
    free: Vec<T>,
    made: usize,
    limit: usize,
}

impl<T> Slots<T> {
    /// Up to `limit` items (at least 1).
    pub fn new(limit: usize) -> Self {
        Slots {
            free: Vec::new(),
            made: 0,
            limit: limit.max(1),
        }
    }

    /// A free item; else a new one from `make` while fewer than the limit exist; else `None`:
    /// all are out.
    pub fn take(&mut self, make: impl FnOnce() -> T) -> Option<T> {
        if let Some(item) = self.free.pop() {
            return Some(item);
        }
        if self.made < self.limit {
            self.made += 1;
            return Some(make());
        }
        None
    }

    /// Takes an item back for reuse.
    pub fn give_back(&mut self, item: T) {
        self.free.push(item);
    }

    /// How many items are out, not yet given back.
    pub fn out(&self) -> usize {
        self.made - self.free.len()
    }
}

/// Items numbered 0, 1, 2, ... arriving in any order, handed out in number order.
///
/// At most `window` items may be out at once: every number inserted lies within `window` of the
/// next to hand out. [`Slots`] of `window` items carrying the numbers guarantee that.
#[derive(Debug)]
pub struct Reorder<T> {
    /// Item `n` waits at `n % window`.
    waiting: Vec<Option<T>>,
    /// The number of the next item to hand out.
    next: u64,
}

impl<T> Reorder<T> {
    /// Restoring order over at most `window` items under way at once (at least one).
    pub fn new(window: usize) -> Self {
        Reorder {
            waiting: (0..window.max(1)).map(|_| None).collect(),
            next: 0,
        }
    }

    fn place(&self, number: u64) -> usize {
        (number % self.waiting.len() as u64) as usize
    }

    /// Holds item `number` until its turn.
    pub fn insert(&mut self, number: u64, item: T) {
        assert!(
            number >= self.next && number - self.next < self.waiting.len() as u64,
            "item {number} is outside the window"
        );
        let place = self.place(number);
        self.waiting[place] = Some(item);
    }

    /// The next item in order, if it has arrived.
    pub fn pop(&mut self) -> Option<T> {
        let place = self.place(self.next);
        let item = self.waiting[place].take()?;
        self.next += 1;
        Some(item)
    }
}

/// Runs its closure if dropped while its thread unwinds from a panic. A worker holds one so that a
/// chunk lost in a panic becomes an error, instead of a writer waiting for it forever.
pub struct OnPanic<F: FnMut()>(pub F);

impl<F: FnMut()> Drop for OnPanic<F> {
    fn drop(&mut self) {
        if thread::panicking() {
            (self.0)();
        }
    }
}

/// Starts a thread named `name` in `scope`, so that it may borrow what outlives the scope;
/// failing to start one is an error, not a panic. Its stack is the one `threads_can_start`
/// checks for: a run checks for its threads before it starts them, as under `ulimit -v` a thread
/// may get its stack and then abort the process as it begins.
pub fn spawn<'scope, T: Send + 'scope>(
    scope: &'scope Scope<'scope, '_>,
    name: String,
    body: impl FnOnce() -> T + Send + 'scope,
) -> Result<ScopedJoinHandle<'scope, T>, Error> {
    thread::Builder::new()
        .name(name.clone())
        .stack_size(STACK)
        .spawn_scoped(scope, body)
        .map_err(|error| Error::new(format!("starting the {name} thread"), error))
}

/// Waits for a thread to finish and returns its result; its panic becomes an error that says
/// which thread and what it panicked with.
pub fn join<T>(thread: ScopedJoinHandle<'_, T>) -> Result<T, Error> {
    let name = thread.thread().name().unwrap_or("a thread").to_owned();
    thread.join().map_err(|panic| {
        let message = panic_message(&*panic);
        Error::new(
            format!("internal error in {name}"),
            io::Error::other(message),
        )
    })
}

#[cfg(test)]
mod tests {
    use crossbeam_channel::bounded;

    use super::*;

    #[test]
    fn slots_are_made_up_to_their_limit_then_reused() {
        let mut slots = Slots::new(2);
        let mut made = 0;
        let mut make = || {
            made += 1;
            made
        };
        assert_eq!(slots.take(&mut make), Some(1));
        assert_eq!(slots.take(&mut make), Some(2));
        assert_eq!(slots.take(&mut make), None, "both are out");
        assert_eq!(slots.out(), 2);
        slots.give_back(1);
        assert_eq!(slots.take(&mut make), Some(1), "reused, not made");
        assert_eq!(slots.out(), 2);
    }

    #[test]
    fn reorder_hands_out_in_number_order() {
        let mut reorder = Reorder::new(3);
        assert_eq!(reorder.pop(), None);
        reorder.insert(2, 'c');
        reorder.insert(1, 'b');
        assert_eq!(reorder.pop(), None, "0 has not arrived");
        reorder.insert(0, 'a');
        assert_eq!(reorder.pop(), Some('a'));
        reorder.insert(3, 'd');
        assert_eq!(reorder.pop(), Some('b'));
        assert_eq!(reorder.pop(), Some('c'));
        assert_eq!(reorder.pop(), Some('d'));
        assert_eq!(reorder.pop(), None);
    }

    #[test]
    #[should_panic(expected = "outside the window")]
    fn reorder_refuses_numbers_beyond_its_window() {
        let mut reorder = Reorder::new(2);
        reorder.insert(3, ());
    }

    #[test]
    fn panic_in_a_thread_raises_the_alarm_and_join_reports_it() {
        let (alarm, alarmed) = bounded(1);
        thread::scope(|scope| {
            let thread = spawn(scope, "doomed".to_owned(), move || {
                let _alarm = OnPanic(|| alarm.send(()).expect("room for the alarm"));
                panic!("on purpose");
            })
            .expect("a thread starts");
            assert_eq!(alarmed.recv(), Ok(()));
            let error = join(thread).expect_err("the thread panicked");
            assert_eq!(error.to_string(), "internal error in doomed: on purpose");
        });
    }

    #[test]
    fn no_alarm_without_a_panic() {
        let (alarm, alarmed) = bounded(1);
        let borrowed = 7;
        thread::scope(|scope| {
            let thread = spawn(scope, "calm".to_owned(), || {
                let _alarm = OnPanic(|| alarm.send(()).expect("room for the alarm"));
                borrowed
            })
            .expect("a thread starts");
            assert_eq!(join(thread).expect("no panic"), 7);
        });
        drop(alarm);
        assert!(alarmed.recv().is_err(), "the alarm was dropped unrung");
    }
}
