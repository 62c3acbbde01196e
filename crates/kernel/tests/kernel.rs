//! Every chunk-rendering implementation of the kernel, byte for byte against the reference model,
//! and its line count. One set of tests, instantiated once per implementation by
//! `kernel_tests!`; an implementation this CPU does not run is skipped with a message: a failure
//! when `PIPELINES_NO_SKIPS=1` for those CI's machines have (AVX2 and the ones below it), a pass
//! with the message even then for AVX-512, which few of the machines here have
//! (`pipelines_testing::skip_optional`).
//!
//! The block scans work on 64 bytes at a time and copy lines in 64-byte pieces, so inputs are
//! laid out over every length up to a few blocks with a newline or a space at every position,
//! which puts each on every block and piece boundary, at the first and the last byte. Each input
//! is also rendered where a read past its end or a write past the room's is a crash: the chunk
//! placed so that the byte after it is on a page mapped with no access, into a room that ends at
//! such a page (`Guarded`).

use std::cell::RefCell;
use std::mem::MaybeUninit;
use std::ptr::{NonNull, null_mut};

use pipelines_testing::reference;
use proptest::prelude::*;
use rustix::mm::{MapFlags, MprotectFlags, ProtFlags, mmap_anonymous, mprotect, munmap};
use space_kernel::{Implementation, Rendered, render_chunk};

/// The lengths the exhaustive layouts run over: past four blocks and a line copy's overshoot.
const LENGTHS: std::ops::RangeInclusive<usize> = 0..=300;

/// Renders `chunk` with `implementation` and checks the bytes appended and the lines returned
/// against the reference model, from three places: an allocation of exactly the chunk's size
/// (where `valgrind` flags a read past its end), the front of a larger buffer whose next bytes are
/// newlines and spaces (where such a read would change the output), and memory that ends at an
/// unmapped page (where it crashes the test), there into rooms that end at one too.
fn check(implementation: Implementation, chunk: &[u8]) {
    let exact = chunk.to_vec().into_boxed_slice();
    let padded = [chunk, b"\n \n  \n"].concat();
    for source in [&exact[..], &padded[..chunk.len()]] {
        check_appended(implementation, source);
    }
    check_guarded(implementation, chunk);
}

/// [`check`] through `render_chunk`, into a buffer that already holds bytes, which must stay.
fn check_appended(implementation: Implementation, chunk: &[u8]) {
    let expected = reference(chunk);
    let mut out = b"earlier output".to_vec();
    let lines = implementation.render_chunk(&mut out, chunk);
    assert_eq!(
        &out[..14],
        b"earlier output",
        "{implementation:?} changed earlier output"
    );
    assert!(
        out[14..] == expected[..],
        "{implementation:?} on {chunk:?}:\n got {:?}\nwant {:?}",
        String::from_utf8_lossy(&out[14..]),
        String::from_utf8_lossy(&expected),
    );
    assert_eq!(
        lines,
        lines_in(&expected),
        "{implementation:?} on {chunk:?}"
    );
}

/// [`check`] through `render_into`, with the chunk and the room each ending at an unmapped page:
/// a room of exactly the rendering's size takes every line, and one a byte short every line but
/// the last.
fn check_guarded(implementation: Implementation, chunk: &[u8]) {
    let expected = reference(chunk);
    // The last line's start: every line before it fits in a room a byte short.
    let body = chunk.strip_suffix(b"\n").unwrap_or(chunk);
    let last_line = body
        .iter()
        .rposition(|&byte| byte == b'\n')
        .map_or(0, |newline| newline + 1);
    let short = reference(&chunk[..last_line]);
    GUARDED.with_borrow_mut(|(input, output)| {
        let source = input.place(chunk);
        let mut cases = vec![(expected.len(), chunk.len(), &expected)];
        if !expected.is_empty() {
            cases.push((expected.len() - 1, last_line, &short));
        }
        for (room_length, read, rendering) in cases {
            let room = output.tail(room_length);
            let rendered = implementation.render_into(source, room);
            let wanted = Rendered {
                read,
                written: rendering.len(),
                lines: lines_in(rendering),
            };
            assert_eq!(
                rendered, wanted,
                "{implementation:?} on {chunk:?} into {room_length} bytes"
            );
            // SAFETY: `render_into` initialised the first `written` bytes of the room.
            let written = unsafe { room[..rendered.written].assume_init_ref() };
            assert!(
                written == &rendering[..],
                "{implementation:?} on {chunk:?} into {room_length} bytes:\n got {:?}\nwant {:?}",
                String::from_utf8_lossy(written),
                String::from_utf8_lossy(rendering),
            );
        }
    });
}

