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
    println!("round\tblock_walk_ms\twindow_x1_ms\twindow_x2_ms\twindow_x4_ms");
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
        std::hint::black_box(s);
        println!("{round}\t{block:.1}\t{x1:.1}\t{x2:.1}\t{x4:.1}");
    }
}
