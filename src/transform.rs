//! [`Transform`]: what every strategy does to a line, the parameter each is generic over, as
//! ripgrep's searcher is over its `Sink`; and [`SpaceCount`], the toolkit's own, which the five
//! binaries run.
//!
//! A strategy decides how lines travel; the transform, how each is rendered. It is a type
//! parameter, not a trait object: each strategy is compiled for its transform, and a line's
//! rendering is inlined into the loop that frames it, so a strategy pays nothing a line for being
//! generic (the binaries' cachegrind counts are those of the code before the seam).

use std::process::ExitCode;
use std::time::Duration;

use bytes::{Buf, Bytes};

use crate::error::Error;
use crate::frame::reserve;
use crate::tally::{render_lines, render_owned};
use space_kernel::{self as kernel, SHORT_CHUNK, chunk_room};

/// How each line is rendered: a line, a chunk of lines, or a shared line, into output bytes.
///
/// A line's rendering is whatever its transform writes for it: the line changed, or several
/// lines, each ending in `\n`; or nothing at all, which drops the line (a grep's line that does
/// not match). A transform sees one line at a time, in no set order: `batched` renders chunks on
/// several threads at once, and puts the renderings back in input order itself.
///
/// Only [`render_line`](Transform::render_line) must be written, and
/// [`most_added`](Transform::most_added) where a rendering adds more than a `\n`; the chunk and
/// shared renderings follow from them, and a transform overrides them where it has a faster way,
/// as [`SpaceCount`] does with the kernel's block scan, and `examples/grep.rs` by searching a
/// chunk whole ([`lines_found`], [`lines_in`]). A transform that spends real work on a line says
/// so in [`cost_a_line`](Transform::cost_a_line); one whose filter exits with a status of its own
/// says it in [`exit_status`](Transform::exit_status). The strategies that move renderings
/// between threads ask for more: `pipeline` for `Send + 'static` (it moves the transform into its
/// rendering task), `batched` for `Sync` (its workers share it).
pub trait Transform {
    /// The most bytes a line's rendering adds to the line, its `\n` included: the room a strategy
    /// makes in the output before it renders a line, so that a line too long for the memory
    /// available is an error rather than an abort. Room, not a limit: a rendering may write more
    /// (one that grows with its line), and the output grows as any `Vec` does as it is written. A
    /// filter that keeps, shrinks or drops lines needs no more than the default, 1: the `\n` a
    /// last line without one gets. Of this, at most [`MOST_ROOM_ADDED`] is made ahead of each
    /// line, so that no value, however large, fails a short line.
    #[inline(always)]
    fn most_added(&self) -> usize {
        1
    }

    /// Roughly the CPU time a line's rendering takes beyond a scan of its bytes (all that the
    /// space count does): how a strategy that weighs where lines are rendered counts them.
    /// `batched` renders the lines its reading thread holds when the input idles or ends there,
    /// unless their work is more than a hand-off is worth, and then shares them out between its
    /// workers; and it cuts a regular file into ranges of about a millisecond of this work (at
    /// the mean length of the first lines read) where that is less than `--chunk-size`, so that
    /// its workers finish together. The default, zero, says a line costs no more than its bytes:
    /// chunks and ranges are their bytes alone.
    #[inline(always)]
    fn cost_a_line(&self) -> Duration {
        Duration::ZERO
    }

    /// Appends the rendering of `line`, given without its `\n`, to `out`, ending it with `\n`,
    /// or appends nothing to drop the line. `out` has room for `line.len()` more bytes and
    /// [`most_added`](Transform::most_added)'s, up to [`MOST_ROOM_ADDED`] of them.
    fn render_line(&self, out: &mut Vec<u8>, line: &[u8]);

    /// Appends the rendering of every line in `chunk` to `out` and returns how many lines that
    /// was, or fails if `out` cannot grow to hold them: a line too long for the memory available
    /// is an error, not an abort.
    ///
    /// `chunk` holds whole lines, each ending in `\n`, except that the last may lack it (the
    /// input's final line); an empty chunk holds none. By default, a line at a time.
    fn render_chunk(&self, out: &mut Vec<u8>, chunk: &[u8]) -> Result<u64, Error> {
        render_lines(self, &mut (), out, chunk)
    }

