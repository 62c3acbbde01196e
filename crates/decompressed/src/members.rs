//! A stream's BGZF members (`bgzip`'s output through a pipe or stdin) decoded on several threads
//! and handed on in the stream's order. Each member's header says its size (`bgzf.rs`), so a
//! scanner reading the stream cuts it into runs of whole members without decoding them, each
//! decoder decodes a run's members whole with libdeflate (`sized.rs`, as the pool does a FILE's),
//! and this thread hands the runs on in order.
//!
//! Live input (CONTRACT §12.2): a run is sent as soon as the next member has not come whole and
//! the source would wait for it, so a member's bytes come out once it has been written.
//!
//! Faults read as one decoder's (CONTRACT §12.3): from the first member that libdeflate does not
//! decode whole (damage, a size that lies), or the first bytes that are not a whole `bgzip`
//! member (another gzip member, a cut, garbage), the one decoder takes the rest: those bytes,
//! every later run's, the bytes the scanner holds, then the source.

use std::num::NonZeroUsize;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread;

use crossbeam_channel::{Receiver, Sender, bounded, unbounded};

use super::bgzf::{BGZIP_HEADER, bgzip_member, bgzip_size};
use super::format::Format;
use super::handoff::Out;
use super::sized::SizedMember;
use super::source::{Sniffed, held_first, read_unless_stopped};
use super::streams::one_decoder;
use super::walk::RUN;
use super::{BUFFER, Failure, ONE};

/// The most a run decodes to: a [`BUFFER`], the least storage a reader hands back to be decoded
/// into again, since each run's goes on to the reader uncopied where it can. Twice that (the most
/// a reader hands back) held twice the decoded bytes under way, and each run given a reader's
/// own buffer back made storage anew: 2,741 page faults against 1,876 for a `Reader` on two
/// threads over 32 MiB of `bgzip`'s members.
const MOST_DECODED: usize = BUFFER;

/// Runs under way per decoder, as in the pool: decoded, being decoded or being handed on.
const UNDER_WAY: usize = 4;

/// Decodes `input`, gzip from its start, into `out`: a stream of `bgzip`'s members on `threads`
/// decoders, any other gzip (or where no thread can be started) on this thread alone.
pub(super) fn decode(
    input: Sniffed,
    threads: NonZeroUsize,
    out: &mut impl Out,
) -> Result<(), Failure> {
    // Runs' storage goes back to the scanner, decoded buffers to the decoders, so that neither is
    // made anew, its pages faulted in, for each run.
    let (spare_run, spare_runs) = bounded(threads.get() * UNDER_WAY);
    let mut scanner = Scanner::new(input, spare_runs);
    let stop = Arc::new(AtomicBool::new(false));
    scanner.fill_to(BGZIP_HEADER, &stop);
    if !matches!(scanner.next(0), Next::Member(..)) {
        return to_one_decoder(scanner.held, scanner.input, out);
    }
    let (jobs, taken) = unbounded::<Job>();
    let (spare, spares) = bounded::<Vec<u8>>(threads.get() * UNDER_WAY);
    let decoders = (0..threads.get())
        .filter(|_| {
            let (taken, spares) = (taken.clone(), spares.clone());
            thread::Builder::new()
                .name("decode bgzf".to_owned())
                .spawn(move || decode_runs(&taken, &spares))
                .is_ok()
        })
        .count();
    // Runs sent and not yet handed on, with the one handed on and the one the scanner sends.
    let (send, items) = bounded(threads.get() * UNDER_WAY - 1);
    let (give, given) = bounded::<Scanner>(1);
    let scanning = thread::Builder::new().name("scan bgzf".to_owned()).spawn({
        let stop = stop.clone();
        move || {
            if let Ok(scanner) = given.recv() {
                scanner.scan(&jobs, &send, &stop);
            }
        }
    });
    if decoders == 0 || scanning.is_err() {
        return to_one_decoder(scanner.held, scanner.input, out);
    }
    let _ = give.send(scanner);
    Collector {
        items,
        spare,
        spare_run,
        stop,
    }
    .collect(out)
}

/// Decodes `held`, then the rest of `input`, with one decoder, as a gzip stream is decoded.
fn to_one_decoder(held: Vec<u8>, input: Sniffed, out: &mut impl Out) -> Result<(), Failure> {
    one_decoder(Format::Gzip, ONE, held_first(held, input), out)
}

