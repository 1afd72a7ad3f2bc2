//! A deflate block writer made for filtered screenshot rows: faster than
//! fdeflate with less output (`cargo bench -p deskhand-encode` compares
//! them), with an AVX2 coder for a shaped code in [`shaped`].
//!
//! Each stripe becomes ONE dynamic-Huffman block whose code is built from a
//! sample of the stripe's own bytes (fdeflate uses one fixed table for every
//! image). Runs of zero bytes (flat areas after the Sub filter) are written
//! as matches at distance 1; there is no other match search, which is what
//! makes it fast: per two bytes, one table lookup and a shift (or, with the
//! shaped code, per 32 bytes a few dozen vector instructions and four
//! stores).
//!
//! The block is not final and is followed by an empty stored block, so the
//! stream ends on a byte boundary and stripes can simply be concatenated;
//! [`FINAL_EMPTY_BLOCK`] ends the joined stream.

#[cfg(target_arch = "x86_64")]
mod shaped;

/// The lit/len alphabet used: 256 literals, end of block, 29 lengths.
const LITLEN_SYMBOLS: usize = 286;
/// End-of-block symbol.
const END_OF_BLOCK: usize = 256;
/// Longest code used. Thirteen bits let two codes share one `u32` entry of
/// the pair table (26 bits of code, 5 of length), and four codes follow a
/// flush (which leaves at most seven bits pending) in one 64-bit buffer.
const MAX_CODE_BITS: u8 = 13;
/// Bits of code in a pair-table entry; the length sits above them.
const PAIR_CODE_BITS: u32 = 27;
/// Longest code-length code allowed by deflate.
const MAX_CL_BITS: u8 = 7;
/// Order in which code-length code lengths are sent (RFC 1951, 3.2.7).
const CL_ORDER: [usize; 19] = [
    16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15,
];
/// Zero runs shorter than this are written as literals.
const MIN_RUN: usize = 5;
/// Every how many 1 KiB chunks one is counted for the code.
const SAMPLE_EVERY: usize = 16;
/// The shaped code is used unless it costs more than one bit in this many
/// over the entropy of the sample (a free code costs 1–3% over it).
#[cfg(target_arch = "x86_64")]
const SHAPE_TOLERANCE: f64 = 16.0;

/// An empty, non-final stored block, once the stream is on a byte
/// boundary: pads a stripe's length.
pub const EMPTY_STORED_BLOCK: [u8; 5] = [0x00, 0x00, 0x00, 0xff, 0xff];

/// A final, empty fixed-Huffman block: ends a stream of joined stripes.
pub const FINAL_EMPTY_BLOCK: [u8; 2] = [0x03, 0x00];

/// Deflates stripes, keeping its tables and output buffer between them
/// (one per thread).
#[derive(Default)]
pub struct Deflater {
    code: LitLenCode,
    scratch: Vec<u8>,
}

impl Deflater {
    /// Writes `data` as one non-final dynamic-Huffman block followed by an
    /// empty stored block (the stream ends byte-aligned); returns the raw
    /// deflate bytes, without zlib header or checksum. Where the CPU has
    /// AVX2 and BMI2 the shaped code and its vector coder are used unless
    /// they would cost too much output.
    #[inline(always)]
    pub fn stripe(&mut self, data: &[u8]) -> Vec<u8> {
        #[cfg(target_arch = "x86_64")]
        if std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("bmi2") {
            // SAFETY: the CPU has AVX2 and BMI2, checked just above.
            return unsafe { self.stripe_avx2(data) };
        }
        self.stripe_portable(data)
    }

    /// [`Deflater::stripe`] with a free code and the pair-table coder.
    #[inline(always)]
    fn stripe_portable(&mut self, data: &[u8]) -> Vec<u8> {
        self.stripe_free(data, &limited_lengths(&sample_counts(data), MAX_CODE_BITS))
    }

    /// [`Deflater::stripe`] with the free code `lengths`.
    #[inline(always)]
    fn stripe_free(&mut self, data: &[u8], lengths: &[u8]) -> Vec<u8> {
        self.code.fit_free(lengths);
        self.block(|code, w| code.write_data(w, data), data.len())
    }