    /// The rendering of one line (without its `\n`) that `streamer` hands to its sink: the bytes
    /// [`render_line`](Transform::render_line) appends, as any [`Buf`], so that a transform that
    /// only adds bytes can pass the line on uncopied. Fails as
    /// [`render_chunk`](Transform::render_chunk) does. By default, a buffer of its own.
    fn render_shared(&self, line: Bytes) -> Result<impl Buf, Error> {
        render_owned(self, &mut (), &line)
    }

    /// The status a [`Filter`](crate::Filter) exits with when its run failed nowhere, asked once
    /// every line is rendered and written: success by default. A failure exits 1 whatever this
    /// says (docs/CONTRACT.md §5.2), and a reader gone away (`| head -1`) 0 (§5.1). A status that
    /// depends on the lines (a grep's "none matched") is a [`Tally`](crate::Tally)'s to keep,
    /// and [`Tallying::end`](crate::Tallying::end)'s to give.
    fn exit_status(&self) -> ExitCode {
        ExitCode::SUCCESS
    }
}

/// The most room [`most_added`](Transform::most_added) makes ahead of a line's rendering: room
/// made ahead only saves the output growing as a rendering writes, and more would fail a short
/// line where memory cannot hold it.
pub const MOST_ROOM_ADDED: usize = 64 * 1024;

/// How many lines `chunk` holds, as [`render_chunk`](Transform::render_chunk) counts them: its
/// newlines, and a last line without one.
pub fn lines_in(chunk: &[u8]) -> u64 {
    let unended = chunk.last().is_some_and(|&last| last != b'\n');
    (memchr::memchr_iter(b'\n', chunk).count() + usize::from(unended)) as u64
}

/// How many words `chunk` holds as `wc` counts them in the C locale: a word begins at a
/// printable byte (`!` to `~`) and ends at a space, `\t`, `\n`, `\v`, `\f` or `\r`; other bytes
/// neither begin nor end one. A word cut between two chunks is counted in each.
pub fn words_in(chunk: &[u8]) -> u64 {
    let printable = |byte: u8| byte.wrapping_sub(b'!') < 94; // b'!'..=b'~'
    let space = |byte: u8| byte == b' ' || byte.wrapping_sub(b'\t') < 5; // b'\t'..=b'\r'
    let neither = (chunk.iter()).fold(0, |any, &byte| {
        any | u8::from(!printable(byte) & !space(byte))
    });
    if neither != 0 {
        let (mut words, mut in_word) = (0, false);
        for &byte in chunk {
            match byte {
                _ if space(byte) => in_word = false,
                _ if printable(byte) && !in_word => (words, in_word) = (words + 1, true),
                _ => {} // neither begins nor ends a word
            }
        }
        return words;
    }
    // Each byte begins a word or ends one: a word begins at a printable byte after a space,
    // counted 255 bytes at a time into a byte, which the compiler vectorises (3 instructions a
    // byte, against 38 for the byte loop above).
    let (bytes, before) = (
        chunk.get(1..).unwrap_or_default(),
        chunk.get(..chunk.len().max(1) - 1),
    );
    let pairs = bytes
        .chunks(255)
        .zip(before.unwrap_or_default().chunks(255));
    let begun = pairs.map(|(bytes, before)| {
        let pairs = bytes.iter().zip(before);
        pairs.fold(0u8, |n, (&byte, &before)| {
            n + u8::from(printable(byte) & !printable(before))
        })
    });
    let first = chunk.first().is_some_and(|&byte| printable(byte));
    begun.map(u64::from).sum::<u64>() + u64::from(first)
}

/// The lines of `chunk` (as [`render_chunk`](Transform::render_chunk) takes it) that `find` finds
/// something in, each without its `\n`, in order: `find` searches the rest of the chunk whole,
/// from the first line not yet given, and returns where in it a match begins (as `memchr`'s
/// `memmem::Finder::find` does), and only around a match are its line's ends looked for. Lines
/// without a match are passed over at the searcher's speed, as `grep` passes over them. A match
/// belongs to the line it begins in: `find` should not match a `\n`.
pub fn lines_found<'a>(
    chunk: &'a [u8],
    mut find: impl FnMut(&[u8]) -> Option<usize> + 'a,
) -> impl Iterator<Item = &'a [u8]> + 'a {
    let mut next = 0; // where the first line not yet searched begins
    std::iter::from_fn(move || {
        let rest = chunk.get(next..)?;
        let found = next + find(rest).filter(|&at| at < rest.len())?; // none past the last line
        let start = memchr::memrchr(b'\n', &chunk[next..found]).map_or(next, |at| next + at + 1);
        let end = memchr::memchr(b'\n', &chunk[found..]).map_or(chunk.len(), |at| found + at);
        next = end + 1;
        Some(&chunk[start..end])
    })
}

