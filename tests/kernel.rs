//! Every chunk-rendering implementation of the kernel, byte for byte against the reference model,
//! and its line count. One set of tests, instantiated once per implementation by
//! `kernel_tests!`; an implementation this CPU does not run is skipped with a message.
//!
//! The block scans work on 64 bytes at a time and copy lines in 64-byte pieces, so inputs are
//! laid out over every length up to a few blocks with a newline or a space at every position,
//! which puts each on every block and piece boundary, at the first and the last byte.

mod common;

use common::reference;
use pipelines::kernel::{Implementation, render_chunk};
use proptest::prelude::*;

/// The lengths the exhaustive layouts run over: past four blocks and a line copy's overshoot.
const LENGTHS: std::ops::RangeInclusive<usize> = 0..=300;

/// Renders `chunk` with `implementation` and checks the bytes appended and the lines returned
/// against the reference model, twice: from an allocation of exactly the chunk's size (where
/// `valgrind` flags a read past its end) and from the front of a larger buffer whose next bytes
/// are newlines and spaces (where such a read would change the output). The output buffer
/// already holds bytes, which must stay as they were.
fn check(implementation: Implementation, chunk: &[u8]) {
    let exact = chunk.to_vec().into_boxed_slice();
    let padded = [chunk, b"\n \n  \n"].concat();
    for source in [&exact[..], &padded[..chunk.len()]] {
        check_once(implementation, source);
    }
}

fn check_once(implementation: Implementation, chunk: &[u8]) {
    let expected = reference(chunk);
    let expected_lines = expected.iter().filter(|&&byte| byte == b'\n').count() as u64;
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
    assert_eq!(lines, expected_lines, "{implementation:?} on {chunk:?}");
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

macro_rules! kernel_tests {
    ($name:ident, $implementation:expr) => {
        mod $name {
            use super::*;

            /// The implementation, or `None` with a message when this CPU does not run it.
            fn runnable() -> Option<Implementation> {
                let implementation = $implementation;
                if implementation.is_available() {
                    Some(implementation)
                } else {
                    eprintln!("skipped: this CPU does not run the {implementation:?} kernel");
                    None
                }
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

kernel_tests!(avx2, Implementation::Avx2);
kernel_tests!(sse2, Implementation::Sse2);
kernel_tests!(portable, Implementation::Portable);

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