    /// [`Deflater::stripe`] compiled for AVX2: the shaped code and its
    /// vector coder, unless the shape would cost more than
    /// 1/[`SHAPE_TOLERANCE`] more bits than the sample's entropy (rows of
    /// text whose frequent residuals are far from zero); then a free code.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2,bmi1,bmi2")]
    fn stripe_avx2(&mut self, data: &[u8]) -> Vec<u8> {
        let counts = sample_counts(data);
        let Some((shaped, prefix_bits)) = shaped::shaped_lengths(&counts) else {
            return self.stripe_free(data, &limited_lengths(&counts, MAX_CODE_BITS));
        };
        // Over the bytes counted (without the one added to every symbol).
        let shaped_bits: f64 = counts
            .iter()
            .zip(&shaped)
            .map(|(&c, &l)| f64::from(c - 1) * f64::from(l))
            .sum();
        if shaped_bits > entropy_bits(&counts) * (1.0 + 1.0 / SHAPE_TOLERANCE) {
            return self.stripe_free(data, &limited_lengths(&counts, MAX_CODE_BITS));
        }
        let tables = self.code.fit_shaped(&shaped, prefix_bits);
        self.block(
            |code, w| code.write_data_shaped(w, data, &tables),
            data.len(),
        )
    }

    /// The block around the data that `write` writes with the current
    /// code (`len` bytes of it).
    #[inline(always)]
    fn block(
        &mut self,
        write: impl for<'a> FnOnce(&LitLenCode, BitWriter<'a>) -> BitWriter<'a>,
        len: usize,
    ) -> Vec<u8> {
        let code = &self.code;
        // The worst case: every byte a longest literal code (13 bits; the
        // shaped code's are at most 12, and zero runs take under 7 bits a
        // byte), plus the block header.
        let worst = len * usize::from(MAX_CODE_BITS) / 8 + 1024;
        if self.scratch.len() < worst {
            self.scratch.resize(worst, 0);
        }
        let mut w = BitWriter::new(&mut self.scratch);
        // BFINAL 0, BTYPE 10 (dynamic).
        w.put(0b100, 3);
        write_code_lengths(&mut w, &code.lengths);
        let mut w = write(code, w);
        let (end, end_len) = code.code(END_OF_BLOCK);
        w.put(end, end_len);
        // An empty stored block: BFINAL 0, BTYPE 00, then to a byte boundary.
        w.put(0, 3);
        w.flush();
        let len = w.finish();
        let mut out = Vec::with_capacity(len + 4);
        out.extend_from_slice(&self.scratch[..len]);
        out.extend_from_slice(&[0x00, 0x00, 0xff, 0xff]);
        out
    }
}

/// A 64-bit buffer of pending bits over an output buffer sized for the
/// worst case, so that a flush is one unconditional 8-byte store. Passed by
/// value through the hot loop so that it lives in registers.
struct BitWriter<'a> {
    out: &'a mut [u8],
    pos: usize,
    bits: u64,
    count: u32,
}

impl<'a> BitWriter<'a> {
    fn new(out: &'a mut [u8]) -> Self {
        Self {
            out,
            pos: 0,
            bits: 0,
            count: 0,
        }
    }

    /// Appends the `n` low bits of `bits`. The caller keeps the pending
    /// count at most 63 between flushes.
    #[inline(always)]
    fn put(&mut self, bits: u64, n: u32) {
        self.bits |= bits << self.count;
        self.count += n;
        debug_assert!(self.count < 64);
    }

    /// Moves the whole pending bytes out; at most seven bits stay.
    #[inline(always)]
    fn flush(&mut self) {
        self.out[self.pos..self.pos + 8].copy_from_slice(&self.bits.to_le_bytes());
        let bytes = self.count / 8;
        self.pos += bytes as usize;
        // `bytes` is at most 7, so the shift is below 64.
        self.bits >>= bytes * 8;
        self.count -= bytes * 8;
    }