/// The fields of `line` as awk splits a line by default: at runs of spaces and tabs, those at
/// either end skipped, so that a tally keyed by a field (`awk '{c[$9]++}'`,
/// `examples/count-by.rs`) finds it. The line ends at its first `\n`, or at the end of `line`.
///
/// The line is read 64 bytes at a time into a bit a byte of where its blanks are, and a field
/// begins at each non-blank bit after a blank one: [`nth`](Iterator::nth) passes over whole
/// blocks of fields by counting those bits, so that the ninth field takes one pass over its
/// first bytes rather than a search a field (which, with memchr's, was most of count-by's time).
pub fn fields(line: &[u8]) -> Fields<'_> {
    Fields(Split::new(line))
}

/// The `n`th field (from 0, as [`nth`](Iterator::nth) counts) of each line of `chunk` (as
/// [`render_chunk`](Transform::render_chunk) takes it), as [`fields`] splits a line, or the empty
/// field where a line has fewer: what a tally keyed by a field folds a chunk's lines into. One
/// pass finds a line's fields and its end alike, where [`lines_in`]'s newline search and
/// [`fields`] on each line would read its first bytes twice; on a CPU with AVX2, POPCNT and BMI1,
/// with code compiled for them (chosen at each call), as the kernel is.
pub fn nth_fields(chunk: &[u8], n: usize) -> impl Iterator<Item = &[u8]> {
    nth_fields_by(chunk, n, avx2_nth_field().unwrap_or(nth_field::<false>))
}

/// [`nth_fields`], each line's field found by `find`.
fn nth_fields_by(chunk: &[u8], n: usize, find: NthField) -> impl Iterator<Item = &[u8]> {
    let mut next = 0; // where the next line begins
    std::iter::from_fn(move || {
        let rest = chunk.get(next..).filter(|rest| !rest.is_empty())?;
        let (field, line_len) = find(rest, n);
        next += line_len + 1;
        Some(field)
    })
}

/// The `n`th field of the line that `rest` begins with (or the empty field), and the line's
/// length, its `\n` not counted.
type NthField = fn(&[u8], usize) -> (&[u8], usize);

/// An [`NthField`], its blocks read with AVX2 where `WIDE`: inlined whole into its caller, so
/// that it is compiled for the CPU features its caller is.
#[inline(always)]
fn nth_field<const WIDE: bool>(rest: &[u8], n: usize) -> (&[u8], usize) {
    let mut fields = Split::<WIDE>::new(rest);
    let field = fields.nth(n).unwrap_or_default();
    (field, fields.line_len())
}

/// [`nth_field`] compiled for AVX2, POPCNT and BMI1 (a 64-byte block in two compares, one
/// instruction to count its fields), where the CPU has them: an eighth fewer instructions a line
/// for `count-by 9` than the x86-64 baseline's code (results/2026-12-02-count-by-avx2.md).
#[cfg(target_arch = "x86_64")]
fn avx2_nth_field() -> Option<NthField> {
    #[target_feature(enable = "avx2,popcnt,bmi1")]
    fn nth_field_avx2(rest: &[u8], n: usize) -> (&[u8], usize) {
        nth_field::<true>(rest, n)
    }
    // The kernel's AVX2 renderer is compiled for the same three features and checks for them.
    let runs = kernel::Implementation::Avx2.is_available();
    // SAFETY: handed out only where the kernel's check found the features on this CPU.
    runs.then_some(|rest, n| unsafe { nth_field_avx2(rest, n) })
}

#[cfg(not(target_arch = "x86_64"))]
fn avx2_nth_field() -> Option<NthField> {
    None
}

/// The iterator [`fields`] returns.
#[derive(Debug, Clone)]
pub struct Fields<'a>(Split<'a, false>);

impl Fields<'_> {
    /// How long the line is, its `\n` not counted: up to its first `\n` or the end of `line`.
    pub fn line_len(&self) -> usize {
        self.0.line_len()
    }
}

impl<'a> Iterator for Fields<'a> {
    type Item = &'a [u8];

