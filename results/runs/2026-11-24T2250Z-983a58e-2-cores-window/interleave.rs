//! Round four's question: is a line-at-a-time window walk slow for its branches or for its chain
//! (each line's window is loaded from where the last line's newline was found)? The walk's fast
//! step alone (AVX-512, 64-byte window; a line longer than its window is cut there, so the output
//! is not a rendering: timing only) over K independent parts of each 256 KiB chunk at once, K =
//! 1, 2, 4, beside the shipped block walk's `render_chunk` on the same chunks. Wall time of each
//! pass over the file, rounds interleaved.
use std::arch::x86_64::*;
use std::time::Instant;
use pipelines::kernel::Implementation;

static HEADERS: [[u8; 16]; 65] = {
    let mut s = [[0u8; 16]; 65];
    let mut n = 0;
    while n < 65 {
        let h: &[u8] = if n < 7 { b"[spaces: 0]" } else { b"[spaces: >6]" };
        let mut i = 0;
        while i < h.len() { s[n][i] = h[i]; i += 1; }
        if n < 7 { s[n][9] = b'0' + n as u8; }
        s[n][15] = h.len() as u8;
        n += 1;
    }
    s
};

#[inline(always)]
unsafe fn line(from: &mut *const u8, to: &mut *mut u8) {
    unsafe {
        let w = _mm512_loadu_si512(from.cast());
        let nl = _mm512_cmpeq_epi8_mask(w, _mm512_set1_epi8(b'\n' as i8));
        let sp = _mm512_cmpeq_epi8_mask(w, _mm512_set1_epi8(b' ' as i8));
        let end = if nl == 0 { 63 } else { nl.trailing_zeros() as usize };
        let c = (sp & nl.wrapping_sub(1)).count_ones() as usize;
        let h = &HEADERS[c];
        _mm_storeu_si128(to.cast(), _mm_loadu_si128(h.as_ptr().cast()));
        let t = to.add(h[15] as usize);
        _mm512_storeu_si512(t.cast(), w);
        *to = t.add(end + 1);
        *from = from.add(end + 1);
    }
}

/// One line rendered whole: a line longer than its window is looked through a window at a time,
/// its header written when its end is found, and its bytes copied in 64-byte pieces. `None` where
/// its windows would pass `end` (the caller renders the rest another way).
#[inline(always)]
unsafe fn whole_line<const TWO: bool>(from: &mut *const u8, to: &mut *mut u8, end: *const u8) -> Option<()> {
    unsafe {
        let newline = _mm512_set1_epi8(b'\n' as i8);
        let space = _mm512_set1_epi8(b' ' as i8);
        let w = _mm512_loadu_si512(from.cast());
        let nl = _mm512_cmpeq_epi8_mask(w, newline);
        let sp = _mm512_cmpeq_epi8_mask(w, space);
        if TWO && from.add(128) <= end {
            // Two windows, branch-free for lines up to 128 bytes.
            let w2 = _mm512_loadu_si512(from.add(64).cast());
            let nl2 = _mm512_cmpeq_epi8_mask(w2, newline);
            let sp2 = _mm512_cmpeq_epi8_mask(w2, space);
            let nl128 = u128::from(nl) | u128::from(nl2) << 64;
            if nl128 != 0 {
                let sp128 = u128::from(sp) | u128::from(sp2) << 64;
                let length = nl128.trailing_zeros() as usize + 1;
                let h = &HEADERS[(sp128 & nl128.wrapping_sub(1)).count_ones().min(64) as usize];
                _mm_storeu_si128(to.cast(), _mm_loadu_si128(h.as_ptr().cast()));
                let t = to.add(h[15] as usize);
                _mm512_storeu_si512(t.cast(), w);
                _mm512_storeu_si512(t.add(64).cast(), w2);
                *to = t.add(length);
                *from = from.add(length);
                return Some(());
            }
        } else if nl != 0 {
            let length = nl.trailing_zeros() as usize + 1;
            let h = &HEADERS[(sp & nl.wrapping_sub(1)).count_ones() as usize];
            _mm_storeu_si128(to.cast(), _mm_loadu_si128(h.as_ptr().cast()));
            let t = to.add(h[15] as usize);
            _mm512_storeu_si512(t.cast(), w);
            *to = t.add(length);
            *from = from.add(length);
            return Some(());
        }
        let mut count = sp.count_ones() as usize;
        let mut at = *from;
        let (nl, sp) = loop {
            at = at.add(64);
            if at.add(64) > end { return None; }
            let w = _mm512_loadu_si512(at.cast());
            let nl = _mm512_cmpeq_epi8_mask(w, newline);
            let sp = _mm512_cmpeq_epi8_mask(w, space);
            if nl != 0 { break (nl, sp); }
            count += sp.count_ones() as usize;
        };
        count += (sp & nl.wrapping_sub(1)).count_ones() as usize;
        let length = at as usize - *from as usize + nl.trailing_zeros() as usize + 1;
        let h = &HEADERS[count.min(7)];
        _mm_storeu_si128(to.cast(), _mm_loadu_si128(h.as_ptr().cast()));
        let t = to.add(h[15] as usize);
        let mut piece = 0;
        while piece < length {
            _mm512_storeu_si512(t.add(piece).cast(), _mm512_loadu_si512(from.add(piece).cast()));
            piece += 64;
        }
        *to = t.add(length);
        *from = from.add(length);
        Some(())
    }
}