    /// Pads the pending bits to a byte; returns the length written.
    fn finish(mut self) -> usize {
        self.flush();
        // At most seven bits are left: one more (padded) byte.
        self.count = self.count.div_ceil(8) * 8;
        self.flush();
        self.pos
    }
}

/// The lit/len Huffman code of one block: `table[s]` holds the bit-reversed
/// code of symbol `s` (deflate sends codes most significant bit first into
/// an LSB-first stream) in its low 16 bits and the length above;
/// `pairs[a | b << 8]` holds the codes of literal `a` then `b`, joined.
struct LitLenCode {
    lengths: [u8; LITLEN_SYMBOLS],
    table: [u32; LITLEN_SYMBOLS],
    /// Indexed by a `u16`, so that a lookup needs no bounds check.
    pairs: Box<[u32; 1 << 16]>,
}

impl Default for LitLenCode {
    fn default() -> Self {
        Self {
            lengths: [0; LITLEN_SYMBOLS],
            table: [0; LITLEN_SYMBOLS],
            // Built on the heap (not moved through the stack).
            pairs: vec![0; 1 << 16]
                .into_boxed_slice()
                .try_into()
                .unwrap_or_else(|_| unreachable!("the length is 1 << 16")),
        }
    }
}

impl LitLenCode {
    /// Takes the free code `lengths` and builds the pair table. Inlined so
    /// that the pair table is built with the caller's vector instructions.
    #[inline(always)]
    fn fit_free(&mut self, lengths: &[u8]) {
        self.set_lengths(lengths);
        let literals = &self.table[..256];
        for (row, &second) in self.pairs.chunks_exact_mut(256).zip(literals) {
            let (c1, n1) = (second & 0xffff, second >> 16);
            for (entry, &first) in row.iter_mut().zip(literals) {
                let (c0, n0) = (first & 0xffff, first >> 16);
                *entry = (c0 | c1 << n0) | (n0 + n1) << PAIR_CODE_BITS;
            }
        }
    }

    /// Takes `lengths` (a complete code) and their canonical codes.
    fn set_lengths(&mut self, lengths: &[u8]) {
        self.lengths.copy_from_slice(lengths);
        for ((t, code), &len) in self
            .table
            .iter_mut()
            .zip(canonical_codes(lengths))
            .zip(lengths)
        {
            *t = u32::from(code) | u32::from(len) << 16;
        }
    }

    #[inline(always)]
    fn code(&self, symbol: usize) -> (u64, u32) {
        let t = self.table[symbol];
        (u64::from(t & 0xffff), t >> 16)
    }

    /// Eight literals (a little-endian word): two pairs (at most 52 bits),
    /// a flush, two pairs, a flush.
    #[inline(always)]
    fn put8(&self, w: &mut BitWriter<'_>, word: u64) {
        let pair = |shift: u32| {
            let p = self.pairs[usize::from((word >> shift) as u16)];
            (
                u64::from(p & ((1 << PAIR_CODE_BITS) - 1)),
                p >> PAIR_CODE_BITS,
            )
        };
        let (c0, n0) = pair(0);
        let (c1, n1) = pair(16);
        w.put(c0 | c1 << n0, n0 + n1);
        w.flush();
        let (c2, n2) = pair(32);
        let (c3, n3) = pair(48);
        w.put(c2 | c3 << n2, n2 + n3);
        w.flush();
    }

    /// Four literals, then a flush.
    #[inline(always)]
    fn put4(&self, w: &mut BitWriter<'_>, b: &[u8]) {
        let (c0, n0) = self.code(usize::from(b[0]));
        let (c1, n1) = self.code(usize::from(b[1]));
        let (c2, n2) = self.code(usize::from(b[2]));
        let (c3, n3) = self.code(usize::from(b[3]));
        w.put(
            c0 | c1 << n0 | c2 << (n0 + n1) | c3 << (n0 + n1 + n2),
            n0 + n1 + n2 + n3,
        );
        w.flush();
    }

