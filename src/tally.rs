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

use std::borrow::Borrow;
use std::cmp::{Ordering, Reverse};
use std::collections::hash_map::{Entry, RandomState};
use std::collections::{BTreeMap, HashMap};
use std::hash::{BuildHasher, Hash, Hasher};
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

/// A count a key, as `awk '{c[$9]++}'` keeps it, written as `sort | uniq -c | sort -k1,1nr -k2`
/// writes it (C locale): `COUNT KEY` lines by count descending, then key ascending, byte by byte.
/// Counts saturate rather than wrap. `S` hashes the keys: std's SipHash by default, a faster one
/// (foldhash, ahash) where the keys are not chosen by an adversary.
///
/// A key of up to [`INLINE_KEY`] bytes (an address, a status, a date) is held in the map itself,
/// so that a million keys are not a million allocations to make, sort through and free.
///
/// ```
/// use linewright::{Counts, Tally};
///
/// let mut counts = Counts::<std::hash::RandomState>::default();
/// counts.add(b"404", 1);
/// let mut later = Counts::default();
/// later.add(b"200", 1);
/// later.add(b"404", 1);
/// counts.merge(later);
/// counts.add_rendered(b"3 200");
/// let mut out = Vec::new();
/// counts.render(&mut out);
/// assert_eq!(out, b"4 200\n2 404\n");
/// ```
pub struct Counts<S = RandomState>(HashMap<Key, u64, S>);

/// The longest key a [`Counts`] holds without an allocation of its own.
pub const INLINE_KEY: usize = 22;
const _: () = assert!(
    INLINE_KEY >= 16,
    "Key::first_16 reads 16 bytes of a key held in place"
);

impl<S: Default> Default for Counts<S> {
    fn default() -> Self {
        Counts(HashMap::default())
    }
}

impl<S: BuildHasher + Default + Send> Tally for Counts<S> {
    fn merge(&mut self, later: Self) {
        self.0.merge(later.0);
    }
}

impl<S: BuildHasher> Counts<S> {
    /// Adds `count` to `key`'s.
    #[inline]
    pub fn add(&mut self, key: &[u8], count: u64) {
        match self.0.get_mut(key) {
            Some(total) => *total = total.saturating_add(count), // no key copied where it is known
            None => drop(self.0.insert(Key::from(key), count)),
        }
    }

    /// Adds one to each of `keys`, and returns how many there were: a chunk's keys
    /// ([`nth_fields`](crate::nth_fields)) folded in, and its lines counted, in one go.
    #[inline]
    pub fn add_all<'a>(&mut self, keys: impl IntoIterator<Item = &'a [u8]>) -> u64 {
        (keys.into_iter()).fold(0, |lines, key| {
            self.add(key, 1);
            lines + 1
        })
    }

    /// Adds the lines of `chunk` (as [`render_chunk`](Tallying::render_chunk) takes it) as
    /// [`render`](Counts::render) writes them, `COUNT KEY`, and returns how many there were, so
    /// that tallies made apart (of parts of a log, on other machines) merge: the count is a
    /// line's first field (split at spaces and tabs), 0 where it is not a number; the key is
    /// what follows the first space after it (leading ASCII whitespace skipped), empty where
    /// none does.
    pub fn add_rendered(&mut self, chunk: &[u8]) -> u64 {
        (lines(chunk)).fold(0, |lines, line| {
            let count = crate::transform::fields(line)
                .next()
                .and_then(|n| str::from_utf8(n).ok()?.parse().ok());
            let line = line.trim_ascii_start();
            let blank = line.iter().position(|&byte| byte == b' ');
            let key = blank.and_then(|at| line.get(at + 1..));
            self.add(key.unwrap_or_default(), count.unwrap_or(0));
            lines + 1
        })
    }

    /// Appends a `COUNT KEY` line a key to `out`, by count descending, then key ascending. A
    /// tally of many keys (`count-by 1`'s, about a key a line) is sorted in two halves, one on a
    /// thread of its own started and joined here, where the machine has a second core: its end
    /// is mostly the sort, and the workers that rendered the lines are done by then.
    pub fn render(self, out: &mut Vec<u8>) {
        let mut counts: Vec<_> = self
            .0
            .into_iter()
            .map(|(key, n)| (Reverse(n), key))
            .collect();
        let (mut first, mut second) = sorted_halves(&mut counts);
        // Sorted by count, equal counts are together: each is formatted once.
        let mut shown = (None, String::new());
        loop {
            // The two sorted halves merged as they are written.
            let half = match (first.first(), second.first()) {
                (Some(a), Some(b)) if b < a => &mut second,
                (Some(_), _) => &mut first,
                (None, _) => &mut second,
            };
            let Some(((Reverse(count), key), rest)) = half.split_first() else {
                break; // both halves written
            };
            *half = rest;
            if shown.0 != Some(*count) {
                shown = (Some(*count), format!("{count} "));
            }
            out.extend_from_slice(shown.1.as_bytes());
            out.extend_from_slice(key.as_ref());
            out.push(b'\n');
        }
    }
}

