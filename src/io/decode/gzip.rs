//! gzip members read as decoded bytes: every member to the input's end ([`GzipMembers::all`]),
//! or one member, the input left just after it ([`GzipMembers::one`]).
//!
//! Where ISA-L builds (Linux on x86_64 and aarch64, `cfg(isal)` from build.rs), its inflate
//! decodes them: on 2 cores it took 0.71-0.81 of zlib-rs's time on the harness's logs and man
//! pages (docs/DECOMPRESS.md). Elsewhere flate2's zlib-rs does. Both say the same of the same
//! input (CONTRACT §12.3): the bytes decoded before a fault come out first, and a member that
//! the input ends inside, a bad CRC-32 or length, or anything after a member that does not
//! begin another is a failure of decompressing.

#[cfg(not(isal))]
pub use flate2_members::GzipMembers;
#[cfg(isal)]
pub use isal_members::GzipMembers;

#[cfg(isal)]
mod isal_members {
    use std::io::{self, BufRead, Read};

    use isal_sys::igzip_lib::{
        ISAL_DECOMP_OK, ISAL_GZIP, inflate_state, isal_block_state_ISAL_BLOCK_FINISH,
        isal_block_state_ISAL_BLOCK_INPUT_DONE, isal_inflate, isal_inflate_init,
        isal_inflate_reset,
    };

    /// gzip members decoded by ISA-L's stateful inflate, which parses each member's header
    /// (every flag, its header CRC too) and checks its CRC-32 and length; what it does not do is
    /// done here: going on to the next member, and telling an input that ends inside a member,
    /// which it waits on for more, from the member's end.
    ///
    /// ISA-L's Rust reader (`isal-rs`) is not used: it waits for input to fill the whole buffer
    /// asked for before it returns (a live stream's decoded lines would wait too), and loops
    /// for ever at an input that ends inside a member.
    pub struct GzipMembers<R> {
        input: R,
        /// ISA-L's state, 66 KB of it its window and buffers: boxed, made once.
        state: Box<inflate_state>,
        /// Stop after the first member.
        one: bool,
        /// A fault found by a call that also decoded bytes, told at the next read.
        fault: Option<io::Error>,
    }

    // SAFETY: the state's pointers point into the input and output of a call, which ends before
    // `read` returns; between calls they point at nothing used.
    unsafe impl<R: Send> Send for GzipMembers<R> {}

    impl<R: BufRead> GzipMembers<R> {
        /// Decodes every member to the input's end.
        pub fn all(input: R) -> Self {
            Self::new(input, false)
        }

        /// Decodes the member the input begins with, and leaves the input at its end.
        pub fn one(input: R) -> Self {
            Self::new(input, true)
        }

        fn new(input: R, one: bool) -> Self {
            let mut state = Box::<inflate_state>::new_uninit();
            // SAFETY: `isal_inflate_init` sets every field a call reads (it is ISA-L's way to
            // make a state), and the box lives while it is used.
            let mut state = unsafe {
                isal_inflate_init(state.as_mut_ptr());
                state.assume_init()
            };
            state.crc_flag = ISAL_GZIP;
            GzipMembers {
                input,
                state,
                one,
                fault: None,
            }
        }

        /// The input, to tell its failures from the decoder's.
        pub fn get_mut(&mut self) -> &mut R {
            &mut self.input
        }

        fn member_ended(&self) -> bool {
            self.state.block_state == isal_block_state_ISAL_BLOCK_FINISH
        }

        /// The input's end inside a member, in zlib-rs's words: inside its deflate data (its
        /// header read, its last block not), or else in its header or trailer.
        fn cut_short(&self) -> io::Error {
            let in_blocks = self.state.wrapper_flag != 0
                && self.state.block_state < isal_block_state_ISAL_BLOCK_INPUT_DONE;
            match in_blocks {
                true => io::Error::new(io::ErrorKind::UnexpectedEof, "incomplete deflate stream"),
                false => io::Error::from(io::ErrorKind::UnexpectedEof),
            }
        }
    }