/// A run of whole members, shared by its decoder and the collector, which hands it to the one
/// decoder where it does not decode whole.
type Run = Arc<Vec<u8>>;

/// A run of whole members to decode, and where to tell what it decoded to.
struct Job {
    run: Run,
    tell: Sender<RunDecoded>,
}

/// What a run decoded to: `bytes[..len]`, the members of `run[..whole]`.
struct RunDecoded {
    /// Made [`MOST_DECODED`] long, the most a run decodes to, and never shortened here.
    bytes: Vec<u8>,
    len: usize,
    whole: usize,
}

/// What the scanner sends the collector, in the stream's order.
enum Item {
    /// A run of whole members, and where its decoder tells what it decoded to.
    Run(Run, Receiver<RunDecoded>),
    /// The bytes held after the runs sent, and the rest of the source: the one decoder's, unless
    /// `ended` with no bytes held, the source's whole end.
    Rest {
        held: Vec<u8>,
        input: Sniffed,
        ended: bool,
    },
}

/// A decoder's thread: decodes the runs it takes until the scanner has gone.
fn decode_runs(jobs: &Receiver<Job>, spares: &Receiver<Vec<u8>>) {
    let mut sized = SizedMember::new();
    for Job { run, tell } in jobs {
        let mut decoded = RunDecoded {
            bytes: spares.try_recv().unwrap_or_default(),
            len: 0,
            whole: 0,
        };
        // Without memory for libdeflate's tables, the one decoder takes the run.
        if let Some(sized) = &mut sized {
            decoded.decode(&run, sized);
        }
        // The collector's is then the run's last holder, which can give its storage back.
        drop(run);
        let _ = tell.send(decoded);
    }
}

impl RunDecoded {
    /// Decodes the members of `run` one after another, as long as libdeflate decodes each whole.
    fn decode(&mut self, run: &[u8], sized: &mut SizedMember) {
        // Room for the most a run decodes to, at once: made zeroed by the allocator where the
        // storage is too small (a reader's own buffer, or none), else zeroed only past its length.
        match self.bytes.capacity() < MOST_DECODED {
            true => self.bytes = vec![0; MOST_DECODED],
            false => self.bytes.resize(MOST_DECODED, 0),
        }
        while let Some((member, size)) = bgzip_member(&run[self.whole..]) {
            let end = self.len + size;
            // Never short (the scanner bounds a run's decoded bytes): else the one decoder's.
            let Some(room) = self.bytes.get_mut(self.len..end) else {
                return;
            };
            if !sized.decode(member, room) {
                return;
            }
            self.len = end;
            self.whole += member.len();
        }
    }
}

/// What the bytes held begin with.
enum Next {
    /// A whole `bgzip` member of this many bytes, decoding to that many.
    Member(usize, usize),
    /// A part of what may be one: more is to be read.
    More,
    /// Anything else: the one decoder's.
    Other,
}

/// Reads the source and cuts it into runs of whole members.
struct Scanner {
    /// The source's bytes not yet sent.
    held: Vec<u8>,
    input: Sniffed,
    /// What a read reads into, zeroed once.
    read: Vec<u8>,
    ended: bool,
    /// A read failed: the one decoder reads again, and tells it.
    failed: bool,
    /// The storage of runs handed on.
    spare_runs: Receiver<Vec<u8>>,
}

impl Scanner {
    fn new(input: Sniffed, spare_runs: Receiver<Vec<u8>>) -> Self {
        Scanner {
            held: Vec::new(),
            input,
            read: vec![0; BUFFER],
            ended: false,
            failed: false,
            spare_runs,
        }
    }