/// The fewest entries whose sort is split between two threads: below, a thread's start costs
/// more than half the sort saves.
const SORTED_APART: usize = 1 << 16;

/// `entries` sorted in two halves, each in order, the second on a thread of its own where the
/// machine has a core to spare (at a tally's end the workers are done) and there are enough of
/// them; else the first is all of them, sorted here. A thread that cannot start leaves its half
/// to this one.
fn sorted_halves<T: Ord + Send>(entries: &mut [T]) -> (&[T], &[T]) {
    if crate::cli::cores() < 2 || entries.len() < SORTED_APART {
        entries.sort_unstable();
        return (entries, &[]);
    }
    let (first, second) = entries.split_at_mut(entries.len() / 2);
    let sorted_apart = std::thread::scope(|scope| {
        let apart = std::thread::Builder::new().spawn_scoped(scope, || second.sort_unstable());
        first.sort_unstable();
        let joined = apart.map(|sorting| sorting.join());
        joined.map(|sorted| sorted.unwrap_or_else(|panic| std::panic::resume_unwind(panic)))
    });
    if sorted_apart.is_err() {
        second.sort_unstable();
    }
    (first, second)
}

/// A [`Counts`] key: its bytes in place, up to [`INLINE_KEY`] of them (the first byte their
/// length), else on the heap. Compared, ordered and hashed as its bytes, so that the map is
/// looked up with a `&[u8]`.
enum Key {
    Inline(u8, [u8; INLINE_KEY]),
    Heap(Box<[u8]>),
}

impl From<&[u8]> for Key {
    #[inline]
    fn from(bytes: &[u8]) -> Key {
        let mut inline = [0; INLINE_KEY];
        match inline.get_mut(..bytes.len()) {
            Some(start) => {
                start.copy_from_slice(bytes);
                Key::Inline(bytes.len() as u8, inline)
            }
            None => Key::Heap(bytes.into()),
        }
    }
}

impl AsRef<[u8]> for Key {
    #[inline]
    fn as_ref(&self) -> &[u8] {
        match self {
            Key::Inline(len, bytes) => &bytes[..usize::from(*len)],
            Key::Heap(bytes) => bytes,
        }
    }
}

impl Borrow<[u8]> for Key {
    #[inline]
    fn borrow(&self) -> &[u8] {
        self.as_ref()
    }
}

impl Hash for Key {
    #[inline]
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.as_ref().hash(state);
    }
}

impl PartialEq for Key {
    #[inline]
    fn eq(&self, other: &Key) -> bool {
        self.as_ref() == other.as_ref()
    }
}

impl Eq for Key {}

impl Key {
    /// The key's first 16 bytes as a number, zeros past a shorter key's end: keys that differ
    /// there are ordered by it as by their bytes, in two word compares rather than a call to
    /// memcmp (which was a fifth of count-by 1's instructions, sorting).
    #[inline]
    fn first_16(&self) -> u128 {
        let first = match self {
            Key::Inline(_, bytes) => bytes.first_chunk(),
            Key::Heap(bytes) => bytes.first_chunk(), // longer than INLINE_KEY
        };
        first.map_or(0, |&first| u128::from_be_bytes(first))
    }
}

impl Ord for Key {
    #[inline]
    fn cmp(&self, other: &Key) -> Ordering {
        let first = self.first_16().cmp(&other.first_16());
        first.then_with(|| self.as_ref().cmp(other.as_ref()))
    }
}

