//! [`Tallying`]: what every strategy renders lines with, and the [`Tally`] a filter may keep of
//! them. Every [`Transform`] is a `Tallying` whose tally is `()`, so a filter that only changes,
//! drops or keeps lines never meets this module; one that counts (`wc`, `awk '{c[$9]++}'`)
//! writes a `Tallying` itself.
//!
//! A tally is kept per rendering, not per process: each chunk of lines (each line, where a
//! strategy renders one at a time) is folded into a tally of its own on whichever thread renders
//! it, with no lock on a line's way, and the strategy merges those tallies in input order as it
//! writes their renderings, so that a tally that is not commutative (the first and last key
//! seen) holds what a single loop would. Once every line is written, the merged tally goes to
//! [`end`](Tallying::end), which writes the summary after the lines and says the exit status:
//! Beam's `CombineFn` (create, add, merge, extract), as `Default`, the renderings, `merge` and
//! `end` (docs/CONTRACT.md §13.4).

use std::collections::hash_map::Entry;
use std::collections::{BTreeMap, HashMap};
use std::hash::{BuildHasher, Hash};
use std::mem;
use std::process::ExitCode;
use std::time::Duration;

use bytes::{Buf, Bytes};

use crate::error::Error;
use crate::frame::reserve;
use crate::transform::{MOST_ROOM_ADDED, Transform};

/// What a filter keeps of the lines it has rendered: made empty (`Default`) for each chunk, folded
/// into by its renderings, and merged with the tallies of the chunks after it, in input order.
/// The empty tally changes nothing it is merged with, or into.
///
/// Counts (`u64` and the other unsigned integers, added), arrays and pairs of tallies, and maps
/// of a tally a key (`HashMap`, `BTreeMap`) are tallies already.
pub trait Tally: Default + Send {
    /// Folds in `later`, the tally of the lines that came right after this one's.
    fn merge(&mut self, later: Self);
}

/// No tally: what a [`Transform`] keeps.
impl Tally for () {
    #[inline(always)]
    fn merge(&mut self, (): ()) {}
}

/// A count: merged by adding, saturating rather than wrapping or panicking.
macro_rules! counts {
    ($($count:ty),*) => {$(
        impl Tally for $count {
            fn merge(&mut self, later: $count) {
                *self = self.saturating_add(later);
            }
        }
    )*};
}
counts!(u8, u16, u32, u64, u128, usize);

/// Several tallies side by side (`wc`'s newlines, words and bytes), each merged with its own.
impl<T: Tally, const N: usize> Tally for [T; N]
where
    [T; N]: Default,
{
    fn merge(&mut self, later: [T; N]) {
        self.iter_mut()
            .zip(later)
            .for_each(|(tally, later)| tally.merge(later));
    }
}

/// Two tallies side by side, each merged with its own.
impl<A: Tally, B: Tally> Tally for (A, B) {
    fn merge(&mut self, (a, b): (A, B)) {
        self.0.merge(a);
        self.1.merge(b);
    }
}

/// A tally a key (`awk '{c[$9]++}'`), a key's merged with its own: the smaller map is folded
/// into the larger, each key's tallies still merged earlier with later.
impl<K, V, S> Tally for HashMap<K, V, S>
where
    K: Eq + Hash + Send,
    V: Tally,
    S: BuildHasher + Default + Send,
{
    fn merge(&mut self, mut later: HashMap<K, V, S>) {
        let earlier_is_smaller = later.len() > self.len();
        if earlier_is_smaller {
            mem::swap(self, &mut later);
        }
        for (key, tally) in later {
            match self.entry(key) {
                Entry::Occupied(mut kept) if earlier_is_smaller => {
                    let later = mem::replace(kept.get_mut(), tally);
                    kept.get_mut().merge(later);
                }
                Entry::Occupied(mut kept) => kept.get_mut().merge(tally),
                Entry::Vacant(new) => drop(new.insert(tally)),
            }
        }
    }
}

/// A tally a key, in key order, a key's merged with its own.
impl<K: Ord + Send, V: Tally> Tally for BTreeMap<K, V> {
    fn merge(&mut self, later: BTreeMap<K, V>) {
        for (key, tally) in later {
            self.entry(key).or_default().merge(tally);
        }
    }
}