    /// Sends runs of whole members until the source's end, bytes that are not a whole `bgzip`
    /// member, `stop`, or the collector gone; then the rest, to the one decoder.
    fn scan(mut self, jobs: &Sender<Job>, items: &Sender<Item>, stop: &AtomicBool) {
        // The run so far: `held[..end]`, decoding to `decoded` bytes.
        let (mut end, mut decoded) = (0, 0);
        loop {
            if stop.load(Ordering::Relaxed) {
                break;
            }
            let next = self.next(end);
            let send = end > 0
                && match next {
                    Next::Member(len, size) => {
                        end + len > RUN as usize || decoded + size > MOST_DECODED
                    }
                    Next::More => !self.input.get_ref().1.is_ready(),
                    Next::Other => true,
                };
            if send {
                if !self.send(end, jobs, items) {
                    return;
                }
                (end, decoded) = (0, 0);
                continue;
            }
            match next {
                Next::Member(len, size) => (end, decoded) = (end + len, decoded + size),
                Next::More => self.fill_to(self.held.len() + 1, stop),
                Next::Other => break,
            }
        }
        let ended = self.ended && !self.failed;
        let (held, input) = (self.held, self.input);
        let _ = items.send(Item::Rest { held, input, ended });
    }

    /// What `held[from..]` begins with.
    fn next(&self, from: usize) -> Next {
        let bytes = &self.held[from..];
        if let Some((member, size)) = bgzip_member(bytes) {
            return Next::Member(member.len(), size);
        }
        let part = match bytes.first_chunk() {
            Some(header) => bgzip_size(header).is_some_and(|size| bytes.len() < size),
            None => true,
        };
        match part && !self.ended {
            true => Next::More,
            false => Next::Other,
        }
    }

    /// Sends `held[..end]` to the decoders and to the collector: false when the collector has gone.
    fn send(&mut self, end: usize, jobs: &Sender<Job>, items: &Sender<Item>) -> bool {
        let mut rest = self.spare_runs.try_recv().unwrap_or_default();
        rest.clear();
        rest.extend_from_slice(&self.held[end..]);
        self.held.truncate(end);
        let run = Arc::new(std::mem::replace(&mut self.held, rest));
        let (tell, told) = bounded(1);
        let _ = jobs.send(Job {
            run: run.clone(),
            tell,
        });
        items.send(Item::Run(run, told)).is_ok()
    }

    /// Reads until `len` bytes are held, the source has ended or `stop` is set.
    fn fill_to(&mut self, len: usize, stop: &AtomicBool) {
        while self.held.len() < len && !self.ended {
            match read_unless_stopped(&mut self.input, &mut self.read, stop) {
                None => return,
                Some(Ok(0)) => self.ended = true,
                Some(Ok(read)) => self.held.extend_from_slice(&self.read[..read]),
                Some(Err(_)) => (self.ended, self.failed) = (true, true),
            }
        }
    }
}

/// Hands decoded runs on in the stream's order.
struct Collector {
    items: Receiver<Item>,
    spare: Sender<Vec<u8>>,
    spare_run: Sender<Vec<u8>>,
    /// Set once a run did not decode whole, or the collector has gone: the scanner then sends
    /// what it holds as the rest, or ends.
    stop: Arc<AtomicBool>,
}

impl Drop for Collector {
    /// The scanner may be waiting for an idle stream: it ends rather than reading on for a reader
    /// that has gone.
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

impl Collector {
    fn collect(self, out: &mut impl Out) -> Result<(), Failure> {
        while let Ok(item) = self.items.recv() {
            let (run, told) = match item {
                Item::Run(run, told) => (run, told),
                Item::Rest {
                    ended: true, held, ..
                } if held.is_empty() => return Ok(()),
                Item::Rest { held, input, .. } => return to_one_decoder(held, input, out),
            };
            // A decoder gone without a word (a panic) leaves the run to the one decoder.
            let decoded = told.recv().ok();
            let whole = decoded.as_ref().map_or(0, |decoded| decoded.whole);
            if let Some(decoded) = decoded
                && !self.hand_on(decoded, out)
            {
                return Ok(());
            }
            if whole < run.len() {
                return self.rest(run[whole..].to_vec(), out);
            }
            if let Ok(run) = Arc::try_unwrap(run) {
                let _ = self.spare_run.try_send(run);
            }
        }
        Err(scanner_gone())
    }

    /// Decodes `from`, every later run and the rest with one decoder.
    fn rest(self, mut from: Vec<u8>, out: &mut impl Out) -> Result<(), Failure> {
        self.stop.store(true, Ordering::Relaxed);
        while let Ok(item) = self.items.recv() {
            match item {
                Item::Run(run, _) => from.extend_from_slice(&run),
                Item::Rest { held, input, .. } => {
                    from.extend_from_slice(&held);
                    return to_one_decoder(from, input, out);
                }
            }
        }
        Err(scanner_gone())
    }