    /// Literals, flushed every four.
    #[inline(always)]
    fn put_literals(&self, w: &mut BitWriter<'_>, bytes: &[u8]) {
        let mut quads = bytes.chunks_exact(4);
        for q in &mut quads {
            self.put4(w, q);
        }
        for &b in quads.remainder() {
            let (c, n) = self.code(usize::from(b));
            w.put(c, n);
        }
        w.flush();
    }

    /// `run` zero bytes: a literal zero, then matches at distance 1.
    #[inline(always)]
    fn put_zero_run(&self, w: &mut BitWriter<'_>, run: usize) {
        if run < MIN_RUN {
            for _ in 0..run {
                let (c, n) = self.code(0);
                w.put(c, n);
            }
            w.flush();
            return;
        }
        let (c, n) = self.code(0);
        w.put(c, n);
        let mut left = run - 1;
        while left >= 3 {
            let len = left.min(258);
            let (symbol, extra_bits, extra) = length_symbol(len);
            let (c, n) = self.code(symbol);
            w.put(c, n);
            w.put(extra, extra_bits);
            // Distance code 0 (distance 1): the single one-bit code "0".
            w.put(0, 1);
            w.flush();
            left -= len;
        }
        for _ in 0..left {
            let (c, n) = self.code(0);
            w.put(c, n);
        }
        w.flush();
    }

    /// The data: literals and zero runs, read eight bytes at a time.
    #[inline(always)]
    fn write_data<'a>(&self, mut w: BitWriter<'a>, data: &[u8]) -> BitWriter<'a> {
        let mut run = 0usize;
        let mut chunks = data.chunks_exact(8);
        for chunk in &mut chunks {
            let word = u64::from_le_bytes(chunk.try_into().unwrap_or([0; 8]));
            if word == 0 {
                run += 8;
                continue;
            }
            if run == 0 {
                self.put8(&mut w, word);
                continue;
            }
            // A run (which starts at an all-zero word) goes on into the
            // zero bytes at the start of this one.
            let head = (word.trailing_zeros() / 8) as usize;
            self.put_zero_run(&mut w, run + head);
            self.put_literals(&mut w, &chunk[head..]);
            run = 0;
        }
        self.finish_data(w, run, chunks.remainder())
    }

    /// The last bytes of the data (`rest`), after a zero run of `run`
    /// bytes that has not been written yet.
    #[inline(always)]
    fn finish_data<'a>(&self, mut w: BitWriter<'a>, run: usize, rest: &[u8]) -> BitWriter<'a> {
        let head = rest.iter().take_while(|&&b| b == 0).count();
        if run + head > 0 {
            self.put_zero_run(&mut w, run + head);
        }
        self.put_literals(&mut w, &rest[head..]);
        w
    }
}

/// Byte counts of every [`SAMPLE_EVERY`]th 1 KiB chunk of `data`, each
/// symbol counted once more so that every symbol gets a code.
#[inline(always)]
fn sample_counts(data: &[u8]) -> [u32; LITLEN_SYMBOLS] {
    let mut counts = [1u32; LITLEN_SYMBOLS];
    for chunk in data.chunks(1024).step_by(SAMPLE_EVERY) {
        for &b in chunk {
            counts[usize::from(b)] += 1;
        }
    }
    counts
}

/// The bits the bytes counted in `counts` (each count one more than the
/// bytes seen) would take at their entropy: a lower bound of any code's.
#[cfg(target_arch = "x86_64")]
fn entropy_bits(counts: &[u32]) -> f64 {
    let seen = counts.iter().filter(|&&c| c > 1).map(|&c| f64::from(c - 1));
    let total: f64 = seen.clone().sum();
    seen.map(|c| c * (total / c).log2()).sum()
}

/// Symbol, number of extra bits and their value for a match length 3..=258.
fn length_symbol(len: usize) -> (usize, u32, u64) {
    const BASE: [u16; 29] = [
        3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115,
        131, 163, 195, 227, 258,
    ];
    const EXTRA: [u8; 29] = [
        0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0,
    ];
    let i = BASE.partition_point(|&b| usize::from(b) <= len) - 1;
    (
        257 + i,
        u32::from(EXTRA[i]),
        (len - usize::from(BASE[i])) as u64,
    )
}

