//! A lit/len code shaped so that AVX2 finds the codes of 32 filtered bytes
//! with a handful of byte shuffles, and the coder that writes them (the
//! approach of fpnge's coder).
//!
//! The shape:
//! - literals `0..16` and `240..256` (the small residuals, most of what
//!   the Sub filter leaves) have codes of at most eight bits, looked up by
//!   their low nibble;
//! - the 224 literals between share one length `p + 4` (`p` in 5..=8), so
//!   their canonical codes are consecutive: a literal's code is a `p`-bit
//!   prefix looked up by its high nibble (a second table holds the prefix
//!   plus one, for the low nibbles that carry into it) followed by four
//!   bits looked up by its low nibble;
//! - end of block and the 29 match lengths sit under one node of at most
//!   eight bits.
//!
//! Within the shape the lengths are optimal for the sampled counts (a
//! dynamic program over Kraft units); the shape costs a little output
//! against an unconstrained code on photo-like rows, and far more on rows whose common residuals are mid literals, which is why the
//! caller compares it with the sample's entropy first.

use std::arch::x86_64::{
    __m256i, _mm256_add_epi64, _mm256_and_si256, _mm256_andnot_si256, _mm256_blendv_epi8,
    _mm256_broadcastsi128_si256, _mm256_cmpeq_epi8, _mm256_cmpgt_epi8, _mm256_cmpgt_epi32,
    _mm256_madd_epi16, _mm256_max_epi32, _mm256_movemask_epi8, _mm256_or_si256, _mm256_sad_epu8,
    _mm256_set1_epi8, _mm256_set1_epi16, _mm256_set1_epi32, _mm256_set1_epi64x,
    _mm256_setzero_si256, _mm256_shuffle_epi8, _mm256_sllv_epi32, _mm256_sllv_epi64,
    _mm256_srli_epi16, _mm256_srli_epi32, _mm256_srli_epi64, _mm256_srli_si256,
    _mm256_unpackhi_epi8, _mm256_unpacklo_epi8,
};

use super::BitWriter;
#[cfg(test)]
use super::sample_counts;
use super::{LITLEN_SYMBOLS, LitLenCode, limited_lengths};

/// Kraft units at eight bits: a code of length `l <= 8` takes `2^(8 - l)`.
const UNITS: usize = 256;
/// Literals `16..240`: fourteen groups of sixteen with one high nibble.
const MID_GROUPS: usize = 14;
/// The choices of the length assignment: 32 single literals, the node
/// over end of block and the lengths, and the mid groups.
const NODES: usize = 34;
/// Deflate's longest code.
const MAX_BITS: u8 = 15;
/// A cost no assignment reaches (the counts are kept below 2^24).
const INFEASIBLE: u32 = 1 << 30;

/// The 16-byte shuffle tables of a shaped code.
#[derive(Debug, Default, Clone, Copy, PartialEq)]
pub(super) struct NibbleTables {
    /// Lengths and bit-reversed codes of literals `0..16`.
    low_len: [u8; 16],
    low_code: [u8; 16],
    /// Lengths and bit-reversed codes of literals `240..256`.
    high_len: [u8; 16],
    high_code: [u8; 16],
    /// Bit-reversed prefix of each mid group, by high nibble, without and
    /// with the carry from the low nibble.
    prefix: [u8; 16],
    prefix_carried: [u8; 16],
    /// Bit-reversed last four bits of a mid literal by its low nibble,
    /// shifted left by `prefix_bits - 4` (a `u16` shift by 4 completes it).
    suffix: [u8; 16],
    /// Low nibbles above this carry into the prefix.
    carry_above: i8,
    /// `prefix_bits + 4`: the length of every mid literal.
    mid_len: u8,
}

/// One choice in the length assignment: a literal `0..16` / `240..256`
/// or the node over end of block and the lengths (length 1..=8), or the
/// fourteen mid groups together (prefix length 5..=8: at 4 they would
/// take 224 of the 256 units, too few for the 33 others).
#[derive(Clone, Copy)]
enum Node {
    Single(u32),
    Mid(u32),
}

impl Node {
    /// (length, Kraft units, cost) of each length the node may take.
    fn options(self) -> impl Iterator<Item = (u8, usize, u32)> {
        let (lengths, groups, extra, weight) = match self {
            Node::Single(w) => (1..=8u8, 1, 0, w),
            Node::Mid(w) => (5..=8u8, MID_GROUPS, 4, w),
        };
        lengths.map(move |l| (l, groups << (8 - l), weight * u32::from(l + extra)))
    }
}

