//! The threads a `Reader` starts (docs/CONTRACT.md §12.7): on one thread none, on two a FILE's
//! part decoders and no thread between them and the reader. A test binary of its own, so that no
//! other test's threads are counted beside these, which take turns.

use std::fs::File;
use std::io::{BufRead, Read, Write};
use std::num::NonZeroUsize;
use std::sync::{Mutex, PoisonError};

use decompressed::Reader;

/// Held while a test counts threads, so that the other starts none meanwhile.
static COUNTING: Mutex<()> = Mutex::new(());

/// The threads of this process.
fn threads() -> usize {
    std::fs::read_dir("/proc/self/task").unwrap().count()
}

/// A regular file (one gzip member, and `bgzip`'s members) and a stream, each decoding to far
/// more than a reader's buffers hold, so that a thread of the crate's own would still be decoding
/// when the threads are counted after a first read; what each reads is then its text, whole.
#[test]
fn a_reader_on_one_thread_starts_no_thread() {
    // On a thread of its own, counted before and after alike, so that a hang fails the test.
    pipelines_testing::within("one thread's reads", read_on_one_thread);
}

fn read_on_one_thread() {
    let _counting = COUNTING.lock().unwrap_or_else(PoisonError::into_inner);
    // More than `DECODED_HERE` (256 KiB) compressed, so that the file is not decoded whole at
    // once: numbers that compress to about half their size.
    let numbers: Vec<u8> = (0..400_000u64)
        .flat_map(|n| format!("{}\n", n.wrapping_mul(2_654_435_761) % 1_000_003).into_bytes())
        .collect();
    let file = pipelines_testing::file(&pipelines_testing::gzip(&numbers));
    // `bgzip`'s members, which a regular file's walk decodes run by run.
    let members = pipelines_testing::file(&pipelines_testing::bgzf(&numbers));
    // Few compressed bytes, written whole into the pipe before it is read: no writer to count.
    let repeated = b"the same line\n".repeat(600_000);
    let stream = {
        let (reader, mut writer) = std::io::pipe().unwrap();
        writer
            .write_all(&pipelines_testing::gzip(&repeated))
            .unwrap();
        File::from(std::os::fd::OwnedFd::from(reader))
    };
    let sources = [
        ("file", file, &numbers),
        ("bgzip file", members, &numbers),
        ("stream", stream, &repeated),
    ];
    for (what, source, text) in sources {
        let before = threads();
        let mut reader = Reader::new(source, NonZeroUsize::MIN).unwrap();
        let first = reader.fill_buf().unwrap().len();
        assert!(first > 0, "{what}: nothing read");
        assert_eq!(threads(), before, "{what}: a thread started");
        let mut read = Vec::new();
        reader.read_to_end(&mut read).unwrap();
        assert!(read == *text, "{what}: {} bytes, not its text", read.len());
    }
}

/// A FILE of zstd frames, and one of `bgzip`'s members, on two threads: its parts decoded on two
/// threads of the crate's own, and put in order by the reading thread as it reads, not by a
/// thread of their own between them, which woke and was woken for every piece.
#[test]
fn a_files_parts_are_handed_on_by_the_reading_thread() {
    pipelines_testing::within("two threads' reads", read_parts_on_two_threads);
}

fn read_parts_on_two_threads() {
    let _counting = COUNTING.lock().unwrap_or_else(PoisonError::into_inner);
    let text: Vec<u8> = (0..1_600_000u64)
        .flat_map(|n| format!("line {n}\n").into_bytes())
        .collect();
    // Frames of a few MiB, as `pzstd` writes them, and 64 KiB members: far more than the
    // decoders hold ahead, so that both still decode when the threads are counted after a read.
    let frames: Vec<u8> = (text.chunks(2 << 20))
        .flat_map(|frame| zstd::encode_all(frame, 1).unwrap())
        .collect();
    let members = pipelines_testing::bgzf(&text);
    for (what, file) in [("zstd frames", frames), ("bgzip members", members)] {
        let before = threads();
        let two = NonZeroUsize::new(2).unwrap();
        let mut reader = Reader::new(pipelines_testing::file(&file), two).unwrap();
        assert!(
            !reader.fill_buf().unwrap().is_empty(),
            "{what}: nothing read"
        );
        // A thread bears its parent's name until it has run to name itself.
        pipelines_testing::wait_for(&format!("{what}: two decoders"), || {
            pipelines_testing::threads_named("decode frames") >= 2
        });
        assert_eq!(threads() - before, 2, "{what}: threads beside the decoders");
        let mut read = Vec::new();
        reader.read_to_end(&mut read).unwrap();
        assert!(read == text, "{what}: {} bytes, not its text", read.len());
        drop(reader);
        // Gone before the next count: the decoders end once the walk has.
        pipelines_testing::wait_for(&format!("{what}: decoders gone"), || threads() <= before);
    }
}