/// Sends HLIT/HDIST/HCLEN, the code-length code and the code lengths of
/// the lit/len code plus one distance code of length 1.
fn write_code_lengths(w: &mut BitWriter<'_>, litlen: &[u8; LITLEN_SYMBOLS]) {
    let all: Vec<u8> = litlen.iter().copied().chain([1]).collect();
    let mut counts = [0u32; 19];
    for &l in &all {
        counts[usize::from(l)] += 1;
    }
    let cl_lengths = limited_lengths(&counts, MAX_CL_BITS);
    let cl_codes = canonical_codes(&cl_lengths);
    let sent = CL_ORDER
        .iter()
        .rposition(|&s| cl_lengths[s] != 0)
        .map_or(4, |i| (i + 1).max(4));
    w.put((LITLEN_SYMBOLS - 257) as u64, 5);
    w.put(0, 5);
    w.put((sent - 4) as u64, 4);
    w.flush();
    for &s in &CL_ORDER[..sent] {
        w.put(u64::from(cl_lengths[s]), 3);
        w.flush();
    }
    for &l in &all {
        let s = usize::from(l);
        w.put(u64::from(cl_codes[s]), u32::from(cl_lengths[s]));
        w.flush();
    }
}

/// Huffman code lengths for `counts` no longer than `limit`: symbols with a
/// zero count get none; the counts are halved until the code fits.
fn limited_lengths(counts: &[u32], limit: u8) -> Vec<u8> {
    let mut counts = counts.to_vec();
    loop {
        let lengths = huffman_lengths(&counts);
        if lengths.iter().all(|&l| l <= limit) {
            return lengths;
        }
        for c in counts.iter_mut().filter(|c| **c > 0) {
            *c = c.div_ceil(2);
        }
    }
}

/// Plain Huffman code lengths (two-queue construction). A lone used symbol
/// gets length 1.
fn huffman_lengths(counts: &[u32]) -> Vec<u8> {
    let mut leaves: Vec<usize> = (0..counts.len()).filter(|&s| counts[s] > 0).collect();
    let mut lengths = vec![0u8; counts.len()];
    match leaves.len() {
        0 => return lengths,
        1 => {
            lengths[leaves[0]] = 1;
            return lengths;
        }
        _ => {}
    }
    leaves.sort_by_key(|&s| counts[s]);
    let n = leaves.len();
    // Nodes 0..n are the sorted leaves, n.. the joined ones in order of
    // creation (their weights never decrease).
    let mut weight: Vec<u64> = leaves.iter().map(|&s| u64::from(counts[s])).collect();
    let mut parent = vec![0usize; 2 * n - 1];
    let (mut next_leaf, mut next_joined) = (0usize, n);
    for node in n..2 * n - 1 {
        let mut take = || {
            let use_leaf =
                next_leaf < n && (next_joined >= node || weight[next_leaf] <= weight[next_joined]);
            if use_leaf {
                next_leaf += 1;
                next_leaf - 1
            } else {
                next_joined += 1;
                next_joined - 1
            }
        };
        let (a, b) = (take(), take());
        weight.push(weight[a] + weight[b]);
        parent[a] = node;
        parent[b] = node;
    }
    let mut depth = vec![0u8; 2 * n - 1];
    for node in (0..2 * n - 2).rev() {
        depth[node] = depth[parent[node]].saturating_add(1);
    }
    for (i, &s) in leaves.iter().enumerate() {
        lengths[s] = depth[i];
    }
    lengths
}