/// Code lengths of the shape with the least cost for `counts`, and the
/// mid groups' prefix length (`None` would mean no complete code of the
/// shape exists, which cannot happen: the 33 single nodes at 8 bits and
/// the mid groups at 5 take 145 of the 256 units). Inlined so that the
/// dynamic program runs on the caller's vector instructions.
#[inline(always)]
pub(super) fn shaped_lengths(counts: &[u32; LITLEN_SYMBOLS]) -> Option<([u8; LITLEN_SYMBOLS], u8)> {
    let mut counts = *counts;
    while counts.iter().map(|&c| u64::from(c)).sum::<u64>() >= 1 << 24 {
        for c in &mut counts {
            *c = c.div_ceil(2);
        }
    }
    let tail: u32 = counts[256..].iter().sum();
    let mid: u32 = counts[16..240].iter().sum();
    let mut nodes = [Node::Single(0); NODES];
    let all = counts[..16]
        .iter()
        .chain(&counts[240..256])
        .map(|&c| Node::Single(c))
        .chain([Node::Single(tail), Node::Mid(mid)]);
    for (slot, node) in nodes.iter_mut().zip(all) {
        *slot = node;
    }
    // best[k][u]: the least cost of the first k nodes taking exactly u units
    // (on the stack: this runs once per stripe).
    let mut best = [[INFEASIBLE; UNITS + 1]; NODES + 1];
    best[0][0] = 0;
    for (k, node) in nodes.iter().enumerate() {
        let (done, rest) = best.split_at_mut(k + 1);
        let (prev, next) = (&done[k], &mut rest[0]);
        for (_, units, cost) in node.options().filter(|o| o.1 <= UNITS) {
            for (n, &p) in next[units..].iter_mut().zip(prev.iter()) {
                *n = (*n).min(p + cost);
            }
        }
    }
    // Walk back from a complete code (all 256 units used).
    let mut chosen = [0u8; NODES];
    let mut left = UNITS;
    for k in (0..nodes.len()).rev() {
        let target = best[k + 1][left];
        if target >= INFEASIBLE {
            return None;
        }
        let (len, units, _) = nodes[k]
            .options()
            .find(|&(_, u, c)| u <= left && best[k][left - u] + c == target)?;
        chosen[k] = len;
        left -= units;
    }
    if left != 0 {
        return None;
    }
    let mut lengths = [0u8; LITLEN_SYMBOLS];
    lengths[..16].copy_from_slice(&chosen[..16]);
    lengths[240..256].copy_from_slice(&chosen[16..32]);
    let (tail_len, prefix_bits) = (chosen[32], chosen[33]);
    lengths[16..240].fill(prefix_bits + 4);
    for (l, sub) in lengths[256..]
        .iter_mut()
        .zip(limited_lengths(&counts[256..], MAX_BITS - tail_len))
    {
        *l = tail_len + sub;
    }
    Some((lengths, prefix_bits))
}

/// The low `n` bits of `v`, reversed.
fn reverse(v: u32, n: u8) -> u32 {
    u32::from((v as u16).reverse_bits() >> (16 - n))
}

impl LitLenCode {
    /// Takes the shaped code `lengths` (from [`shaped_lengths`], with its
    /// `prefix_bits`) and returns its shuffle tables; the pair table is
    /// not used.
    pub(super) fn fit_shaped(
        &mut self,
        lengths: &[u8; LITLEN_SYMBOLS],
        prefix_bits: u8,
    ) -> NibbleTables {
        self.set_lengths(lengths);
        let code = |s: usize| self.table[s] & 0xffff;
        let mut t = NibbleTables {
            mid_len: prefix_bits + 4,
            ..NibbleTables::default()
        };
        for lo in 0..16 {
            t.low_len[lo] = lengths[lo];
            t.low_code[lo] = code(lo) as u8;
            t.high_len[lo] = lengths[240 + lo];
            t.high_code[lo] = code(240 + lo) as u8;
        }
        // The first mid literal's code, most significant bit first; the
        // others follow it one by one.
        let base = reverse(code(16), t.mid_len);
        let (base_hi, base_lo) = (base >> 4, base & 15);
        for g in 1..=MID_GROUPS {
            let hi = base_hi + g as u32 - 1;
            t.prefix[g] = reverse(hi, prefix_bits) as u8;
            t.prefix_carried[g] = reverse(hi + 1, prefix_bits) as u8;
        }
        for lo in 0..16u32 {
            t.suffix[lo as usize] = (reverse((base_lo + lo) & 15, 4) << (prefix_bits - 4)) as u8;
        }
        t.carry_above = (15 - base_lo) as i8;
        t
    }
}