/// Renders `chunk` placed before an unmapped page into rooms of every size from nothing to its
/// whole rendering, each ending at an unmapped page: each takes the lines that fit whole, in
/// order. The block kernels' fast path needs a block's worst case of room; at every room size
/// its bound is met exactly once, so a bound a byte short writes onto the page.
fn check_every_room(implementation: Implementation, chunk: &[u8]) {
    // Each line's end in the chunk, and its rendering's end.
    let mut ends = vec![(0, 0)];
    for line in chunk.split_inclusive(|&byte| byte == b'\n') {
        let (read, written) = ends[ends.len() - 1];
        ends.push((read + line.len(), written + reference(line).len()));
    }
    let expected = reference(chunk);
    GUARDED.with_borrow_mut(|(input, output)| {
        let source = input.place(chunk);
        for room_length in 0..=expected.len() {
            let fitting = ends
                .iter()
                .rposition(|&(_, written)| written <= room_length);
            let (read, written) = ends[fitting.expect("the empty prefix fits")];
            let room = output.tail(room_length);
            let rendered = implementation.render_into(source, room);
            let wanted = Rendered {
                read,
                written,
                lines: lines_in(&expected[..written]),
            };
            assert_eq!(
                rendered, wanted,
                "{implementation:?} on {chunk:?} into {room_length} bytes"
            );
            // SAFETY: `render_into` initialised the first `written` bytes of the room.
            let rendering = unsafe { room[..written].assume_init_ref() };
            assert!(
                rendering == &expected[..written],
                "{implementation:?} on {chunk:?} into {room_length} bytes"
            );
        }
    });
}

fn lines_in(rendering: &[u8]) -> u64 {
    rendering.iter().filter(|&&byte| byte == b'\n').count() as u64
}

thread_local! {
    /// Each test thread's memory for the chunk and for the room, grown as the inputs need.
    static GUARDED: RefCell<(Guarded, Guarded)> = RefCell::new((Guarded::new(0), Guarded::new(0)));
}

/// Memory whose usable bytes end where a page mapped with no access begins: touching the byte
/// after them is a segmentation fault.
struct Guarded {
    map: NonNull<u8>,
    usable: usize,
    page: usize,
}

impl Guarded {
    /// At least `usable` bytes before the guard page.
    fn new(usable: usize) -> Self {
        let page = rustix::param::page_size();
        let usable = usable.div_ceil(page).max(1) * page;
        // SAFETY: a new private anonymous mapping, which nothing else refers to.
        let map = unsafe {
            mmap_anonymous(
                null_mut(),
                usable + page,
                ProtFlags::READ | ProtFlags::WRITE,
                MapFlags::PRIVATE,
            )
        }
        .expect("mmap");
        // SAFETY: the mapping's last page, which nothing refers to yet.
        unsafe { mprotect(map.byte_add(usable), page, MprotectFlags::empty()) }.expect("mprotect");
        let map = NonNull::new(map.cast::<u8>()).expect("mmap returned null");
        Guarded { map, usable, page }
    }

    /// The last `length` bytes before the guard page, growing the memory if it is shorter.
    fn tail(&mut self, length: usize) -> &mut [MaybeUninit<u8>] {
        if length > self.usable {
            *self = Guarded::new(length.next_power_of_two());
        }
        // SAFETY: the `length` bytes before the guard page are mapped readable and writable,
        // and this borrow of `self` is their only reference.
        unsafe {
            std::slice::from_raw_parts_mut(
                self.map.add(self.usable - length).as_ptr().cast(),
                length,
            )
        }
    }

    /// `bytes` copied to end just before the guard page.
    fn place(&mut self, bytes: &[u8]) -> &[u8] {
        let tail = self.tail(bytes.len());
        tail.write_copy_of_slice(bytes)
    }
}

impl Drop for Guarded {
    fn drop(&mut self) {
        // SAFETY: the whole mapping made in `new`, to which no reference outlives `self`.
        unsafe { munmap(self.map.as_ptr().cast(), self.usable + self.page) }.expect("munmap");
    }
}

/// Bytes of input, weighted towards the ones the kernel tells apart and the ones it must pass
/// through untouched.
fn input() -> impl Strategy<Value = Vec<u8>> {
    let byte = prop_oneof![
        4 => Just(b' '),
        2 => Just(b'\n'),
        4 => Just(b'x'),
        1 => Just(b'\r'),
        1 => Just(0u8),
        1 => Just(0xff),
        1 => any::<u8>(),
    ];
    prop::collection::vec(byte, 0..700)
}

/// Whether CI's machines are expected to run an implementation: if so, its tests fail where the
/// CPU lacks it under `PIPELINES_NO_SKIPS=1`; if not, they pass with a message.
#[derive(Clone, Copy)]
enum Expected {
    InCi,
    Optional,
}