/// How each line is rendered and folded into a [`Tally`]: a [`Transform`] with a tally beside
/// it, and the summary written from the tally once every line is. Every `Transform` is one,
/// keeping no tally; a filter that counts implements this instead.
///
/// The methods are [`Transform`]'s, each with the tally of the lines it renders, and the same
/// rules hold: a rendering may change its line, drop it (write nothing) or write several lines;
/// only [`render_line`](Tallying::render_line) and [`end`](Tallying::end) must be written. A
/// strategy hands each rendering a tally of its chunk's own, in no set order across chunks; the
/// tallies are then merged in input order, the renderings written so, and a chunk whose rendering
/// is not written (a range of a file that failed) is not merged either.
///
/// ```
/// use linewright::strategy::std_baseline;
/// use linewright::{Memory, StdBaseline, Tallying};
/// use std::process::ExitCode;
///
/// /// Counts the lines, and passes none on.
/// struct CountLines;
///
/// impl Tallying for CountLines {
///     type Tally = u64;
///
///     fn render_line(&self, lines: &mut u64, _: &mut Vec<u8>, _: &[u8]) {
///         *lines += 1;
///     }
///
///     fn end(&self, lines: u64, out: &mut Vec<u8>) -> ExitCode {
///         out.extend_from_slice(format!("{lines}\n").as_bytes());
///         ExitCode::SUCCESS
///     }
/// }
///
/// let knobs = StdBaseline::default().buffer.knobs();
/// let mut out = Vec::new();
/// std_baseline::run(&knobs, CountLines, Memory::new(&b"a\nb\nc"[..]), &mut out)?;
/// assert_eq!(out, b"3\n");
/// # Ok::<(), linewright::Error>(())
/// ```
pub trait Tallying {
    /// What is kept of the lines rendered: `()` for a [`Transform`].
    type Tally: Tally;

    /// As [`Transform::most_added`].
    #[inline(always)]
    fn most_added(&self) -> usize {
        1
    }

    /// As [`Transform::cost_a_line`].
    #[inline(always)]
    fn cost_a_line(&self) -> Duration {
        Duration::ZERO
    }

    /// As [`Transform::render_line`], folding `line` into `tally`. The line comes without its
    /// `\n`, so a last line without one looks like any other here: a tally that must tell them
    /// apart (`wc`'s bytes) counts in [`render_chunk`](Tallying::render_chunk), which `batched`
    /// and `pipeline` render every line with, and says it needs one of them.
    fn render_line(&self, tally: &mut Self::Tally, out: &mut Vec<u8>, line: &[u8]);

    /// As [`Transform::render_chunk`], folding the chunk's lines into `tally`. By default, a line
    /// at a time.
    fn render_chunk(
        &self,
        tally: &mut Self::Tally,
        out: &mut Vec<u8>,
        chunk: &[u8],
    ) -> Result<u64, Error> {
        render_lines(self, tally, out, chunk)
    }

    /// As [`Transform::render_shared`], folding the line into `tally`. By default, a buffer of
    /// its own.
    fn render_shared<'a>(
        &'a self,
        tally: &mut Self::Tally,
        line: Bytes,
    ) -> Result<impl Buf + use<'a, Self>, Error> {
        render_owned(self, tally, &line)
    }

    /// The last step, once every line is rendered and written: appends the summary of `tally`,
    /// every chunk's merged in input order, to `out` (written after the lines), and returns the
    /// status a run that failed nowhere exits with (docs/CONTRACT.md §13.4). For a
    /// [`Transform`], nothing and its [`exit_status`](Transform::exit_status).
    fn end(&self, tally: Self::Tally, out: &mut Vec<u8>) -> ExitCode;
}

impl<T: Transform + ?Sized> Tallying for T {
    type Tally = ();

    #[inline(always)]
    fn most_added(&self) -> usize {
        Transform::most_added(self)
    }

    #[inline(always)]
    fn cost_a_line(&self) -> Duration {
        Transform::cost_a_line(self)
    }

    #[inline(always)]
    fn render_line(&self, (): &mut (), out: &mut Vec<u8>, line: &[u8]) {
        Transform::render_line(self, out, line);
    }

    #[inline(always)]
    fn render_chunk(&self, (): &mut (), out: &mut Vec<u8>, chunk: &[u8]) -> Result<u64, Error> {
        Transform::render_chunk(self, out, chunk)
    }