impl PartialOrd for Key {
    #[inline]
    fn partial_cmp(&self, other: &Key) -> Option<Ordering> {
        Some(self.cmp(other))
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
    let mut rendered = 0;
    for line in lines(chunk) {
        render_line_in_memory(tallying, tally, out, line)?;
        rendered += 1;
    }
    Ok(rendered)
}

/// The lines of `chunk` (as [`render_chunk`](Tallying::render_chunk) takes it), each without its
/// `\n`.
fn lines(chunk: &[u8]) -> impl Iterator<Item = &[u8]> {
    // On x86_64, memchr's SSE2 searcher, which every x86_64 has, made once for the chunk: the
    // one memchr picks at run time is called through a pointer, ~75 instructions a line more.
    #[cfg(target_arch = "x86_64")]
    let sse2 = memchr::arch::x86_64::sse2::memchr::One::new(b'\n');
    let next_newline = move |rest: &[u8]| {
        #[cfg(target_arch = "x86_64")]
        if let Some(sse2) = &sse2 {
            return sse2.find(rest);
        }
        memchr::memchr(b'\n', rest)
    };
    let mut rest = chunk;
    std::iter::from_fn(move || {
        let end = (!rest.is_empty()).then(|| next_newline(rest).unwrap_or(rest.len()))?;
        let line = &rest[..end];
        rest = rest.get(end + 1..).unwrap_or_default();
        Some(line)
    })
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
    use crate::transform::lines_in;

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

    /// `(count, key)` adds split in two at `cut`, each part counted apart and merged, rendered.
    fn counted_in_two(adds: &[(u64, Vec<u8>)], cut: usize) -> Vec<u8> {
        let part = |adds: &[(u64, Vec<u8>)]| {
            let mut counts = Counts::<RandomState>::default();
            adds.iter().for_each(|(n, key)| counts.add(key, *n));
            counts
        };
        let (earlier, later) = adds.split_at(cut.min(adds.len()));
        let mut counts = part(earlier);
        counts.merge(part(later));
        let mut out = Vec::new();
        counts.render(&mut out);
        out
    }

    /// What `sort | uniq -c | sort -k1,1nr -k2` writes of the adds, counted in a `BTreeMap`.
    fn plainly_counted(adds: &[(u64, Vec<u8>)]) -> Vec<u8> {
        let mut counts = BTreeMap::<&[u8], u64>::new();
        for (n, key) in adds {
            let total = counts.entry(key).or_default();
            *total = total.saturating_add(*n);
        }
        let mut sorted: Vec<_> = counts.into_iter().collect();
        sorted.sort_by_key(|&(key, n)| (Reverse(n), key));
        let lines = sorted
            .into_iter()
            .map(|(key, n)| [format!("{n} ").as_bytes(), key, b"\n"].concat());
        lines.collect::<Vec<_>>().concat()
    }

    /// Keys short and long (held in place up to `INLINE_KEY` bytes, on the heap past it), empty
    /// or holding NUL and blanks, each line's count at its end of the range.
    #[test]
    fn counts_render_by_count_then_key_and_read_back_what_they_render() {
        let long = vec![b'k'; INLINE_KEY + 1];
        let adds: Vec<(u64, Vec<u8>)> = vec![
            (1, b"b".to_vec()),
            (1, b"a".to_vec()),
            (2, b"a\0".to_vec()),
            (1, long[..INLINE_KEY].to_vec()),
            (1, long.clone()),
            (1, long.clone()),
            (1, Vec::new()),
            (u64::MAX, b"x y".to_vec()),
            (1, b"x y".to_vec()),
        ];
        let expected = plainly_counted(&adds);
        assert_eq!(counted_in_two(&adds, 4), expected);
        let mut read_back = Counts::<RandomState>::default();
        assert_eq!(read_back.add_rendered(&expected), lines_in(&expected));
        assert_eq!(read_back.add_rendered(b"zz key"), 1); // not a number: counted 0
        let mut out = Vec::new();
        read_back.render(&mut out);
        assert_eq!(out, [&expected[..], b"0 key\n"].concat());
    }

    proptest::proptest! {
        /// Random keys, around `INLINE_KEY`'s length, counted in two parts and merged: what a
        /// plain count of them all renders.
        #[test]
        fn counts_merged_render_what_a_plain_count_renders(
            adds in proptest::collection::vec(
                (0..3u64, proptest::collection::vec(proptest::sample::select(vec![0u8, b' ', b'a', b'b', 0xff]), 0..INLINE_KEY + 3)),
                0..60,
            ),
            cut in 0..60usize,
        ) {
            proptest::prop_assert_eq!(counted_in_two(&adds, cut), plainly_counted(&adds));
        }
    }

    /// Enough keys that their sort is split between two threads (where there are two cores),
    /// with counts and first bytes that repeat across the halves: the halves merged as they are
    /// written render what a plain count renders.
    #[test]
    fn counts_sorted_in_two_halves_render_in_one_order() {
        let adds: Vec<(u64, Vec<u8>)> = (0..SORTED_APART as u64 * 2 + 3)
            .map(|n| {
                (
                    n % 7,
                    format!("{:04} {}", n % 1000, n * 7919 % 65_536).into_bytes(),
                )
            })
            .collect();
        assert_eq!(
            counted_in_two(&adds, adds.len() / 3),
            plainly_counted(&adds)
        );
        let mut entries: Vec<u64> = (0..SORTED_APART as u64 + 1)
            .map(|n| n * 7919 % 1013)
            .collect();
        let mut expected = entries.clone();
        expected.sort();
        let (first, second) = sorted_halves(&mut entries);
        assert!(first.is_sorted() && second.is_sorted());
        let mut merged = [first, second].concat();
        merged.sort();
        assert_eq!(merged, expected);
    }
}