    /// Hands what a run decoded to on into `out`, then gives the storage it gets back to a
    /// decoder: false when the reader has gone.
    fn hand_on(&self, decoded: RunDecoded, out: &mut impl Out) -> bool {
        let Some(storage) = out.hand_over(decoded.bytes, decoded.len) else {
            return false;
        };
        let _ = self.spare.try_send(storage);
        true
    }
}

/// The scanner ended without handing on the source's rest: only a panic does.
fn scanner_gone() -> Failure {
    Failure::Decompressing(std::io::Error::other(
        "the BGZF scanner ended before the source's end",
    ))
}

#[cfg(test)]
mod tests {
    use std::fs::File;
    use std::io::{Read, Write};
    use std::time::Duration;

    use super::super::source::Undecoded;
    use super::super::tests::{bgzf_member, piped, random, streamed, text};
    use super::*;
    use pipelines_testing::{
        DEADLINE, IN_MEMORY, gzip, threads_named, wait_for, within, within_for,
    };
    use proptest::prelude::*;

    /// What the stream `source` decodes to on `threads` decoders, and how decoding ended.
    fn decoded_on(source: File, threads: usize) -> (Vec<u8>, Result<(), Failure>) {
        within("decoding a stream", move || {
            let threads = NonZeroUsize::new(threads).unwrap();
            let (mut pipe, decoding) = super::super::decode(source, threads).unwrap();
            let mut out = Vec::new();
            pipe.read_to_end(&mut out).unwrap();
            (out, decoding.finish())
        })
    }

    /// That `bytes` through a pipe decode on two and three decoders to what the one decoder makes
    /// of them, its words too; returns that.
    fn as_one_decoder(bytes: &[u8]) -> (Vec<u8>, String) {
        as_one_decoder_within(bytes, 0)
    }

    /// [`as_one_decoder`], but for `held` bytes more or fewer at the end. ISA-L's inflate holds
    /// back the last few symbols of an input cut inside a member, as many as its reads of the
    /// input leave short of a table lookup's bits, so that one decoder's bytes before a cut
    /// differ with how its input was read (a pipe's reads, or a FILE's).
    fn as_one_decoder_within(bytes: &[u8], held: usize) -> (Vec<u8>, String) {
        let (one, one_ended) = streamed(bytes);
        let one_ended = format!("{one_ended:?}");
        for threads in [2, 3] {
            let (out, ended) = decoded_on(piped(bytes.to_vec()), threads);
            let shorter = out.len().min(one.len());
            assert!(
                out[..shorter] == one[..shorter] && out.len().abs_diff(one.len()) <= held,
                "{threads} decoders: {} bytes, not {}",
                out.len(),
                one.len()
            );
            assert_eq!(format!("{ended:?}"), one_ended, "{threads} decoders");
        }
        (one, one_ended)
    }

    /// `text` as `bgzip` cuts it, a member for every 65,280 bytes.
    fn members_of(text: &[u8]) -> Vec<Vec<u8>> {
        text.chunks(65_280)
            .map(|chunk| bgzf_member(chunk, 0, None))
            .collect()
    }

    /// CONTRACT §12.4: a stream of `bgzip`'s members, more than a run for each decoder, decodes
    /// whole on several decoders, with `bgzip`'s end-of-file marker, members of bytes deflate
    /// cannot shrink, and a member that decodes to more than a run holds.
    #[test]
    fn a_stream_of_members_decodes_whole_on_several_decoders() {
        let text = text(0..300_000);
        let mut members = members_of(&text);
        let mut whole = text.clone();
        for n in 0..12 {
            let bytes = random(40_000 + n * 1000);
            members.push(bgzf_member(&bytes, 0, None));
            whole.extend_from_slice(&bytes);
        }
        members.push(bgzf_member(b"", 0, None));
        let (out, ended) = as_one_decoder(&members.concat());
        assert!(out == whole, "{} bytes of {}", out.len(), whole.len());
        assert_eq!(ended, "Ok(())");
    }