/// A shaped code's tables and the constants of the coder, in registers.
#[derive(Clone, Copy)]
struct Lookups {
    low_len: __m256i,
    low_code: __m256i,
    high_len: __m256i,
    high_code: __m256i,
    prefix: __m256i,
    prefix_carried: __m256i,
    suffix: __m256i,
    carry_above: __m256i,
    mid_len: __m256i,
    nibble: __m256i,
    zero: __m256i,
}

impl NibbleTables {
    #[inline]
    #[target_feature(enable = "avx2")]
    fn lookups(&self) -> Lookups {
        let table = |t: &[u8; 16]| _mm256_broadcastsi128_si256(bytemuck::cast(*t));
        Lookups {
            low_len: table(&self.low_len),
            low_code: table(&self.low_code),
            high_len: table(&self.high_len),
            high_code: table(&self.high_code),
            prefix: table(&self.prefix),
            prefix_carried: table(&self.prefix_carried),
            suffix: table(&self.suffix),
            carry_above: _mm256_set1_epi8(self.carry_above),
            mid_len: _mm256_set1_epi8(self.mid_len as i8),
            nibble: _mm256_set1_epi8(0x0f),
            zero: _mm256_setzero_si256(),
        }
    }
}

/// Zero bytes ending a 32-byte step from which a zero run is started.
const RUN_START: u32 = 8;

impl LitLenCode {
    /// The data, 32 bytes per step through the shuffle tables of `tables`
    /// (which must be this code's); runs of zero steps become matches, and
    /// the steps around them and the last bytes are written as
    /// [`LitLenCode::write_data`] does.
    #[target_feature(enable = "avx2,bmi1,bmi2")]
    pub(super) fn write_data_shaped<'a>(
        &self,
        mut w: BitWriter<'a>,
        data: &[u8],
        tables: &NibbleTables,
    ) -> BitWriter<'a> {
        let l = tables.lookups();
        let mut run = 0usize;
        let mut steps = data.chunks_exact(32);
        for step in &mut steps {
            let bytes: [u8; 32] = step.try_into().unwrap_or([0; 32]);
            let v: __m256i = bytemuck::cast(bytes);
            let zeros = _mm256_movemask_epi8(_mm256_cmpeq_epi8(v, l.zero)) as u32;
            if zeros == u32::MAX {
                run += 32;
                continue;
            }
            // Zero bytes at the step's start and end.
            let (head, tail) = (zeros.trailing_ones() as usize, zeros.leading_ones());
            if run == 0 && tail < RUN_START {
                put32(&l, &mut w, v);
                continue;
            }
            // A run ends here, or one starts, or both: the bytes between
            // them (at least one is not zero) go one by one.
            let mut from = 0;
            if run > 0 {
                self.put_zero_run(&mut w, run + head);
                from = head;
            }
            let to = if tail >= RUN_START {
                32 - tail as usize
            } else {
                32
            };
            self.put_literals(&mut w, &step[from..to]);
            run = 32 - to;
        }
        self.finish_data(w, run, steps.remainder())
    }
}

