//! A `Reader` on one thread decodes on the reading thread and starts none (docs/CONTRACT.md
//! §12.7): its own test binary, so that no other test's threads are counted beside it.

use std::fs::File;
use std::io::{BufRead, Read, Write};
use std::num::NonZeroUsize;

use decompressed::Reader;

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