/// A chunk rendered whole in K parts (each starting after a newline) taken in lockstep, each part
/// into its own output; the parts' last lines, whose windows would pass the chunk, by the block
/// walk. Returns each part's rendering's length.
#[target_feature(enable = "avx512f,avx512bw,popcnt,bmi1,bmi2")]
unsafe fn render_parts<const K: usize, const TWO: bool>(chunk: &[u8], outs: &mut [Vec<u8>; K]) -> [usize; K] {
    unsafe {
        let mut starts = [0; K];
        for k in 1..K {
            let guess = k * chunk.len() / K;
            starts[k] = memchr(&chunk[guess..]).map_or(chunk.len(), |i| guess + i + 1);
        }
        let ends: [usize; K] = std::array::from_fn(|k| if k + 1 < K { starts[k + 1] } else { chunk.len() });
        let base = chunk.as_ptr();
        let window_end = base.add(chunk.len());
        let mut from: [*const u8; K] = std::array::from_fn(|k| base.add(starts[k]));
        let mut to: [*mut u8; K] = std::array::from_fn(|k| outs[k].as_mut_ptr());
        let part_end: [*const u8; K] = std::array::from_fn(|k| base.add(ends[k]));
        // Lockstep while every part has a line whose first window lies in the chunk.
        let last = window_end.wrapping_sub(64);
        'lockstep: while (0..K).all(|k| from[k] < part_end[k] && from[k] <= last) {
            for k in 0..K {
                if whole_line::<TWO>(&mut from[k], &mut to[k], window_end).is_none() { break 'lockstep; }
            }
        }
        let mut lengths = [0; K];
        for k in 0..K {
            // Each part alone, then its rest (the chunk's last window) by the block walk.
            while from[k] < part_end[k] && from[k] <= last {
                if whole_line::<TWO>(&mut from[k], &mut to[k], window_end).is_none() { break; }
            }
            let mut rendered = to[k] as usize - outs[k].as_ptr() as usize;
            let rest = &chunk[from[k] as usize - base as usize..ends[k]];
            if !rest.is_empty() {
                outs[k].set_len(rendered);
                Implementation::Avx512.render_chunk(&mut outs[k], rest);
                rendered = outs[k].len();
            }
            lengths[k] = rendered;
        }
        lengths
    }
}

fn memchr(bytes: &[u8]) -> Option<usize> { bytes.iter().position(|&b| b == b'\n') }