/// Writes the 32 literals of `v`: codes and lengths looked up per byte,
/// joined in 64-bit lanes of four (at most 48 bits each) and, where they
/// fit, of eight, then written lane by lane.
#[inline]
#[target_feature(enable = "avx2,bmi1,bmi2")]
fn put32(l: &Lookups, w: &mut BitWriter<'_>, v: __m256i) {
    let shuffle = |t, i| _mm256_shuffle_epi8(t, i);
    let blend = |a, b, pick_b| _mm256_blendv_epi8(a, b, pick_b);
    let lo = _mm256_and_si256(v, l.nibble);
    let hi = _mm256_and_si256(_mm256_srli_epi16::<4>(v), l.nibble);
    let is_low = _mm256_cmpeq_epi8(hi, l.zero);
    let is_high = _mm256_cmpeq_epi8(hi, l.nibble);
    let len = blend(
        blend(l.mid_len, shuffle(l.high_len, lo), is_high),
        shuffle(l.low_len, lo),
        is_low,
    );
    let carry = _mm256_cmpgt_epi8(lo, l.carry_above);
    let prefix = blend(shuffle(l.prefix, hi), shuffle(l.prefix_carried, hi), carry);
    let first = blend(
        blend(prefix, shuffle(l.high_code, lo), is_high),
        shuffle(l.low_code, lo),
        is_low,
    );
    let second = _mm256_andnot_si256(_mm256_or_si256(is_low, is_high), shuffle(l.suffix, lo));
    // Bytes 0..8 and 16..24, then 8..16 and 24..32 (unpacking works
    // within each 128-bit half).
    let (codes_a, lens_a) = join_quads(
        l,
        _mm256_unpacklo_epi8(first, l.zero),
        _mm256_unpacklo_epi8(l.zero, second),
        _mm256_unpacklo_epi8(len, l.zero),
    );
    let (codes_b, lens_b) = join_quads(
        l,
        _mm256_unpackhi_epi8(first, l.zero),
        _mm256_unpackhi_epi8(l.zero, second),
        _mm256_unpackhi_epi8(len, l.zero),
    );
    // Eight codes per lane where every such lane fits in 56 bits (photo
    // rows nearly always do): four stores instead of eight.
    let (codes8_a, lens8_a) = join_halves(codes_a, lens_a);
    let (codes8_b, lens8_b) = join_halves(codes_b, lens_b);
    let longest = _mm256_max_epi32(lens8_a, lens8_b);
    if _mm256_movemask_epi8(_mm256_cmpgt_epi32(longest, _mm256_set1_epi32(56))) == 0 {
        let (a, b) = (lanes(codes8_a, lens8_a), lanes(codes8_b, lens8_b));
        write_lanes(w, [a[0], b[0], a[2], b[2]]);
        return;
    }
    let (a, b) = (lanes(codes_a, lens_a), lanes(codes_b, lens_b));
    write_lanes(w, [a[0], a[1], b[0], b[1], a[2], a[3], b[2], b[3]]);
}

/// The four 64-bit (code, length) lanes of a vector pair.
#[inline]
#[target_feature(enable = "avx2")]
fn lanes(codes: __m256i, lens: __m256i) -> [(u64, u64); 4] {
    let (c, n): ([u64; 4], [u64; 4]) = (bytemuck::cast(codes), bytemuck::cast(lens));
    [(c[0], n[0]), (c[1], n[1]), (c[2], n[2]), (c[3], n[3])]
}

/// Joins each 64-bit lane pair (0 and 1, 2 and 3) into its first lane:
/// the codes of lane 1 shifted past those of lane 0, the lengths added.
/// A joined lane is exact only where its length is at most 64.
#[inline]
#[target_feature(enable = "avx2")]
fn join_halves(codes: __m256i, lens: __m256i) -> (__m256i, __m256i) {
    let (next_codes, next_lens) = (_mm256_srli_si256::<8>(codes), _mm256_srli_si256::<8>(lens));
    (
        _mm256_or_si256(codes, _mm256_sllv_epi64(next_codes, lens)),
        _mm256_add_epi64(lens, next_lens),
    )
}

/// Writes `N` (code, length) lanes of at most 56 bits each.
#[inline]
#[target_feature(enable = "avx2,bmi1,bmi2")]
fn write_lanes<const N: usize>(w: &mut BitWriter<'_>, lanes: [(u64, u64); N]) {
    // At most 7 + 8 * 48 or 7 + 4 * 56 bits: one 64-byte window,
    // bounds-checked once, holds every store.
    let start = w.pos;
    let Some(window) = w.out.get_mut(start..start + 64) else {
        for (code, len) in lanes {
            w.put(code, len as u32);
            w.flush();
        }
        return;
    };
    let (mut bits, mut count, mut at) = (w.bits, w.count, 0usize);
    for (code, len) in lanes {
        bits |= code << count;
        count += len as u32;
        // `at` never passes 48; the `min` lets the compiler drop the
        // bounds check.
        let o = at.min(56);
        window[o..o + 8].copy_from_slice(&bits.to_le_bytes());
        let bytes = count / 8;
        at += bytes as usize;
        bits >>= bytes * 8;
        count -= bytes * 8;
    }
    (w.pos, w.bits, w.count) = (start + at, bits, count);
}