    /// The runs the scanner cuts `bytes` into, read from a regular file (always ready, so only a
    /// run's bounds cut it), and what it leaves to the one decoder: the bytes, and whether the
    /// source had ended.
    fn scanned(bytes: &[u8]) -> (Vec<Run>, (Vec<u8>, bool)) {
        let file = super::super::tests::file_of(bytes);
        let input = std::io::Cursor::new(Vec::new()).chain(Undecoded::new(file));
        let scanner = Scanner::new(input, unbounded().1);
        let ((jobs, taken), (items, sent)) = (unbounded(), unbounded());
        scanner.scan(&jobs, &items, &AtomicBool::new(false));
        drop(items);
        let (mut runs, mut rest) = (Vec::new(), None);
        for item in sent {
            match item {
                Item::Run(run, _) => runs.push(run),
                Item::Rest { held, ended, .. } => rest = Some((held, ended)),
            }
        }
        let jobs: Vec<Run> = taken.try_iter().map(|job: Job| job.run).collect();
        assert!(jobs == runs, "not every run sent to the decoders");
        (runs, rest.expect("no rest"))
    }

    /// CONTRACT §12.3: a read that fails after whole members is no end of the stream: the rest
    /// goes to the one decoder, which reads again and tells the failure, where an end would read
    /// as success.
    #[test]
    fn a_failed_read_is_not_the_streams_end() {
        let members = members_of(&text(0..1000)).concat();
        let directory = File::open(std::env::temp_dir()).unwrap();
        let input = std::io::Cursor::new(members).chain(Undecoded::new(directory));
        let ((jobs, _taken), (items, sent)) = (unbounded(), unbounded());
        Scanner::new(input, unbounded().1).scan(&jobs, &items, &AtomicBool::new(false));
        drop(items);
        let ended = sent.iter().find_map(|item| match item {
            Item::Rest { ended, .. } => Some(ended),
            Item::Run(..) => None,
        });
        assert_eq!(ended, Some(false));
    }

    /// The members `run` holds: each one's length and what it decodes to.
    fn members_in(mut run: &[u8]) -> Vec<(usize, usize)> {
        let mut members = Vec::new();
        while let Some((member, size)) = bgzip_member(run) {
            members.push((member.len(), size));
            run = &run[member.len()..];
        }
        assert!(
            run.is_empty(),
            "a run with {} bytes of no member",
            run.len()
        );
        members
    }

    /// A run is whole members, as many as fit in [`RUN`] compressed bytes and [`MOST_DECODED`]
    /// decoded ones: bytes deflate cannot shrink are cut by the first bound; text by the second,
    /// and members of 64 KiB of one byte repeated fill it exactly. What follows the last member
    /// is left to the one decoder.
    #[test]
    fn runs_are_whole_members_within_their_bounds() {
        let stored = random(1_500_000);
        let text = text(0..300_000);
        let repeated: Vec<Vec<u8>> = (vec![b'a'; 3_000_000].chunks(64 << 10))
            .map(|chunk| bgzf_member(chunk, 0, None))
            .collect();
        for (bytes, after) in [
            (members_of(&stored).concat(), &b""[..]),
            (members_of(&text).concat(), &b""[..]),
            (repeated.concat(), b"garbage"),
        ] {
            let (runs, rest) = scanned(&[&bytes[..], after].concat());
            assert!(runs.len() >= 2, "{} runs", runs.len());
            assert_eq!(rest, (after.to_vec(), true));
            let runs: Vec<Vec<(usize, usize)>> = runs.iter().map(|run| members_in(run)).collect();
            let all: Vec<(usize, usize)> = runs.concat();
            assert_eq!(
                all.iter().map(|member| member.0).sum::<usize>(),
                bytes.len()
            );
            for (n, run) in runs.iter().enumerate() {
                let (len, decoded) = run.iter().fold((0, 0), |(l, d), m| (l + m.0, d + m.1));
                assert!(len <= RUN as usize && decoded <= MOST_DECODED, "run {n}");
                if let Some(&(next_len, next_decoded)) = runs.get(n + 1).map(|next| &next[0]) {
                    let fits =
                        len + next_len <= RUN as usize && decoded + next_decoded <= MOST_DECODED;
                    assert!(!fits, "run {n} ends before a member that fits");
                }
            }
        }
    }