    #[inline(always)]
    fn next(&mut self) -> Option<&'a [u8]> {
        self.0.next()
    }

    #[inline]
    fn nth(&mut self, n: usize) -> Option<&'a [u8]> {
        self.0.nth(n)
    }
}

/// What [`Fields`] does, its blocks read 32 bytes at a time with AVX2 where `WIDE` (made only
/// where the CPU has AVX2: [`avx2_nth_field`]), else 16 with SSE2.
#[derive(Debug, Clone)]
struct Split<'a, const WIDE: bool> {
    line: &'a [u8],
    /// Where the block that `separators` and `starts` map begins.
    base: usize,
    /// The block's blanks, a bit a byte, and every byte from the line's end on (its `\n`, or past
    /// the end of `line`).
    separators: u64,
    /// The block's field starts not yet given.
    starts: u64,
    /// Where the line's `\n` is, once a block holds it.
    end: Option<usize>,
}

impl<'a, const WIDE: bool> Split<'a, WIDE> {
    #[inline(always)]
    fn new(line: &'a [u8]) -> Self {
        let (separators, end) = separators_at::<WIDE>(line, 0);
        Split {
            line,
            base: 0,
            separators,
            starts: starts(separators, 1),
            end,
        }
    }

    #[inline(always)]
    fn line_len(&self) -> usize {
        // Scanned on by the same blocks, not by a memchr call: the rest of a log line past its
        // key is a block or two, where the call cost more than the scan.
        let (mut base, mut end) = (self.base, self.end);
        while end.is_none() {
            base += 64;
            if base >= self.line.len() {
                return self.line.len();
            }
            end = separators_at::<WIDE>(self.line, base).1;
        }
        end.unwrap_or_default()
    }

    /// Moves on to the next block, or says there is none.
    #[inline(always)]
    fn next_block(&mut self) -> bool {
        let base = self.base + 64;
        if self.end.is_some() || base >= self.line.len() {
            return false;
        }
        let separator_before = self.separators >> 63;
        self.base = base;
        (self.separators, self.end) = separators_at::<WIDE>(self.line, base);
        self.starts = starts(self.separators, separator_before);
        true
    }

    /// The field that begins `at` (in the block at `base`): up to the first blank after it.
    #[inline(always)]
    fn field(&self, at: usize) -> &'a [u8] {
        let mut base = self.base;
        let mut separators = self.separators & (!0 << (at - base));
        while separators == 0 {
            // A field past its block ends at a blank, or at the line's end.
            base += 64;
            separators = separators_at::<WIDE>(self.line, base).0;
        }
        &self.line[at..base + separators.trailing_zeros() as usize]
    }
}

impl<'a, const WIDE: bool> Iterator for Split<'a, WIDE> {
    type Item = &'a [u8];

    #[inline(always)]
    fn next(&mut self) -> Option<&'a [u8]> {
        while self.starts == 0 {
            if !self.next_block() {
                return None;
            }
        }
        let at = self.base + self.starts.trailing_zeros() as usize;
        self.starts &= self.starts - 1;
        Some(self.field(at))
    }

    #[inline(always)]
    fn nth(&mut self, mut n: usize) -> Option<&'a [u8]> {
        loop {
            let here = self.starts.count_ones() as usize;
            if n < here {
                (0..n).for_each(|_| self.starts &= self.starts - 1);
                return self.next();
            }
            n -= here;
            self.starts = 0;
            if !self.next_block() {
                return None;
            }
        }
    }
}

/// Where fields begin in a block whose separators are `separators`: a byte that is not one after
/// one that is, the byte before the block one where `separator_before` is 1.
#[inline(always)]
fn starts(separators: u64, separator_before: u64) -> u64 {
    !separators & (separators << 1 | separator_before)
}

/// The separators of the 64 bytes of `line` from `at`, a bit a byte: its blanks, and every byte
/// from its first `\n` on, with that `\n`'s place; the bytes past the end of `line` are blanks.
#[inline(always)]
fn separators_at<const WIDE: bool>(line: &[u8], at: usize) -> (u64, Option<usize>) {
    let rest = line.get(at..).unwrap_or_default();
    let (blanks, newlines) = match rest.first_chunk() {
        Some(block) => blanks_and_newlines::<WIDE>(block),
        None => {
            let mut block = [b' '; 64];
            block[..rest.len()].copy_from_slice(rest);
            blanks_and_newlines::<WIDE>(&block)
        }
    };
    match newlines {
        0 => (blanks, None),
        _ => (
            blanks | !0 << newlines.trailing_zeros(),
            Some(at + newlines.trailing_zeros() as usize),
        ),
    }
}