macro_rules! kernel_tests {
    ($name:ident, $implementation:expr, $expected:expr) => {
        mod $name {
            use super::*;

            /// The implementation, or `None` with a message when this CPU does not run it (a
            /// panic instead when `PIPELINES_NO_SKIPS=1`, unless it is optional).
            fn runnable() -> Option<Implementation> {
                let implementation = $implementation;
                if implementation.is_available() {
                    return Some(implementation);
                }
                let why = format!("this CPU does not run the {implementation:?} kernel");
                match $expected {
                    Expected::InCi => pipelines_testing::skip(&why),
                    Expected::Optional => pipelines_testing::skip_optional(&why),
                }
                None
            }

            #[test]
            fn a_newline_or_a_space_at_every_position() {
                let Some(implementation) = runnable() else {
                    return;
                };
                for length in LENGTHS {
                    for position in 0..length {
                        for (fill, mark) in [(b'x', b'\n'), (b' ', b'\n'), (b'x', b' ')] {
                            let mut chunk = vec![fill; length];
                            chunk[position] = mark;
                            check(implementation, &chunk);
                            // The same, ended by a newline: the last line is a whole one.
                            chunk.push(b'\n');
                            check(implementation, &chunk);
                        }
                    }
                }
            }

            /// Lines of every length from 0 to 70 bytes back to back, each with a count of
            /// spaces that goes round 0 to 9, so line ends and counts fall everywhere in a block.
            #[test]
            fn lines_of_every_short_length() {
                let Some(implementation) = runnable() else {
                    return;
                };
                for first in 0..70 {
                    let mut chunk = Vec::new();
                    for length in (first..70).chain(0..first) {
                        let mut line = vec![b'-'; length];
                        for position in (0..length).step_by(3).take(length % 10) {
                            line[position] = b' ';
                        }
                        chunk.extend_from_slice(&line);
                        chunk.push(b'\n');
                    }
                    check(implementation, &chunk);
                    check(implementation, &chunk[..chunk.len() - 1]);
                }
            }

            #[test]
            fn only_spaces_and_only_newlines() {
                let Some(implementation) = runnable() else {
                    return;
                };
                for length in LENGTHS {
                    check(implementation, &vec![b' '; length]);
                    check(implementation, &vec![b'\n'; length]);
                }
            }

            /// Dense blocks into every room size: a block of newlines after a line of seven
            /// spaces begun in the block before (the most header bytes a block can add), lines
            /// of every short length, and lines long and short.
            #[test]
            fn every_room_size() {
                let Some(implementation) = runnable() else {
                    return;
                };
                let worst_block = [&[b'x'; 57][..], &[b' '; 7], &[b'\n'; 200]].concat();
                let short_lines: Vec<u8> = (0..40)
                    .flat_map(|length| {
                        [&vec![b' '; length % 9][..], &vec![b'-'; length], b"\n"].concat()
                    })
                    .collect();
                let mixed = [&[b'y'; 150][..], b" a b c d e f g\n\n", &[b'z'; 70], b"\n"]
                    .concat()
                    .repeat(3);
                for chunk in [&worst_block[..], &short_lines, &mixed, &[b'\n'; 300]] {
                    check_every_room(implementation, chunk);
                }
            }

            /// Lines far longer than a block and than a chunk, with spaces scattered over them.
            #[test]
            fn lines_longer_than_chunks() {
                let Some(implementation) = runnable() else {
                    return;
                };
                for spaces in [0, 6, 7, 1000] {
                    let mut line = vec![b'y'; 300_000 + spaces];
                    for position in (0..line.len())
                        .step_by(line.len() / spaces.max(1))
                        .take(spaces)
                    {
                        line[position] = b' ';
                    }
                    check(implementation, &line);
                    let two_lines = [&line[..], b"\n", &line[..], b"\n"].concat();
                    check(implementation, &two_lines);
                }
            }

            /// The bytes that pass through untouched, and the contract's examples.
            #[test]
            fn bytes_that_pass_through() {
                let Some(implementation) = runnable() else {
                    return;
                };
                for chunk in [
                    &b"a b\r\n"[..],
                    b"\0 \0\n\xff \xfe\n",
                    b"\t\tx\n\x0b\x0c\xa0\n",
                    b"\r\r\r",
                    b"\n",
                    b"",
                    b"a b",
                    b"       x\n",
                    b"hello world\n\n       x\n\t\tx\na b",
                ] {
                    check(implementation, chunk);
                }
            }

            proptest! {
                #[test]
                fn matches_the_reference_model(chunk in input()) {
                    if let Some(implementation) = runnable() {
                        check(implementation, &chunk);
                    }
                }
            }
        }
    };
}

kernel_tests!(avx512, Implementation::Avx512, Expected::Optional);
kernel_tests!(avx2, Implementation::Avx2, Expected::InCi);
kernel_tests!(sse2, Implementation::Sse2, Expected::InCi);
kernel_tests!(portable, Implementation::Portable, Expected::InCi);

/// The dispatching entry point renders as the implementations do.
#[test]
fn the_dispatching_entry_point_renders_alike() {
    let fastest = Implementation::available()[0];
    let chunk = b"a b c\n\n       x\r\n\xff";
    let (mut dispatched, mut forced) = (Vec::new(), Vec::new());
    assert_eq!(
        render_chunk(&mut dispatched, chunk),
        fastest.render_chunk(&mut forced, chunk)
    );
    assert_eq!(dispatched, forced);
    assert_eq!(dispatched, reference(chunk));
}