    #[inline(always)]
    fn render_shared<'a>(
        &'a self,
        (): &mut (),
        line: Bytes,
    ) -> Result<impl Buf + use<'a, T>, Error> {
        Transform::render_shared(self, line)
    }

    fn end(&self, (): (), _: &mut Vec<u8>) -> ExitCode {
        self.exit_status()
    }
}

/// Appends every line of `chunk` rendered a line at a time to `out` and returns how many lines
/// that was: the default chunk rendering of [`Tallying`] and of [`Transform`] alike.
pub(crate) fn render_lines<T: Tallying + ?Sized>(
    tallying: &T,
    tally: &mut T::Tally,
    out: &mut Vec<u8>,
    chunk: &[u8],
) -> Result<u64, Error> {
    let mut lines = 0;
    let mut rest = chunk;
    while !rest.is_empty() {
        let end = memchr::memchr(b'\n', rest).unwrap_or(rest.len());
        render_line_in_memory(tallying, tally, out, &rest[..end])?;
        lines += 1;
        rest = rest.get(end + 1..).unwrap_or_default();
    }
    Ok(lines)
}

/// `line`'s rendering in a buffer of its own: the default shared rendering of [`Tallying`] and
/// of [`Transform`] alike.
pub(crate) fn render_owned<T: Tallying + ?Sized>(
    tallying: &T,
    tally: &mut T::Tally,
    line: &[u8],
) -> Result<Bytes, Error> {
    let mut out = Vec::new();
    render_line_in_memory(tallying, tally, &mut out, line)?;
    Ok(Bytes::from(out))
}

/// Appends `line`'s rendering to `out` after making room for it, or fails if `out` cannot grow
/// to hold it: the step every strategy that renders a line at a time takes.
#[inline(always)]
pub(crate) fn render_line_in_memory<T: Tallying + ?Sized>(
    tallying: &T,
    tally: &mut T::Tally,
    out: &mut Vec<u8>,
    line: &[u8],
) -> Result<(), Error> {
    reserve(out, line.len() + tallying.most_added().min(MOST_ROOM_ADDED))?;
    tallying.render_line(tally, out, line);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A tally that is not commutative: what it saw, in order.
    #[derive(Default, Debug, PartialEq)]
    struct Seen(Vec<u32>);

    impl Tally for Seen {
        fn merge(&mut self, later: Seen) {
            self.0.extend(later.0);
        }
    }

    fn seen<const N: usize>(pairs: [(u8, u32); N]) -> HashMap<u8, Seen> {
        let mut map: HashMap<u8, Seen> = HashMap::new();
        pairs
            .into_iter()
            .for_each(|(key, n)| map.entry(key).or_default().0.push(n));
        map
    }

    /// A map's tallies are merged earlier with later, key by key, whichever map is the larger
    /// (the smaller is folded into the larger).
    #[test]
    fn a_maps_tallies_merge_in_order_whichever_map_is_larger() {
        let mut small_first = seen([(1, 1)]);
        small_first.merge(seen([(1, 2), (2, 3), (3, 4)]));
        assert_eq!(small_first, seen([(1, 1), (1, 2), (2, 3), (3, 4)]));
        let mut large_first = seen([(1, 1), (2, 3), (3, 4)]);
        large_first.merge(seen([(1, 2), (4, 5)]));
        assert_eq!(large_first, seen([(1, 1), (1, 2), (2, 3), (3, 4), (4, 5)]));
        let mut sorted = BTreeMap::from([(1, Seen(vec![1]))]);
        Tally::merge(
            &mut sorted,
            BTreeMap::from([(1, Seen(vec![2])), (0, Seen(vec![3]))]),
        );
        assert_eq!(
            sorted,
            BTreeMap::from([(0, Seen(vec![3])), (1, Seen(vec![1, 2]))])
        );
    }

    /// Counts add, saturating; arrays and pairs merge each tally with its own.
    #[test]
    fn counts_add_without_overflowing_and_side_by_side_tallies_merge_each_with_its_own() {
        let mut count = u64::MAX - 1;
        count.merge(5);
        assert_eq!(count, u64::MAX);
        let mut counts = [1u64, 2, 3];
        counts.merge([10, 20, 30]);
        assert_eq!(counts, [11, 22, 33]);
        let mut pair = (1u8, Seen(vec![1]));
        pair.merge((2, Seen(vec![2])));
        assert_eq!(pair, (3, Seen(vec![1, 2])));
    }
}