/// The spaces and tabs of `block`, and its `\n`s, a bit a byte each: three compares a 32 bytes
/// with AVX2 where `WIDE`, a 16 with SSE2 (in every x86_64), as the kernel finds its spaces.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn blanks_and_newlines<const WIDE: bool>(block: &[u8; 64]) -> (u64, u64) {
    match WIDE {
        true => blanks_and_newlines_avx2(block),
        false => blanks_and_newlines_sse2(block),
    }
}

#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn blanks_and_newlines_avx2(block: &[u8; 64]) -> (u64, u64) {
    use std::arch::x86_64::{
        __m256i, _mm256_cmpeq_epi8, _mm256_loadu_si256, _mm256_movemask_epi8, _mm256_or_si256,
        _mm256_set1_epi8,
    };
    // Each mask passed through an empty `asm!`: left to see that two of them make a u64, LLVM
    // rebuilds them as 64 booleans and takes them apart bit by bit (2.6 times count-by's
    // instructions).
    let opaque = |mask: i32| {
        let mut bits = mask as u32;
        // SAFETY: the assembly is empty: it reads and writes `bits` where it is, nothing else.
        unsafe { std::arch::asm!("/* {0:e} */", inout(reg) bits, options(pure, nomem, nostack)) };
        bits
    };
    in_pieces(block, |piece: &[u8; 32]| {
        // SAFETY: a `Split<true>` is made only where the CPU has AVX2 (`avx2_nth_field`); the
        // unaligned load reads the 32 bytes of `piece`.
        let (blank, newline) = unsafe {
            let bytes = _mm256_loadu_si256(piece.as_ptr().cast::<__m256i>());
            let equal = |byte: u8| _mm256_cmpeq_epi8(bytes, _mm256_set1_epi8(byte as i8));
            (
                _mm256_movemask_epi8(_mm256_or_si256(equal(b' '), equal(b'\t'))),
                _mm256_movemask_epi8(equal(b'\n')),
            )
        };
        (opaque(blank), opaque(newline))
    })
}

#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn blanks_and_newlines_sse2(block: &[u8; 64]) -> (u64, u64) {
    use std::arch::x86_64::{
        _mm_cmpeq_epi8, _mm_loadu_si128, _mm_movemask_epi8, _mm_or_si128, _mm_set1_epi8,
    };
    in_pieces(block, |piece: &[u8; 16]| {
        // SAFETY: SSE2 is in every x86-64 CPU; the unaligned load reads the 16 bytes of `piece`.
        let (blank, newline) = unsafe {
            let bytes = _mm_loadu_si128(piece.as_ptr().cast());
            let equal = |byte: u8| _mm_cmpeq_epi8(bytes, _mm_set1_epi8(byte as i8));
            (
                _mm_movemask_epi8(_mm_or_si128(equal(b' '), equal(b'\t'))),
                _mm_movemask_epi8(equal(b'\n')),
            )
        };
        // The casts keep the 16 bits of each mask, one a byte.
        (u32::from(blank as u16), u32::from(newline as u16))
    })
}

/// The blanks and newlines of `block`, put together from those of each `LANES` bytes of it in
/// turn, as `masks` finds them.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn in_pieces<const LANES: usize>(
    block: &[u8; 64],
    masks: impl Fn(&[u8; LANES]) -> (u32, u32),
) -> (u64, u64) {
    let (mut blanks, mut newlines) = (0, 0);
    for (index, piece) in block.as_chunks::<LANES>().0.iter().enumerate() {
        let (blank, newline) = masks(piece);
        blanks |= u64::from(blank) << (LANES * index);
        newlines |= u64::from(newline) << (LANES * index);
    }
    (blanks, newlines)
}

/// The spaces and tabs of `block`, and its `\n`s, a bit a byte each, a byte at a time: where
/// there is no SSE2, and what the tests hold the SSE2 and AVX2 ones to.
#[cfg(any(test, not(target_arch = "x86_64")))]
fn blanks_and_newlines_plainly(block: &[u8; 64]) -> (u64, u64) {
    let bits = |is: fn(&u8) -> bool| {
        (block.iter().enumerate()).fold(0, |bits, (at, byte)| bits | u64::from(is(byte)) << at)
    };
    (
        bits(|&byte| byte == b' ' || byte == b'\t'),
        bits(|&byte| byte == b'\n'),
    )
}