    /// CONTRACT §12.3: whatever is not a `bgzip` member, or does not decode whole, is the one
    /// decoder's from there on, and reads as it does: a plain gzip member after `bgzip`'s or
    /// before them, another subfield before `BC`, sizes that lie (covering the next member too,
    /// 100 bytes too long or too short), a byte flipped in the first, a middle or the last
    /// member, garbage after, a cut inside a header, inside deflate data and between members.
    #[test]
    fn what_is_not_a_whole_member_reads_as_one_decoder_reads_it() {
        let text = text(0..200_000);
        let chunks: Vec<&[u8]> = text.chunks(65_280).collect();
        let members = members_of(&text);
        let bytes = members.concat();
        let last = members.len() - 1;
        let mut cases = vec![
            [&bytes[..], &gzip(b"plain\n")].concat(),
            [&gzip(b"plain\n"), &bytes[..]].concat(),
            [&bytes[..], b"garbage\n"].concat(),
            bytes[..bytes.len() - members[last].len() + 10].to_vec(),
            bytes[..bytes.len() - members[last].len() / 2].to_vec(),
            bytes[..bytes.len() - members[last].len()].to_vec(),
        ];
        for (n, before, size) in [
            (3, 5, None),
            (4, 0, Some(members[4].len() + members[5].len())),
            (6, 0, Some(members[6].len() + 100)),
            (6, 0, Some(members[6].len() - 100)),
        ] {
            let mut lying = members.clone();
            lying[n] = bgzf_member(chunks[n], before, size);
            cases.push(lying.concat());
        }
        for n in [0, 7, last] {
            let mut flipped = members.clone();
            let middle = flipped[n].len() / 2;
            flipped[n][middle] ^= 0x55;
            cases.push(flipped.concat());
        }
        // A cut or a lie gives a prefix of the text; a flipped byte may decode to other bytes
        // before its CRC-32 tells it.
        for (n, case) in cases.iter().enumerate() {
            let cut = (3..6).contains(&n);
            let (out, _) = as_one_decoder_within(case, if cut { 2 * 258 } else { 0 });
            let cut_or_lying = (3..10).contains(&n);
            assert!(
                !cut_or_lying || text.starts_with(&out),
                "case {n}: not a prefix"
            );
        }
    }

    /// CONTRACT §12.2: members written one at a time into a pipe that stays open come out each as
    /// soon as it has come whole, on two decoders; then the end.
    #[test]
    fn a_slowly_written_stream_of_members_comes_out_member_by_member() {
        let (source, mut writer) = std::io::pipe().unwrap();
        let source = File::from(std::os::fd::OwnedFd::from(source));
        let two = NonZeroUsize::new(2).unwrap();
        let (mut pipe, _decoding) = super::super::decode(source, two).unwrap();
        let (send, came) = std::sync::mpsc::channel();
        thread::spawn(move || {
            let mut buf = vec![0; BUFFER];
            while let Ok(n @ 1..) = pipe.read(&mut buf) {
                if send.send(buf[..n].to_vec()).is_err() {
                    break;
                }
            }
        });
        // Bytes deflate stores as they are: one decoder streaming them would hand on the first
        // half of their member as soon as it came.
        let stored = random(60_000);
        for line in [&b"first\n"[..], &stored, b"second\n"] {
            let member = bgzf_member(line, 0, None);
            // Its first half, the rest a moment later: a member comes out only whole.
            let half = member.len() / 2;
            writer.write_all(&member[..half]).unwrap();
            let early = came.recv_timeout(Duration::from_millis(50));
            assert!(early.is_err(), "part of a member out before it was whole");
            writer.write_all(&member[half..]).unwrap();
            let mut out = Vec::new();
            // A whole member comes out at once: one held back fails in seconds.
            while out.len() < line.len() {
                match came.recv_timeout(IN_MEMORY) {
                    Ok(bytes) => out.extend_from_slice(&bytes),
                    Err(_) => panic!("a member of {} bytes held back", line.len()),
                }
            }
            assert!(out == line, "{} bytes", out.len());
        }
        // Decoded on the decoders, beside the scanner, not by the one decoder.
        assert!(threads_named("decode bgzf") >= 2 && threads_named("scan bgzf") >= 1);
        drop(writer);
        assert!(came.recv_timeout(DEADLINE).is_err(), "bytes after the end");
    }