/// Canonical codes for `lengths` (RFC 1951, 3.2.2), bit-reversed.
fn canonical_codes(lengths: &[u8]) -> Vec<u16> {
    let mut per_length = [0u16; 16];
    for &l in lengths.iter().filter(|&&l| l > 0) {
        per_length[usize::from(l)] += 1;
    }
    let mut next = [0u16; 16];
    let mut code = 0u16;
    for bits in 1..16 {
        code = (code + per_length[bits - 1]) << 1;
        next[bits] = code;
    }
    lengths
        .iter()
        .map(|&l| {
            if l == 0 {
                return 0;
            }
            let c = next[usize::from(l)];
            next[usize::from(l)] += 1;
            c.reverse_bits() >> (16 - l)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A zlib stream of the given stripes, by both coders where the CPU
    /// has AVX2 (asserting that they agree on what they write).
    fn zlib(parts: &[&[u8]]) -> Vec<u8> {
        let portable = zlib_by(parts, Deflater::stripe_portable);
        #[cfg(target_arch = "x86_64")]
        if std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("bmi2") {
            let shaped = zlib_by(parts, |d, p| {
                // SAFETY: the CPU has AVX2 and BMI2, checked just above.
                unsafe { d.stripe_avx2(p) }
            });
            assert_eq!(inflate(&shaped), inflate(&portable));
        }
        portable
    }

    fn zlib_by(parts: &[&[u8]], stripe: impl Fn(&mut Deflater, &[u8]) -> Vec<u8>) -> Vec<u8> {
        let mut out = vec![0x78, 0x01];
        let mut deflater = Deflater::default();
        for p in parts {
            out.extend_from_slice(&stripe(&mut deflater, p));
        }
        out.extend_from_slice(&FINAL_EMPTY_BLOCK);
        let whole: Vec<u8> = parts.concat();
        out.extend_from_slice(&simd_adler32::adler32(&whole.as_slice()).to_be_bytes());
        out
    }

    fn inflate(z: &[u8]) -> Vec<u8> {
        fdeflate::decompress_to_vec(z).expect("valid zlib stream")
    }

    /// A xorshift generator: the test data's one source of randomness.
    pub(super) fn xorshift(seed: u32) -> impl FnMut() -> u32 {
        let mut x = seed.max(1);
        move || {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            x
        }
    }

    fn noise(len: usize, seed: u32) -> Vec<u8> {
        let mut next = xorshift(seed);
        (0..len).map(|_| (next() % 9) as u8).collect()
    }

    #[test]
    fn stripes_inflate_back_alone_and_joined() {
        let mut mixed = noise(50_000, 7);
        mixed[100..400].fill(0);
        mixed[1000..1003].fill(0);
        mixed[2000..2262].fill(0);
        mixed[3001..3009].fill(0);
        let all_bytes: Vec<u8> = (0..=255u8).cycle().take(9000).collect();
        let cases: [&[u8]; 7] = [
            &[],
            &[0],
            &[5, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 7],
            &[0; 100_000],
            &mixed,
            &all_bytes,
            &noise(13, 3),
        ];
        for c in cases {
            assert_eq!(inflate(&zlib(&[c])), c, "{} bytes alone", c.len());
        }
        assert_eq!(inflate(&zlib(&cases)), cases.concat(), "joined");
    }

    /// Sub-filtered rows of dark text on a light background: mostly
    /// zeros, and the two jumps between the colours (far from zero).
    fn text_rows(rows: usize, seed: u32) -> Vec<u8> {
        let mut next = xorshift(seed);
        let mut out = Vec::new();
        for _ in 0..rows {
            // The Sub filter type.
            out.extend([1]);
            let mut left = 245u8;
            for px in 0..1920 {
                let v: u8 = if px % 9 < 6 && next().is_multiple_of(3) {
                    30
                } else {
                    245
                };
                out.extend_from_slice(&[v.wrapping_sub(left); 3]);
                left = v;
            }
        }
        out
    }

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn the_shape_is_used_where_it_costs_little_output() {
        if !(std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("bmi2")) {
            return;
        }
        let text = text_rows(64, 7);
        // Residuals spread over -11..=7, as on a photo.
        let photo: Vec<u8> = noise(64 * 5761, 5)
            .iter()
            .zip(noise(64 * 5761, 6))
            .map(|(&a, b)| (a * 2 + b / 3).wrapping_sub(11))
            .collect();
        // SAFETY: the CPU has AVX2 and BMI2, checked above.
        let text_avx2 = unsafe { Deflater::default().stripe_avx2(&text) };
        // SAFETY: as above.
        let photo_avx2 = unsafe { Deflater::default().stripe_avx2(&photo) };
        let text_free = Deflater::default().stripe_portable(&text);
        let photo_free = Deflater::default().stripe_portable(&photo);
        assert_eq!(text_avx2, text_free, "text rows get the free code");
        assert_ne!(
            photo_avx2, photo_free,
            "photo-like rows get the shaped code"
        );
        let (a, f) = (photo_avx2.len(), photo_free.len());
        assert!(a < f + f / 32, "the shape costs {a} bytes against {f}");
    }

    /// Residual-like rows with zero runs and rare outliers, from a fixed
    /// seed: `spread` values around zero, a run of up to 700 zeros with
    /// probability `zero_percent` at each 64-byte burst.
    fn mixed_rows(len: usize, spread: u32, zero_percent: u32, seed: u32) -> Vec<u8> {
        let mut rnd = xorshift(seed);
        let mut data = Vec::with_capacity(len + 700);
        while data.len() < len {
            if rnd() % 100 < zero_percent {
                let run = (rnd() % 700) as usize;
                data.extend(std::iter::repeat_n(0u8, run));
                continue;
            }
            for _ in 0..rnd() % 64 {
                let near = (rnd() % spread) as i32 - (spread / 2) as i32;
                let outlier = rnd().is_multiple_of(50);
                data.push(if outlier { rnd() as u8 } else { near as u8 });
            }
        }
        data.truncate(len);
        data
    }

    #[test]
    fn mixed_rows_round_trip_through_both_coders() {
        let mut shaped = 0;
        for i in 0..40u32 {
            let spread = [17, 25, 40, 60, 90][(i % 5) as usize];
            let data = mixed_rows(1000 + (i as usize * 1543) % 60_000, spread, i % 8, i + 1);
            assert_eq!(inflate(&zlib(&[&data])), data, "case {i}");
            #[cfg(target_arch = "x86_64")]
            if std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("bmi2") {
                // SAFETY: the CPU has AVX2 and BMI2, checked just above.
                let avx2 = unsafe { Deflater::default().stripe_avx2(&data) };
                shaped += usize::from(avx2 != Deflater::default().stripe_portable(&data));
            }
        }
        #[cfg(target_arch = "x86_64")]
        if std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("bmi2") {
            assert!(
                shaped >= 5,
                "the shaped coder wrote only {shaped} of 40 cases"
            );
        }
    }

    #[test]
    fn every_run_length_round_trips() {
        for run in 0..600 {
            let mut data = vec![9u8; 3];
            data.extend(std::iter::repeat_n(0, run));
            data.push(4);
            assert_eq!(inflate(&zlib(&[&data])), data, "run of {run}");
        }
    }

    #[test]
    fn skewed_counts_stay_within_the_limit_and_complete() {
        let counts: Vec<u32> = (0..LITLEN_SYMBOLS as u32)
            .map(|i| if i < 30 { 1 << (i % 31) } else { 1 })
            .collect();
        let lengths = limited_lengths(&counts, MAX_CODE_BITS);
        assert!(lengths.iter().all(|&l| (1..=MAX_CODE_BITS).contains(&l)));
        let kraft: f64 = lengths.iter().map(|&l| 0.5f64.powi(i32::from(l))).sum();
        assert!(
            (kraft - 1.0).abs() < 1e-9,
            "a complete code, Kraft sum {kraft}"
        );
    }

    #[test]
    fn noisy_rows_compress() {
        let data = noise(100_000, 11);
        let z = Deflater::default().stripe(&data);
        // Nine symbols: about 3.2 bits each.
        assert!(z.len() < data.len() / 2, "{} bytes", z.len());
    }

    #[test]
    fn length_symbols_follow_the_table() {
        assert_eq!(length_symbol(3), (257, 0, 0));
        assert_eq!(length_symbol(10), (264, 0, 0));
        assert_eq!(length_symbol(12), (265, 1, 1));
        assert_eq!(length_symbol(257), (284, 5, 30));
        assert_eq!(length_symbol(258), (285, 0, 0));
    }
}