#[cfg(not(target_arch = "x86_64"))]
#[inline(always)]
fn blanks_and_newlines<const WIDE: bool>(block: &[u8; 64]) -> (u64, u64) {
    blanks_and_newlines_plainly(block)
}

/// The toolkit's transform: `[spaces: N]` before every line, N its ASCII spaces, `>6` from seven
/// up (docs/CONTRACT.md §2), rendered by the kernel (SIMD chosen at run time).
#[derive(Debug, Clone, Copy, Default)]
pub struct SpaceCount;

impl Transform for SpaceCount {
    #[inline(always)]
    fn most_added(&self) -> usize {
        kernel::LINE_OVERHEAD
    }

    #[inline(always)]
    fn render_line(&self, out: &mut Vec<u8>, line: &[u8]) {
        kernel::render_line(out, line);
    }

    /// The kernel's block scan. A short chunk's rendering cannot outgrow memory, and the block
    /// kernel's room for it would make each of `pipeline`'s one-line messages a kilobyte
    /// allocation; a longer one gets the kernel's room fallibly first, and short lines that need
    /// more grow it a little.
    fn render_chunk(&self, out: &mut Vec<u8>, chunk: &[u8]) -> Result<u64, Error> {
        if chunk.len() >= SHORT_CHUNK {
            reserve(out, chunk_room(chunk.len()))?;
        }
        Ok(kernel::render_chunk(out, chunk))
    }