    /// CONTRACT §12.2 and §12.3: a fault in the last member written is told, after the bytes
    /// before it, while the stream stays open and writes nothing more (the scanner, waiting for
    /// it, hands the collector the rest).
    #[test]
    fn a_fault_is_told_while_the_stream_stays_open() {
        let text = text(0..200_000);
        let mut members = members_of(&text);
        let last = members.len() - 1;
        let middle = members[last].len() / 2;
        members[last][middle] ^= 0x55;
        let (source, mut writer) = std::io::pipe().unwrap();
        let source = File::from(std::os::fd::OwnedFd::from(source));
        let two = NonZeroUsize::new(2).unwrap();
        let (mut pipe, decoding) = super::super::decode(source, two).unwrap();
        thread::spawn(move || {
            let _ = writer.write_all(&members.concat());
            // Open, and silent, until the test's end.
            thread::sleep(DEADLINE);
        });
        // Told at once, not at the stream's end: a decoder holding it fails in seconds.
        let (out, ended) = within_for(IN_MEMORY, "a fault on an open stream", move || {
            let mut out = Vec::new();
            let _ = pipe.read_to_end(&mut out);
            (out, decoding.finish())
        });
        let before = text.len() - text.chunks(65_280).last().unwrap().len();
        assert!(out.len() >= before && text.starts_with(&out[..before]));
        assert!(ended.is_err(), "{ended:?}");
    }

    /// CONTRACT §12.2: a whole member that is not one to decode apart (it decodes to more than a
    /// run's room), the last written, goes to the one decoder at once and comes out while its
    /// pipe stays open, not at the stream's next bytes.
    #[test]
    fn a_whole_member_left_to_one_decoder_comes_out_while_the_stream_stays_open() {
        let long = vec![b'a'; BUFFER + 1];
        let bytes = [
            members_of(&text(0..1000)).concat(),
            bgzf_member(&long, 0, None),
        ]
        .concat();
        let (source, mut writer) = std::io::pipe().unwrap();
        let source = File::from(std::os::fd::OwnedFd::from(source));
        let two = NonZeroUsize::new(2).unwrap();
        let (mut pipe, _decoding) = super::super::decode(source, two).unwrap();
        writer.write_all(&bytes).unwrap();
        let len = text(0..1000).len() + long.len();
        let out = within_for(IN_MEMORY, "a member left to one decoder", move || {
            let mut out = vec![0; len];
            pipe.read_exact(&mut out).map(|()| out)
        });
        assert!(out.unwrap().ends_with(&long));
        drop(writer);
    }

    /// A reader that goes ends the decoding, the scanner and decoders with it, the source still
    /// open.
    #[test]
    fn a_reader_that_goes_ends_the_decoding() {
        let members = members_of(&text(0..300_000)).concat();
        let (source, mut writer) = std::io::pipe().unwrap();
        let source = File::from(std::os::fd::OwnedFd::from(source));
        let two = NonZeroUsize::new(2).unwrap();
        let (mut pipe, decoding) = super::super::decode(source, two).unwrap();
        thread::spawn(move || {
            let _ = writer.write_all(&members);
            // Open until the test's end.
            thread::sleep(DEADLINE);
        });
        let pipe = within_for(IN_MEMORY, "the first bytes of a stream", move || {
            pipe.read_exact(&mut [0; 1000]).unwrap();
            pipe
        });
        drop(pipe);
        wait_for("decoding ended", || decoding.has_ended());
        assert!(decoding.finish().is_ok());
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(32))]

        /// Members cut anywhere or with a byte flipped anywhere read as the one decoder reads
        /// them: the same bytes before a flipped one's fault, and before a cut but for the last
        /// few symbols that ISA-L holds back of it (a match's 258 bytes at most, twice).
        #[test]
        fn damaged_members_read_as_one_decoder_reads_them(
            lines in 1..40_000u32,
            at in 0.0..1.0f64,
            flip in any::<bool>(),
        ) {
            let mut bytes = members_of(&text(0..lines)).concat();
            let at = ((bytes.len() as f64 * at) as usize).clamp(3, bytes.len() - 1);
            let held = match flip {
                true => {
                    bytes[at] ^= 0x55;
                    0
                }
                false => {
                    bytes.truncate(at);
                    2 * 258
                }
            };
            as_one_decoder_within(&bytes, held);
        }
    }
}