#[target_feature(enable = "avx512f,avx512bw,popcnt,bmi1,bmi2")]
unsafe fn streams<const K: usize>(chunk: &[u8], outs: &mut [Vec<u8>; K]) -> usize {
    unsafe {
        let part = (chunk.len() - 64) / K;
        let mut from = [std::ptr::null(); K];
        let mut to = [std::ptr::null_mut(); K];
        for k in 0..K { from[k] = chunk.as_ptr().add(k * part); to[k] = outs[k].as_mut_ptr(); }
        // Every part's lines taken in lockstep until one part runs out.
        let ends: [*const u8; K] = std::array::from_fn(|k| chunk.as_ptr().add((k + 1) * part));
        while (0..K).all(|k| from[k] < ends[k]) {
            for k in 0..K { line(&mut from[k], &mut to[k]); }
        }
        to[0] as usize - outs[0].as_ptr() as usize
    }
}

fn main() {
    let path = std::env::args().nth(1).unwrap();
    let data = std::fs::read(path).unwrap();
    let chunks: Vec<&[u8]> = data.chunks(256 * 1024).filter(|c| c.len() > 1024).collect();
    let room = |k: usize| vec![0u8; 256 * 1024 * 14 / k + 4096];
    let mut outs1 = [room(1)];
    let mut outs2 = [room(2), room(2)];
    let mut outs4 = [room(4), room(4), room(4), room(4)];
    let mut out = Vec::with_capacity(256 * 1024 * 3);
    // The parts' renderings, joined, against the block walk's, chunk by chunk.
    for c in &chunks {
        out.clear();
        Implementation::Avx512.render_chunk(&mut out, c);
        for lengths in [unsafe { render_parts::<4, false>(c, &mut outs4) }, unsafe { render_parts::<4, true>(c, &mut outs4) }] {
            let joined: Vec<u8> = (0..4).flat_map(|k| unsafe { std::slice::from_raw_parts(outs4[k].as_ptr(), lengths[k]) }.iter().copied()).collect();
            assert!(joined == out, "parts differ from the block walk");
        }
    }
    println!("round\tblock_walk_ms\twindow_x1_ms\twindow_x2_ms\twindow_x4_ms\tparts_x4_ms\tparts_x4_joined_ms\tparts_x4_two_ms");
    for round in 0..9 {
        let ms = |t: Instant| t.elapsed().as_secs_f64() * 1e3;
        let mut s = 0;
        let t = Instant::now();
        for c in &chunks { out.clear(); s += Implementation::Avx512.render_chunk(&mut out, c) as usize; }
        let block = ms(t);
        let t = Instant::now();
        for c in &chunks { s += unsafe { streams::<1>(c, &mut outs1) }; }
        let x1 = ms(t);
        let t = Instant::now();
        for c in &chunks { s += unsafe { streams::<2>(c, &mut outs2) }; }
        let x2 = ms(t);
        let t = Instant::now();
        for c in &chunks { s += unsafe { streams::<4>(c, &mut outs4) }; }
        let x4 = ms(t);
        let t = Instant::now();
        for c in &chunks { s += unsafe { render_parts::<4, false>(c, &mut outs4) }[0]; }
        let parts = ms(t);
        // The same, and the parts copied after each other into one buffer (a join in the kernel).
        let t = Instant::now();
        for c in &chunks {
            let lengths = unsafe { render_parts::<4, false>(c, &mut outs4) };
            out.clear();
            for k in 0..4 { out.extend_from_slice(unsafe { std::slice::from_raw_parts(outs4[k].as_ptr(), lengths[k]) }); }
            s += out.len();
        }
        let joined = ms(t);
        let t = Instant::now();
        for c in &chunks { s += unsafe { render_parts::<4, true>(c, &mut outs4) }[0]; }
        let parts_two = ms(t);
        std::hint::black_box(s);
        println!("{round}\t{block:.1}\t{x1:.1}\t{x2:.1}\t{x4:.1}\t{parts:.1}\t{joined:.1}\t{parts_two:.1}");
    }
}