    /// What ISA-L's return code `code` says.
    fn fault(code: i32) -> io::Error {
        let what = match code {
            -1 => "invalid deflate block",
            -2 => "invalid deflate symbol",
            -3 => "invalid lookback distance",
            -4 => "invalid gzip header",
            -5 => "unsupported compression method",
            -6 => "incorrect checksum",
            _ => "corrupt deflate stream",
        };
        io::Error::new(io::ErrorKind::InvalidData, what)
    }

    impl<R: BufRead> Read for GzipMembers<R> {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            if let Some(fault) = self.fault.take() {
                return Err(fault);
            }
            if buf.is_empty() {
                return Ok(0);
            }
            loop {
                if self.member_ended() {
                    if self.one || self.input.fill_buf()?.is_empty() {
                        return Ok(0);
                    }
                    // SAFETY: the state is one `isal_inflate_init` made.
                    unsafe { isal_inflate_reset(&mut *self.state) };
                }
                let input = self.input.fill_buf()?;
                let ended = input.is_empty();
                let avail_in = u32::try_from(input.len()).unwrap_or(u32::MAX);
                let avail_out = u32::try_from(buf.len()).unwrap_or(u32::MAX);
                let state = &mut *self.state;
                state.next_in = input.as_ptr().cast_mut();
                state.avail_in = avail_in;
                state.next_out = buf.as_mut_ptr();
                state.avail_out = avail_out;
                // SAFETY: next_in and avail_in describe the input's buffer, which ISA-L only
                // reads; next_out and avail_out describe `buf`, which it writes at most
                // avail_out bytes of; both outlive the call, and nothing else touches them.
                let code = unsafe { isal_inflate(state) };
                let read = (avail_in - state.avail_in) as usize;
                let decoded = (avail_out - state.avail_out) as usize;
                (state.next_in, state.next_out) = (std::ptr::null_mut(), std::ptr::null_mut());
                self.input.consume(read);
                if code != ISAL_DECOMP_OK as i32 {
                    let fault = fault(code);
                    if decoded == 0 {
                        return Err(fault);
                    }
                    self.fault = Some(fault);
                }
                if decoded > 0 {
                    return Ok(decoded);
                }
                if self.member_ended() {
                    continue;
                }
                if ended {
                    return Err(self.cut_short());
                }
                if read == 0 {
                    // ISA-L took none of the input and made nothing of it: it can go no further.
                    return Err(fault(0));
                }
            }
        }
    }
}

#[cfg(not(isal))]
mod flate2_members {
    use std::io::{self, BufRead, Read};

    use flate2::bufread::{GzDecoder, MultiGzDecoder};

    /// gzip members decoded by flate2 (zlib-rs), one (`GzDecoder`) or all (`MultiGzDecoder`).
    pub enum GzipMembers<R> {
        /// One member.
        One(GzDecoder<R>),
        /// Every member.
        All(MultiGzDecoder<R>),
    }

    impl<R: BufRead> GzipMembers<R> {
        /// Decodes every member to the input's end.
        pub fn all(input: R) -> Self {
            GzipMembers::All(MultiGzDecoder::new(input))
        }

        /// Decodes the member the input begins with, and leaves the input at its end.
        pub fn one(input: R) -> Self {
            GzipMembers::One(GzDecoder::new(input))
        }

        /// The input, to tell its failures from the decoder's.
        pub fn get_mut(&mut self) -> &mut R {
            match self {
                GzipMembers::One(decoder) => decoder.get_mut(),
                GzipMembers::All(decoder) => decoder.get_mut(),
            }
        }
    }

    impl<R: BufRead> Read for GzipMembers<R> {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            match self {
                GzipMembers::One(decoder) => decoder.read(buf),
                GzipMembers::All(decoder) => decoder.read(buf),
            }
        }
    }
}