/// Joins 16-bit codes (the first byte of each, plus the second byte
/// shifted into place) pairwise into 32-bit lanes, then into 64-bit lanes:
/// each 64-bit lane holds four codes, the first in its lowest bits.
#[inline]
#[target_feature(enable = "avx2")]
fn join_quads(l: &Lookups, first: __m256i, second: __m256i, len: __m256i) -> (__m256i, __m256i) {
    let code16 = _mm256_or_si256(first, _mm256_srli_epi16::<4>(second));
    let low16 = _mm256_set1_epi32(0xffff);
    let code32 = _mm256_or_si256(
        _mm256_and_si256(code16, low16),
        _mm256_sllv_epi32(
            _mm256_srli_epi32::<16>(code16),
            _mm256_and_si256(len, low16),
        ),
    );
    let len32 = _mm256_madd_epi16(len, _mm256_set1_epi16(1));
    let low32 = _mm256_set1_epi64x(0xffff_ffff);
    let code64 = _mm256_or_si256(
        _mm256_and_si256(code32, low32),
        _mm256_sllv_epi64(
            _mm256_srli_epi64::<32>(code32),
            _mm256_and_si256(len32, low32),
        ),
    );
    // Each 32-bit length is below 256: summing a lane's bytes adds the two.
    (code64, _mm256_sad_epu8(len32, l.zero))
}

#[cfg(test)]
mod tests {
    use super::super::tests::xorshift;
    use super::*;

    /// Residual-like bytes: `spread` values around zero (or every byte
    /// value for 256), from a fixed seed; zero bytes are made ones when
    /// `no_zero` is set.
    fn residuals(len: usize, spread: u32, seed: u32, no_zero: bool) -> Vec<u8> {
        let mut next = xorshift(seed);
        (0..len)
            .map(|_| {
                let b = ((next() % spread) as i32 - (spread / 2) as i32) as u8;
                if no_zero && b == 0 { 1 } else { b }
            })
            .collect()
    }

    fn spreads() -> [u32; 6] {
        [3, 9, 31, 61, 121, 256]
    }

    #[test]
    fn shaped_lengths_are_complete_codes_of_the_shape() {
        for spread in spreads() {
            let (lengths, prefix_bits) =
                shaped_lengths(&sample_counts(&residuals(50_000, spread, 5, false)))
                    .expect("a shaped code");
            let kraft: f64 = lengths.iter().map(|&l| 0.5f64.powi(i32::from(l))).sum();
            assert!(
                (kraft - 1.0).abs() < 1e-12,
                "spread {spread}: Kraft sum {kraft}"
            );
            assert!((5..=8).contains(&prefix_bits), "spread {spread}");
            assert!(lengths[16..240].iter().all(|&l| l == prefix_bits + 4));
            let singles = lengths[..16].iter().chain(&lengths[240..256]);
            assert!(
                singles.clone().all(|&l| (1..=8).contains(&l)),
                "spread {spread}"
            );
            assert!(lengths[256..].iter().all(|&l| (1..=MAX_BITS).contains(&l)));
        }
    }

    #[test]
    fn wide_residuals_get_shorter_mid_codes_than_narrow_ones() {
        let mid_len = |spread| {
            let counts = sample_counts(&residuals(50_000, spread, 9, false));
            shaped_lengths(&counts).expect("a shaped code").1 + 4
        };
        assert_eq!(
            mid_len(9),
            12,
            "literals 16..240 never occur: longest codes"
        );
        assert!(
            mid_len(121) < 11,
            "most literals are mid ones: {}",
            mid_len(121)
        );
    }

    #[test]
    fn the_avx2_coder_writes_the_code_tables_codes() {
        if !(std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("bmi2")) {
            return;
        }
        for spread in spreads() {
            for seed in 1..4 {
                let data = residuals(32 * 50 + 7, spread, seed, true);
                let mut code = LitLenCode::default();
                let (lengths, prefix_bits) =
                    shaped_lengths(&sample_counts(&data)).expect("a shaped code");
                let tables = code.fit_shaped(&lengths, prefix_bits);
                let mut by_table = vec![0u8; data.len() * 2 + 64];
                let mut w = BitWriter::new(&mut by_table);
                code.put_literals(&mut w, &data);
                let len = w.finish();
                let mut by_shuffles = vec![0u8; data.len() * 2 + 64];
                // SAFETY: the CPU has AVX2 and BMI2, checked above.
                let w = unsafe {
                    code.write_data_shaped(BitWriter::new(&mut by_shuffles), &data, &tables)
                };
                assert_eq!(w.finish(), len, "spread {spread}, seed {seed}");
                assert_eq!(
                    by_shuffles[..len],
                    by_table[..len],
                    "spread {spread}, seed {seed}"
                );
            }
        }
    }
}