    /// The header, the line itself, uncopied, and a `\n`, chained.
    #[inline(always)]
    fn render_shared(&self, line: Bytes) -> Result<impl Buf, Error> {
        Ok(kernel::render_shared(line))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `T`'s own `most_added` and `render_line`, with every other method the trait's default.
    struct LineByLine<T>(T);

    impl<T: Transform> Transform for LineByLine<T> {
        fn most_added(&self) -> usize {
            self.0.most_added()
        }

        fn render_line(&self, out: &mut Vec<u8>, line: &[u8]) {
            self.0.render_line(out, line);
        }
    }

    /// A line between `<` and `>`: what a default chunk rendering makes of each line is plain.
    struct Angles;

    impl Transform for Angles {
        fn most_added(&self) -> usize {
            3
        }

        fn render_line(&self, out: &mut Vec<u8>, line: &[u8]) {
            out.push(b'<');
            out.extend_from_slice(line);
            out.extend_from_slice(b">\n");
        }
    }

    fn chunk<T: Transform>(transform: &T, chunk: &[u8]) -> (Vec<u8>, u64) {
        let mut out = Vec::new();
        let lines = transform.render_chunk(&mut out, chunk).unwrap();
        (out, lines)
    }

    fn shared<T: Transform>(transform: &T, line: &[u8]) -> Vec<u8> {
        let mut rendering = transform
            .render_shared(Bytes::copy_from_slice(line))
            .unwrap();
        rendering.copy_to_bytes(rendering.remaining()).to_vec()
    }

    #[test]
    fn the_default_chunk_rendering_is_a_line_at_a_time_the_last_without_its_newline() {
        for (input, output, lines) in [
            (&b""[..], &b""[..], 0),
            (b"\n", b"<>\n", 1),
            (b"\n\n", b"<>\n<>\n", 2),
            (b"a b", b"<a b>\n", 1),
            (b"a\nb c\n", b"<a>\n<b c>\n", 2),
            (b"a\n\nb", b"<a>\n<>\n<b>\n", 3),
        ] {
            assert_eq!(chunk(&Angles, input), (output.to_vec(), lines), "{input:?}");
        }
    }

    /// Each line twice, or dropped where it starts with `#`, saying it adds at most `most_added`.
    struct TwiceOrDropped {
        most_added: usize,
    }

    impl Transform for TwiceOrDropped {
        fn most_added(&self) -> usize {
            self.most_added
        }

        fn render_line(&self, out: &mut Vec<u8>, line: &[u8]) {
            if !line.starts_with(b"#") {
                out.extend_from_slice(&[line, b" ", line, b"\n"].concat());
            }
        }
    }

    /// A rendering may drop its line, or write more than `most_added` says; and no `most_added`,
    /// however large, fails a short line (it failed as "line too long for the memory available"
    /// when all of it was reserved ahead, and overflowed at `usize::MAX`).
    #[test]
    fn a_rendering_may_drop_its_line_or_outgrow_most_added_which_is_room_not_a_limit() {
        for most_added in [1, MOST_ROOM_ADDED + 1, 1 << 50, usize::MAX] {
            let transform = TwiceOrDropped { most_added };
            assert_eq!(
                chunk(&transform, b"ab\n#c\nd"),
                (b"ab ab\nd d\n".to_vec(), 3),
                "{most_added}"
            );
            assert_eq!(shared(&transform, b"ab"), b"ab ab\n", "{most_added}");
            assert_eq!(shared(&transform, b"#ab"), b"", "{most_added}");
        }
    }

    /// The lines of `chunk` that hold `pattern`, a line at a time.
    fn holding<'a>(chunk: &'a [u8], pattern: &[u8]) -> Vec<&'a [u8]> {
        let body = chunk.strip_suffix(b"\n").unwrap_or(chunk);
        let lines = (!chunk.is_empty()).then(|| body.split(|&byte| byte == b'\n'));
        let holds = |line: &&[u8]| {
            line.windows(pattern.len().max(1))
                .any(|w| w.starts_with(pattern))
        };
        lines
            .into_iter()
            .flatten()
            .filter(|line| pattern.is_empty() || holds(line))
            .collect()
    }

    /// A chunk searched whole finds the lines a search of each line finds, and counts its lines
    /// as the default chunk rendering does.
    #[test]
    fn lines_found_in_a_chunk_are_those_a_line_at_a_time_finds() {
        let chunks: [&[u8]; 9] = [
            b"",
            b"\n",
            b"ab",
            b"ab\n",
            b"\n\nab\n\n",
            b"xab\nab ab ab\nb\na\nabab",
            b"a\nb\n",
            b"ab\nxx\nxab\n\nyyab",
            b"\xffab\x00\r\n\nab\n",
        ];
        for chunk in chunks {
            for pattern in [&b""[..], b"a", b"ab", b"b\n", b"abab", b"zz"] {
                let finder = memchr::memmem::Finder::new(pattern);
                let found: Vec<&[u8]> = lines_found(chunk, |rest| finder.find(rest)).collect();
                // A match across a line's end belongs to the line it begins in.
                if !pattern.contains(&b'\n') {
                    assert_eq!(found, holding(chunk, pattern), "{chunk:?} {pattern:?}");
                }
            }
            assert_eq!(lines_in(chunk), self::chunk(&Angles, chunk).1, "{chunk:?}");
        }
        let across: Vec<&[u8]> =
            lines_found(b"ab\nc\n", |rest| memchr::memmem::find(rest, b"b\nc")).collect();
        assert_eq!(across, [b"ab"]);
    }

    /// The words of a chunk, as `wc` counts them: its runs of bytes between spaces (`\t` to `\r`
    /// and ` `) that hold a printable byte.
    fn words_plainly(chunk: &[u8]) -> u64 {
        let space = |byte: &u8| b" \t\n\x0b\x0c\r".contains(byte);
        let runs = chunk.split(space);
        runs.filter(|run| run.iter().any(|byte| (b'!'..=b'~').contains(byte)))
            .count() as u64
    }

    /// The plain split of a line, up to its first `\n`, at spaces and tabs, the empty fields
    /// dropped.
    fn fields_plainly(line: &[u8]) -> Vec<&[u8]> {
        let line = line.split(|&byte| byte == b'\n').next().unwrap_or_default();
        let split = line.split(|&byte| byte == b' ' || byte == b'\t');
        split.filter(|field| !field.is_empty()).collect()
    }

    proptest::proptest! {
        /// Lines of blanks, other bytes and letters, across several 64-byte blocks: their fields,
        /// one by one and by `nth`, are the plain split's; and chunks of every byte, or only
        /// printable ones and spaces (counted 255 bytes at a time), hold `wc`'s words.
        #[test]
        fn fields_and_words_are_a_plain_splits(
            line in proptest::collection::vec(proptest::sample::select(b" \t\t\r\n\0ab\xff".to_vec()), 0..300),
            printable in proptest::collection::vec(proptest::sample::select(b" \t\na~!\x7f".to_vec()), 0..600),
            n in 0..40usize,
        ) {
            let split = fields_plainly(&line);
            proptest::prop_assert_eq!(fields(&line).collect::<Vec<_>>(), split.clone());
            proptest::prop_assert_eq!(fields(&line).nth(n), split.get(n).copied());
            let mut after = fields(&line);
            let _ = after.nth(n);
            proptest::prop_assert_eq!(after.collect::<Vec<_>>(), split.get(n + 1..).unwrap_or_default());
            proptest::prop_assert_eq!(words_in(&line), words_plainly(&line));
            proptest::prop_assert_eq!(words_in(&printable), words_plainly(&printable));
            let block: [u8; 64] = std::array::from_fn(|at| *line.get(at).unwrap_or(&b'a'));
            let plainly = blanks_and_newlines_plainly(&block);
            proptest::prop_assert_eq!(blanks_and_newlines::<false>(&block), plainly);
            if avx2_nth_field().is_some() {
                proptest::prop_assert_eq!(blanks_and_newlines::<true>(&block), plainly);
            }
        }
    }

    proptest::proptest! {
        /// Chunks of lines with blanks across several 64-byte blocks, the last line with or
        /// without its `\n`: the `n`th field of each line is the plain split's, the empty field
        /// where a line has fewer, one a line, on the x86-64 baseline and with AVX2 alike.
        #[test]
        fn the_nth_fields_of_a_chunk_are_its_lines_plain_splits(
            chunk in proptest::collection::vec(proptest::sample::select(b"  \t\n\nab".to_vec()), 0..400),
            n in 0..12usize,
        ) {
            let lines = chunk.strip_suffix(b"\n").unwrap_or(&chunk);
            let plainly: Vec<&[u8]> = match chunk.is_empty() {
                true => vec![],
                false => (lines.split(|&byte| byte == b'\n'))
                    .map(|line| fields_plainly(line).get(n).copied().unwrap_or_default())
                    .collect(),
            };
            proptest::prop_assert_eq!(nth_fields(&chunk, n).collect::<Vec<_>>(), plainly.clone());
            for find in [Some(nth_field::<false> as NthField), avx2_nth_field()].into_iter().flatten() {
                proptest::prop_assert_eq!(nth_fields_by(&chunk, n, find).collect::<Vec<_>>(), plainly.clone());
            }
        }
    }

    /// A line's fields are those of a split at every space and tab with the empty ones dropped,
    /// as awk's default splitting makes them: runs of blanks, blanks at either end, other bytes
    /// (`\r`, `\v`, NUL) kept in their field.
    #[test]
    fn fields_are_a_split_at_blanks_without_the_empty_ones() {
        for line in [
            &b""[..],
            b" ",
            b"\t \t",
            b"a",
            b" a",
            b"a ",
            b"a b",
            b"  a \t\tbb  c ",
            b"a\rb\x0bc\x00 d\r",
        ] {
            assert_eq!(
                fields(line).collect::<Vec<_>>(),
                fields_plainly(line),
                "{line:?}"
            );
        }
    }

    #[test]
    fn the_default_shared_rendering_is_the_lines() {
        for line in [&b""[..], b"a", b"a b \r"] {
            let mut out = Vec::new();
            Angles.render_line(&mut out, line);
            assert_eq!(shared(&Angles, line), out);
        }
    }

    /// The space count's own chunk and shared renderings (the kernel's) agree with the trait's
    /// defaults over its line rendering, for chunks short and long (the kernel's room is made
    /// apart from `SHORT_CHUNK` bytes up).
    #[test]
    fn the_space_counts_renderings_are_its_line_rendering() {
        let text: Vec<u8> = (0..4 * SHORT_CHUNK)
            .map(|i| b"ab \n  x\t       y\n"[i * 7 % 17])
            .collect();
        let short = [0, 1, 2, 16, 63, 64, 65, SHORT_CHUNK - 1];
        for len in short.into_iter().chain([SHORT_CHUNK, text.len()]) {
            let input = &text[..len];
            assert_eq!(
                chunk(&SpaceCount, input),
                chunk(&LineByLine(SpaceCount), input),
                "{len} bytes"
            );
        }
        for line in [&b""[..], b" ", b"a b", b"       x", b"\xff \x00"] {
            assert_eq!(
                shared(&SpaceCount, line),
                shared(&LineByLine(SpaceCount), line)
            );
        }
    }
}
