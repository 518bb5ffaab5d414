//! The model's matrix products, `y = x · Wᵀ + b`, against weights packed once at load.
//!
//! A query is 10–40 rows against weights of 384×1152 (query, key and value side by side),
//! 384×384, 384×1536 and 1536×384; a document up to 256 rows. At those sizes a general
//! gemm spends its time re-packing the weights and the input on every call; here the
//! weights are packed once, at load, into the order the kernel reads them, and the input is
//! read where it lies:
//!
//! - **Panels.** W (outputs × inputs, PyTorch's layout) becomes panels of `NR` = 16 output
//!   columns; a panel holds, for each input k in turn, its 16 weights of input k. A tile's
//!   inner loop then reads 64 contiguous bytes of weights and one input value a step.
//! - **Tiles.** `MR` = 6 rows × 16 columns of the output live in twelve AVX registers for
//!   the whole sum over k (two FMAs a row a step; 12 accumulators + 2 weight vectors + 1
//!   broadcast input fit the 16 registers). Fewer rows at the end of a block use the
//!   same kernel with fewer accumulators, so a row's result never depends on its position;
//!   a last tile of one or two rows takes four or three panels at once (`tile_panels`),
//!   since its few sums would otherwise wait on each other's fused multiply-adds.
//!   Where the CPU has AVX-512, a 16-column row is one register: the tile is `WIDE_MR` = 12
//!   rows (twelve accumulators, as many FMAs in flight as the AVX2 tile) and each FMA does
//!   twice the work. ONNX Runtime's kernels use AVX-512 on such CPUs; with AVX2 alone a
//!   document's products ran at about half the machine's arithmetic rate. The AVX-512
//!   kernel takes two panels at a time (`tile_pair`: 24 accumulators), so each broadcast
//!   input feeds two FMAs: with one panel a step was as many loads as FMAs.
//! - **Blocks.** Rows go in blocks that keep the input in L2 (~192 KB) while every panel
//!   streams past it: a query is one block, and the weights are read once a product.
//! - **Threads.** With more than one kernel thread (the team of `threads`,
//!   `set_kernel_threads`), the panels are split between the threads: each writes only its
//!   own output columns.
//!
//! The sum over k for one output runs in the same order (bias first, then k = 0, 1, …) in
//! both kernels; the AVX2 one fuses each multiply and add (one rounding), the portable one
//! rounds twice. Both are within K·ε·Σ|x_k·w_k| of the exact sum (a test holds them to it).

use std::ops::Range;

/// Output columns a panel holds: two 8-lane AVX vectors.
pub const NR: usize = 16;
/// Rows a tile holds (the AVX2 kernel keeps `MR × NR` sums in registers).
pub const MR: usize = 6;
/// Rows an AVX-512 tile holds: twelve 16-lane accumulators, one weight vector and one
/// broadcast input of the 32 registers, and twelve independent FMAs to hide their latency.
const WIDE_MR: usize = 12;
/// Bytes of input a row block aims to keep in L2 while the panels stream past.
pub(crate) const BLOCK_BYTES: usize = 192 * 1024;
/// How far ahead of a tile's current step its weights are prefetched, in values.
pub(crate) const PREFETCH_AHEAD: usize = 32 * NR;
/// The most panels a short tile is computed for at once (`Kernel::panels_at_once`).
const MAX_PANELS_AT_ONCE: usize = 4;
/// Below this many multiply-adds a product runs on the calling thread alone: handing work
/// to another thread costs microseconds.
const PARALLEL_MIN_WORK: usize = 1 << 18;

/// What is applied to the outputs after the product.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Epilogue {
    /// Nothing: `x · Wᵀ + b`.
    None,
    /// The exact (erf) GELU of the feed-forward layer.
    Gelu,
}

/// A linear layer's weights and bias, packed for the kernels.
pub struct PackedLinear {
    inputs: usize,
    outputs: usize,
    /// `outputs.div_ceil(NR)` panels of `inputs × NR` values; columns past `outputs` are 0.
    panels: Vec<f32>,
    /// The bias, padded with zeros to a whole number of panels.
    bias: Vec<f32>,
}

impl PackedLinear {
    /// Packs `weight` (`outputs × inputs`, row-major: PyTorch's `Linear.weight`) and `bias`
    /// (`outputs`). Panics if the lengths disagree with the shape: the caller read both
    /// from tensors of checked shape.
    pub fn new(weight: &[f32], bias: &[f32], inputs: usize, outputs: usize) -> Self {
        assert_eq!(
            weight.len(),
            inputs * outputs,
            "weight is not outputs × inputs"
        );
        assert_eq!(bias.len(), outputs, "bias is not one value an output");
        let panel_count = outputs.div_ceil(NR);
        let mut panels = vec![0.0f32; panel_count * inputs * NR];
        for (panel_index, panel) in panels.chunks_exact_mut(inputs * NR).enumerate() {
            for (lane, column) in (panel_index * NR..(panel_index + 1) * NR).enumerate() {
                if column >= outputs {
                    break;
                }
                let row = &weight[column * inputs..(column + 1) * inputs];
                for (k, &value) in row.iter().enumerate() {
                    panel[k * NR + lane] = value;
                }
            }
        }
        let mut padded_bias = bias.to_vec();
        padded_bias.resize(panel_count * NR, 0.0);
        PackedLinear {
            inputs,
            outputs,
            panels,
            bias: padded_bias,
        }
    }

    /// Panel `index`'s weights (`inputs × NR`) and its bias (`NR`).
    fn panel(&self, index: usize) -> (&[f32], &[f32]) {
        let k = self.inputs;
        (
            &self.panels[index * k * NR..(index + 1) * k * NR],
            &self.bias[index * NR..(index + 1) * NR],
        )
    }

    /// The width of an output row.
    pub fn outputs(&self) -> usize {
        self.outputs
    }

    /// `out = epilogue(x · Wᵀ + b)` for `x` of `rows × inputs` and `out` of
    /// `rows × outputs`, both row-major. `kernel` picks the tile kernel (`Kernel::best()`
    /// outside tests).
    pub fn forward(&self, x: &[f32], out: &mut [f32], epilogue: Epilogue, kernel: Kernel) {
        let rows = x.len() / self.inputs.max(1);
        assert_eq!(x.len(), rows * self.inputs, "input is not rows × inputs");
        assert_eq!(
            out.len(),
            rows * self.outputs,
            "output is not rows × outputs"
        );
        let target = OutputColumns::new(out);
        split_panels(
            rows * self.inputs * self.outputs,
            self.bias.len() / NR,
            |panels| self.run_panels(x, rows, &target, panels, epilogue, kernel),
        );
    }

    /// Computes the output columns of `panels` for every row and writes them to `target`.
    fn run_panels(
        &self,
        x: &[f32],
        rows: usize,
        target: &OutputColumns<'_>,
        panels: Range<usize>,
        epilogue: Epilogue,
        kernel: Kernel,
    ) {
        let k = self.inputs;
        let tile_rows_max = kernel.tile_rows();
        let (mut tile, mut tile_b) = ([[0.0f32; NR]; WIDE_MR], [[0.0f32; NR]; WIDE_MR]);
        let mut short_tiles = [[[0.0f32; NR]; WIDE_MR]; MAX_PANELS_AT_ONCE];
        let first_column = panels.start * NR;
        let end_column = (panels.end * NR).min(self.outputs);
        for block in kernel.row_blocks(rows, k) {
            let (block_start, block_end) = (block.start, block.end);
            // Copies a tile's first `tile_rows` rows to the output columns of panel
            // `panel_index`, rows from `tile_start`.
            let write_back = |tile: &[[f32; NR]; WIDE_MR], tile_start, tile_rows, panel_index| {
                let column = panel_index * NR;
                let width = NR.min(self.outputs - column);
                for (row, values) in tile.iter().take(tile_rows).enumerate() {
                    let at = (tile_start + row) * self.outputs + column;
                    // SAFETY: `at + width ≤ rows × outputs` (row < rows, column + width ≤
                    // outputs), and these columns belong to this call's panels alone (see
                    // `OutputColumns`).
                    unsafe { target.write(at, &values[..width]) };
                }
            };
            // A short last tile computes several panels at once where the kernel does
            // (`panels_at_once`): then the whole tiles of that many panels go first,
            // panel by panel, and the short one takes them together.
            let short_rows = (block_end - block_start) % tile_rows_max;
            let at_once = kernel.panels_at_once(short_rows);
            let mut panel_index = panels.start;
            while at_once > 1 && panel_index + at_once <= panels.end {
                let short_start = block_end - short_rows;
                for p in panel_index..panel_index + at_once {
                    let (weights, bias) = self.panel(p);
                    for tile_start in (block_start..short_start).step_by(tile_rows_max) {
                        let a = &x[tile_start * k..(tile_start + tile_rows_max) * k];
                        kernel.tile(a, tile_rows_max, k, weights, bias, &mut tile);
                        write_back(&tile, tile_start, tile_rows_max, p);
                    }
                }
                let group = (
                    &self.panels[panel_index * k * NR..(panel_index + at_once) * k * NR],
                    &self.bias[panel_index * NR..(panel_index + at_once) * NR],
                );
                let a = &x[short_start * k..block_end * k];
                kernel.tile_panels(a, short_rows, k, at_once, group, &mut short_tiles);
                for (p, short_tile) in short_tiles.iter().take(at_once).enumerate() {
                    write_back(short_tile, short_start, short_rows, panel_index + p);
                }
                panel_index += at_once;
            }
            while panel_index < panels.end {
                let first = self.panel(panel_index);
                let second = (kernel.pairs_panels() && panel_index + 1 < panels.end)
                    .then(|| self.panel(panel_index + 1));
                for tile_range in kernel.row_tiles(block_start..block_end) {
                    let (tile_start, tile_rows) = (tile_range.start, tile_range.len());
                    let a = &x[tile_start * k..(tile_start + tile_rows) * k];
                    match second {
                        Some(second) => {
                            kernel.tile_pair(
                                a,
                                tile_rows,
                                k,
                                first,
                                second,
                                &mut tile,
                                &mut tile_b,
                            );
                            write_back(&tile, tile_start, tile_rows, panel_index);
                            write_back(&tile_b, tile_start, tile_rows, panel_index + 1);
                        }
                        None => {
                            kernel.tile(a, tile_rows, k, first.0, first.1, &mut tile);
                            write_back(&tile, tile_start, tile_rows, panel_index);
                        }
                    }
                }
                panel_index += if second.is_some() { 2 } else { 1 };
            }
            // SAFETY: this call's own columns of rows it has just written.
            unsafe {
                target.apply(
                    epilogue,
                    block_start..block_end,
                    self.outputs,
                    first_column..end_column,
                )
            };
        }
    }
}

/// Runs `run` over the panels `0..panel_count` of a product of `work` multiply-adds: on
/// the calling thread alone below [`PARALLEL_MIN_WORK`] or on a team of one, else as
/// contiguous ranges of panels, as many as the kernels' team asks for (`Team::parts`;
/// each range writes only its own columns).
pub(crate) fn split_panels(work: usize, panel_count: usize, run: impl Fn(Range<usize>) + Sync) {
    crate::threads::with_current(|team| {
        let parts = team
            .parts(work >= PARALLEL_MIN_WORK)
            .clamp(1, panel_count.max(1));
        if parts <= 1 {
            run(0..panel_count);
        } else {
            team.split(parts, &|part| {
                run(panel_count * part / parts..panel_count * (part + 1) / parts)
            });
        }
    })
}

/// The output matrix, shared by the threads of one product. Each thread writes only the
/// columns of its own panels, so no two threads touch the same element, and the product
/// returns only after every thread is done (`Team::split` waits for every part). The int8
/// products (`quantized`) share it.
pub(crate) struct OutputColumns<'a> {
    start: *mut f32,
    len: usize,
    /// Holds the borrow of the output for as long as the pointer is used.
    _out: std::marker::PhantomData<&'a mut [f32]>,
}

// SAFETY: the pointer is to a `&mut [f32]` borrowed for the whole product; the threads
// write disjoint elements of it (see above).
unsafe impl Sync for OutputColumns<'_> {}

impl<'a> OutputColumns<'a> {
    /// The whole of `out`, borrowed for as long as the product runs.
    pub(crate) fn new(out: &'a mut [f32]) -> Self {
        OutputColumns {
            start: out.as_mut_ptr(),
            len: out.len(),
            _out: std::marker::PhantomData,
        }
    }

    /// Copies `values` to elements `at..at + values.len()`. A whole panel's row (`NR`
    /// values, the f32 and int8 tiles' usual write) is a copy of known length, one vector
    /// store; a copy of run-time length called memcpy, 2% of a document's time.
    ///
    /// # Safety
    /// The range must be in bounds and written by no other thread during the product.
    #[inline(always)]
    pub(crate) unsafe fn write(&self, at: usize, values: &[f32]) {
        debug_assert!(at + values.len() <= self.len);
        let to = self.start.wrapping_add(at);
        // SAFETY: in bounds and exclusive to this thread (the caller's promise).
        unsafe {
            if values.len() == NR {
                std::ptr::copy_nonoverlapping(values.as_ptr(), to, NR)
            } else {
                std::ptr::copy_nonoverlapping(values.as_ptr(), to, values.len())
            }
        }
    }

    /// Applies `epilogue` to `columns` of each row in `rows` of a matrix `width` wide.
    ///
    /// # Safety
    /// As for `write`: those elements are in bounds and touched by no other thread.
    pub(crate) unsafe fn apply(
        &self,
        epilogue: Epilogue,
        rows: Range<usize>,
        width: usize,
        columns: Range<usize>,
    ) {
        if epilogue == Epilogue::Gelu {
            for row in rows {
                let at = row * width;
                // SAFETY: in bounds and exclusive to this thread (the caller's promise).
                let values = unsafe { self.slice(at + columns.start, at + columns.end) };
                crate::kernels::gelu_slice(values);
            }
        }
    }

    /// Elements `from..to` as a slice.
    ///
    /// # Safety
    /// As for `write`: in bounds, and touched by no other thread during the product.
    #[allow(clippy::mut_from_ref)]
    unsafe fn slice(&self, from: usize, to: usize) -> &mut [f32] {
        debug_assert!(from <= to && to <= self.len);
        // SAFETY: in bounds and exclusive to this thread (the caller's promise).
        unsafe { std::slice::from_raw_parts_mut(self.start.add(from), to - from) }
    }
}

/// Which tile kernel runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kernel {
    /// Plain Rust, any CPU.
    Portable,
    /// AVX2 with fused multiply-add (x86-64 only; chosen only where the CPU has both).
    #[cfg(target_arch = "x86_64")]
    Avx2Fma,
    /// AVX-512F (x86-64 only; chosen only where the CPU has it, and AVX2 and FMA too, which
    /// the int8 products use for it): the same fused sums as `Avx2Fma`, so the same bits.
    #[cfg(target_arch = "x86_64")]
    Avx512,
}

impl Kernel {
    /// The fastest kernel this CPU runs.
    pub fn best() -> Kernel {
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma")
        {
            if std::arch::is_x86_feature_detected!("avx512f") {
                return Kernel::Avx512;
            }
            return Kernel::Avx2Fma;
        }
        Kernel::Portable
    }

    /// The most rows one tile of this kernel computes.
    fn tile_rows(self) -> usize {
        match self {
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx512 => WIDE_MR,
            _ => MR,
        }
    }

    /// The row blocks of a product of `rows` rows of `k` inputs, each small enough to keep
    /// its input in L2 (`BLOCK_BYTES`) while the panels stream past: every block reads all
    /// the weights once more, so there are as few as that allows. The AVX-512 kernel cuts
    /// the rows into blocks of near-equal size (a query of 30 rows against the 1,536-wide
    /// down-projection was a block of 24 rows and one of 6: two passes over the weights for
    /// a 6-row remainder, where one block of 30 fits the budget's rounding); the others keep
    /// blocks of whole tiles, as their short-tile path was measured with.
    fn row_blocks(self, rows: usize, k: usize) -> impl Iterator<Item = Range<usize>> {
        let tile_rows = self.tile_rows();
        let budget_rows = (BLOCK_BYTES / (k.max(1) * 4)).max(tile_rows);
        match self.cuts_evenly() {
            true => runs(0..rows, budget_rows, true),
            false => runs(0..rows, budget_rows / tile_rows * tile_rows, false),
        }
    }

    /// The tiles of a block of rows. The AVX-512 kernel cuts a block into tiles of
    /// near-equal height: a tile of `h` rows keeps `2·h` chains of fused multiply-adds in
    /// flight, and a last tile of one to three rows (a query of 13–15 or 25–27 word pieces)
    /// left the FMA units waiting on each other's results, so 13 rows go as 7 + 6, not
    /// 12 + 1. A row's sums are the same steps in the same order in a tile of any height,
    /// so the same bits. The AVX2 kernel keeps whole tiles and its several-panel short tile
    /// (`panels_at_once`).
    fn row_tiles(self, block: Range<usize>) -> impl Iterator<Item = Range<usize>> {
        runs(block, self.tile_rows(), self.cuts_evenly())
    }

    /// Whether blocks and tiles are cut to near-equal sizes (`row_blocks`, `row_tiles`):
    /// for the kernel that pairs panels, the one measured with it.
    fn cuts_evenly(self) -> bool {
        self.pairs_panels()
    }

    /// How many panels a short tile of `rows` rows computes at once (`tile_panels`): more
    /// than one only for the AVX2 kernel's tiles of 1 and 2 rows, whose sums otherwise
    /// wait on each other (AVX-512 pairs panels for every tile already). Three rows of two
    /// panels need 17 of the 16 registers: the spills made those queries 0.7 ms slower.
    fn panels_at_once(self, rows: usize) -> usize {
        match (self, rows) {
            #[cfg(target_arch = "x86_64")]
            (Kernel::Avx2Fma, 1) => 4,
            #[cfg(target_arch = "x86_64")]
            (Kernel::Avx2Fma, 2) => 3,
            _ => 1,
        }
    }

    /// `tiles[p]` as `tile` computes it for the `count` consecutive panels whose weights
    /// and biases are `panels` and `bias`, `count` being `panels_at_once(rows)` (> 1):
    /// the same sums, so the same bits.
    fn tile_panels(
        self,
        a: &[f32],
        rows: usize,
        k: usize,
        count: usize,
        (panels, bias): (&[f32], &[f32]),
        tiles: &mut [[[f32; NR]; WIDE_MR]; MAX_PANELS_AT_ONCE],
    ) {
        assert!(count > 1 && count == self.panels_at_once(rows) && a.len() == rows * k);
        assert!(panels.len() == count * k * NR && bias.len() == count * NR);
        #[cfg(target_arch = "x86_64")]
        if self == Kernel::Avx2Fma {
            // SAFETY: `Avx2Fma` is only chosen (`best`, or a test that checked) where the
            // CPU has AVX2 and FMA; the lengths were checked just above, and `tiles`
            // holds `MAX_PANELS_AT_ONCE` ≥ 4 tiles.
            unsafe {
                match rows {
                    1 => avx2_narrow::tile_panels::<1, 4>(a, k, panels, bias, tiles),
                    _ => avx2_narrow::tile_panels::<2, 3>(a, k, panels, bias, tiles),
                }
            }
            return;
        }
        unreachable!("only the AVX2 kernel computes several panels of a short tile at once");
    }

    /// Whether the kernel computes two panels' tiles at once (`tile_pair`).
    fn pairs_panels(self) -> bool {
        match self {
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx512 => true,
            _ => false,
        }
    }

    /// `tile` and `tile_b` as `tile` computes them for panels `first` and `second` (weights
    /// and bias each), from one pass over `a`: the same sums, so the same bits. Only for a
    /// kernel that `pairs_panels`; any other computes the two tiles one after the other.
    #[allow(clippy::too_many_arguments)]
    fn tile_pair(
        self,
        a: &[f32],
        rows: usize,
        k: usize,
        first: (&[f32], &[f32]),
        second: (&[f32], &[f32]),
        tile: &mut [[f32; NR]; WIDE_MR],
        tile_b: &mut [[f32; NR]; WIDE_MR],
    ) {
        #[cfg(target_arch = "x86_64")]
        if self == Kernel::Avx512 {
            assert!((1..=WIDE_MR).contains(&rows) && a.len() == rows * k);
            for (panel, bias) in [first, second] {
                assert!(panel.len() == k * NR && bias.len() == NR);
            }
            // SAFETY: `Avx512` is only chosen (`best`, or a test that checked) where the CPU
            // has AVX-512F; the lengths were checked just above.
            unsafe {
                let (p, q) = (first, second);
                match rows {
                    1 => avx512::tile_pair::<1>(a, k, p, q, tile, tile_b),
                    2 => avx512::tile_pair::<2>(a, k, p, q, tile, tile_b),
                    3 => avx512::tile_pair::<3>(a, k, p, q, tile, tile_b),
                    4 => avx512::tile_pair::<4>(a, k, p, q, tile, tile_b),
                    5 => avx512::tile_pair::<5>(a, k, p, q, tile, tile_b),
                    6 => avx512::tile_pair::<6>(a, k, p, q, tile, tile_b),
                    7 => avx512::tile_pair::<7>(a, k, p, q, tile, tile_b),
                    8 => avx512::tile_pair::<8>(a, k, p, q, tile, tile_b),
                    9 => avx512::tile_pair::<9>(a, k, p, q, tile, tile_b),
                    10 => avx512::tile_pair::<10>(a, k, p, q, tile, tile_b),
                    11 => avx512::tile_pair::<11>(a, k, p, q, tile, tile_b),
                    _ => avx512::tile_pair::<12>(a, k, p, q, tile, tile_b),
                }
            }
            return;
        }
        self.tile(a, rows, k, first.0, first.1, tile);
        self.tile(a, rows, k, second.0, second.1, tile_b);
    }

    /// The first `rows` (≤ `tile_rows()`) rows of `tile` = bias + `a` (rows × k) · panel
    /// (k × NR).
    fn tile(
        self,
        a: &[f32],
        rows: usize,
        k: usize,
        panel: &[f32],
        bias: &[f32],
        tile: &mut [[f32; NR]; WIDE_MR],
    ) {
        assert!((1..=self.tile_rows()).contains(&rows) && a.len() == rows * k);
        assert!(panel.len() == k * NR && bias.len() == NR);
        match self {
            Kernel::Portable => tile_portable(a, rows, k, panel, bias, tile),
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx2Fma => {
                // SAFETY: `Avx2Fma` is only chosen (`best`, or a test that checked) where the
                // CPU has AVX2 and FMA; the lengths were checked just above.
                unsafe {
                    match rows {
                        1 => avx2::tile::<1>(a, k, panel, bias, tile),
                        2 => avx2::tile::<2>(a, k, panel, bias, tile),
                        3 => avx2::tile::<3>(a, k, panel, bias, tile),
                        4 => avx2::tile::<4>(a, k, panel, bias, tile),
                        5 => avx2::tile::<5>(a, k, panel, bias, tile),
                        _ => avx2::tile::<6>(a, k, panel, bias, tile),
                    }
                }
            }
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx512 => {
                // SAFETY: `Avx512` is only chosen (`best`, or a test that checked) where the
                // CPU has AVX-512F; the lengths were checked just above.
                unsafe {
                    match rows {
                        1 => avx512::tile::<1>(a, k, panel, bias, tile),
                        2 => avx512::tile::<2>(a, k, panel, bias, tile),
                        3 => avx512::tile::<3>(a, k, panel, bias, tile),
                        4 => avx512::tile::<4>(a, k, panel, bias, tile),
                        5 => avx512::tile::<5>(a, k, panel, bias, tile),
                        6 => avx512::tile::<6>(a, k, panel, bias, tile),
                        7 => avx512::tile::<7>(a, k, panel, bias, tile),
                        8 => avx512::tile::<8>(a, k, panel, bias, tile),
                        9 => avx512::tile::<9>(a, k, panel, bias, tile),
                        10 => avx512::tile::<10>(a, k, panel, bias, tile),
                        11 => avx512::tile::<11>(a, k, panel, bias, tile),
                        _ => avx512::tile::<12>(a, k, panel, bias, tile),
                    }
                }
            }
        }
    }
}

/// `range` cut into `ceil(len / most)` runs of at most `most`: of near-equal length when
/// `even` (the first ones one longer), else each `most` long but the last.
fn runs(range: Range<usize>, most: usize, even: bool) -> impl Iterator<Item = Range<usize>> {
    let most = most.max(1);
    let count = range.len().div_ceil(most);
    let (base, longer) = match even && count > 0 {
        true => (range.len() / count, range.len() % count),
        false => (most, 0),
    };
    let (mut start, end) = (range.start, range.end);
    (0..count).map(move |index| {
        let run = start..(start + base + usize::from(index < longer)).min(end);
        start = run.end;
        run
    })
}

fn tile_portable(
    a: &[f32],
    rows: usize,
    k: usize,
    panel: &[f32],
    bias: &[f32],
    tile: &mut [[f32; NR]; WIDE_MR],
) {
    for (row, sums) in tile.iter_mut().take(rows).enumerate() {
        sums.copy_from_slice(bias);
        let inputs = &a[row * k..(row + 1) * k];
        for (&input, weights) in inputs.iter().zip(panel.chunks_exact(NR)) {
            for (sum, &weight) in sums.iter_mut().zip(weights) {
                *sum += input * weight;
            }
        }
    }
}

#[cfg(target_arch = "x86_64")]
mod avx2 {
    use std::arch::x86_64::*;

    use super::{MR, NR, PREFETCH_AHEAD, WIDE_MR};

    /// `R` rows of the tile: bias + a (R × k) · panel (k × NR), the sums kept in 2·R
    /// registers for the whole loop over k.
    ///
    /// # Safety
    /// The CPU must have AVX2 and FMA; `a.len() == R·k`, `panel.len() == k·NR`,
    /// `bias.len() == NR`, `R ≤ MR`.
    #[target_feature(enable = "avx2,fma")]
    pub unsafe fn tile<const R: usize>(
        a: &[f32],
        k: usize,
        panel: &[f32],
        bias: &[f32],
        tile: &mut [[f32; NR]; WIDE_MR],
    ) {
        debug_assert!(R <= MR && a.len() == R * k && panel.len() == k * NR && bias.len() == NR);
        let (a, weights) = (a.as_ptr(), panel.as_ptr());
        // SAFETY (every block below): reads stay inside `bias` (16 values), `panel`
        // (step · NR + 16 ≤ k · NR) and `a` (row · k + step < R · k), the lengths the
        // caller promised; writes go to the tile's first R rows of 16 values.
        let low = unsafe { _mm256_loadu_ps(bias.as_ptr()) };
        let high = unsafe { _mm256_loadu_ps(bias.as_ptr().add(8)) };
        let mut sums = [[low, high]; R];
        for step in 0..k {
            _mm_prefetch::<_MM_HINT_T0>(
                weights.wrapping_add(step * NR + PREFETCH_AHEAD) as *const i8
            );
            let w_low = unsafe { _mm256_loadu_ps(weights.add(step * NR)) };
            let w_high = unsafe { _mm256_loadu_ps(weights.add(step * NR + 8)) };
            for (row, sum) in sums.iter_mut().enumerate() {
                let input = unsafe { _mm256_broadcast_ss(&*a.add(row * k + step)) };
                sum[0] = _mm256_fmadd_ps(input, w_low, sum[0]);
                sum[1] = _mm256_fmadd_ps(input, w_high, sum[1]);
            }
        }
        for (row, sum) in sums.iter().enumerate() {
            unsafe {
                _mm256_storeu_ps(tile[row].as_mut_ptr(), sum[0]);
                _mm256_storeu_ps(tile[row].as_mut_ptr().add(8), sum[1]);
            }
        }
    }
}

#[cfg(target_arch = "x86_64")]
mod avx2_narrow {
    use std::arch::x86_64::*;

    use super::{NR, PREFETCH_AHEAD, WIDE_MR};

    /// `R` rows of `P` consecutive panels' tiles at once: `tiles[p]` = bias of panel `p` +
    /// a (R × k) · panel `p` (k × NR). For the last, short tile of a block: one row of one
    /// panel is two chains of fused multiply-adds, each waiting for the last (four to five
    /// cycles), so a 1-row tile took nearly as long as a 6-row one; `P` panels give each
    /// step `2·R·P` independent sums. Each output sees the same fused steps in the same
    /// order (bias, then k = 0, 1, …) as in `avx2::tile`, so the same bits.
    ///
    /// # Safety
    /// The CPU must have AVX2 and FMA; `a.len() == R·k`, `panels.len() == P·k·NR` (the
    /// panels one after another, as `PackedLinear` holds them), `bias.len() == P·NR`,
    /// `R ≤ WIDE_MR`, `tiles.len() >= P`.
    // The panel index also places each panel's weights: a range loop reads plainest.
    #[allow(clippy::needless_range_loop)]
    #[target_feature(enable = "avx2,fma")]
    pub unsafe fn tile_panels<const R: usize, const P: usize>(
        a: &[f32],
        k: usize,
        panels: &[f32],
        bias: &[f32],
        tiles: &mut [[[f32; NR]; WIDE_MR]],
    ) {
        debug_assert!(
            a.len() == R * k
                && panels.len() == P * k * NR
                && bias.len() == P * NR
                && tiles.len() >= P
        );
        let (a, weights) = (a.as_ptr(), panels.as_ptr());
        // SAFETY (every block below): reads stay inside `bias` (P · 16 values), `panels`
        // (p · k · NR + step · NR + 16 ≤ P · k · NR) and `a` (row · k + step < R · k), the
        // lengths the caller promised; writes go to the first R rows of P tiles.
        let mut sums = [[[_mm256_setzero_ps(); 2]; P]; R];
        for p in 0..P {
            let low = unsafe { _mm256_loadu_ps(bias.as_ptr().add(p * NR)) };
            let high = unsafe { _mm256_loadu_ps(bias.as_ptr().add(p * NR + 8)) };
            for row in sums.iter_mut() {
                row[p] = [low, high];
            }
        }
        for step in 0..k {
            let mut inputs = [_mm256_setzero_ps(); R];
            for (row, input) in inputs.iter_mut().enumerate() {
                *input = unsafe { _mm256_broadcast_ss(&*a.add(row * k + step)) };
            }
            for p in 0..P {
                let at = p * k * NR + step * NR;
                _mm_prefetch::<_MM_HINT_T0>(weights.wrapping_add(at + PREFETCH_AHEAD) as *const i8);
                let w_low = unsafe { _mm256_loadu_ps(weights.add(at)) };
                let w_high = unsafe { _mm256_loadu_ps(weights.add(at + 8)) };
                for (row, input) in inputs.iter().enumerate() {
                    sums[row][p][0] = _mm256_fmadd_ps(*input, w_low, sums[row][p][0]);
                    sums[row][p][1] = _mm256_fmadd_ps(*input, w_high, sums[row][p][1]);
                }
            }
        }
        for (row, panels) in sums.iter().enumerate() {
            for (p, sum) in panels.iter().enumerate() {
                unsafe {
                    _mm256_storeu_ps(tiles[p][row].as_mut_ptr(), sum[0]);
                    _mm256_storeu_ps(tiles[p][row].as_mut_ptr().add(8), sum[1]);
                }
            }
        }
    }
}

#[cfg(target_arch = "x86_64")]
mod avx512 {
    use std::arch::x86_64::*;

    use super::{NR, PREFETCH_AHEAD, WIDE_MR};

    /// `R` rows of the tile: bias + a (R × k) · panel (k × NR), a row's 16 sums in one
    /// register for the whole loop over k. Each sum sees the same fused steps in the same
    /// order as in `avx2::tile`, so the two give the same bits.
    ///
    /// # Safety
    /// The CPU must have AVX-512F; `a.len() == R·k`, `panel.len() == k·NR`,
    /// `bias.len() == NR`, `R ≤ WIDE_MR`.
    #[target_feature(enable = "avx512f")]
    pub unsafe fn tile<const R: usize>(
        a: &[f32],
        k: usize,
        panel: &[f32],
        bias: &[f32],
        tile: &mut [[f32; NR]; WIDE_MR],
    ) {
        debug_assert!(
            R <= WIDE_MR && a.len() == R * k && panel.len() == k * NR && bias.len() == NR
        );
        let (a, weights) = (a.as_ptr(), panel.as_ptr());
        // SAFETY (every block below): reads stay inside `bias` (16 values), `panel`
        // (step · NR + 16 ≤ k · NR) and `a` (row · k + step < R · k), the lengths the
        // caller promised; writes go to the tile's first R rows of 16 values.
        let mut sums = [unsafe { _mm512_loadu_ps(bias.as_ptr()) }; R];
        for step in 0..k {
            _mm_prefetch::<_MM_HINT_T0>(
                weights.wrapping_add(step * NR + PREFETCH_AHEAD) as *const i8
            );
            let w = unsafe { _mm512_loadu_ps(weights.add(step * NR)) };
            for (row, sum) in sums.iter_mut().enumerate() {
                let input = _mm512_set1_ps(unsafe { *a.add(row * k + step) });
                *sum = _mm512_fmadd_ps(input, w, *sum);
            }
        }
        for (row, sum) in sums.iter().enumerate() {
            unsafe { _mm512_storeu_ps(tile[row].as_mut_ptr(), *sum) };
        }
    }

    /// `tile` for two panels at once, `R` rows each: 2·R registers of sums, and each
    /// broadcast input feeds two FMAs. With one panel a tile step is twelve FMAs against
    /// thirteen loads; with two it is twenty-four against fourteen. Each sum sees the same
    /// steps in the same order as in `tile`, so the two give the same bits.
    ///
    /// # Safety
    /// As for `tile`, for each panel with its bias.
    #[target_feature(enable = "avx512f")]
    pub unsafe fn tile_pair<const R: usize>(
        a: &[f32],
        k: usize,
        first: (&[f32], &[f32]),
        second: (&[f32], &[f32]),
        tile: &mut [[f32; NR]; WIDE_MR],
        tile_b: &mut [[f32; NR]; WIDE_MR],
    ) {
        debug_assert!(R <= WIDE_MR && a.len() == R * k);
        debug_assert!(first.0.len() == k * NR && second.0.len() == k * NR);
        debug_assert!(first.1.len() == NR && second.1.len() == NR);
        let (a, weights, weights_b) = (a.as_ptr(), first.0.as_ptr(), second.0.as_ptr());
        // SAFETY (every block below): as in `tile`, for each panel and bias.
        let mut sums = [unsafe { _mm512_loadu_ps(first.1.as_ptr()) }; R];
        let mut sums_b = [unsafe { _mm512_loadu_ps(second.1.as_ptr()) }; R];
        for step in 0..k {
            _mm_prefetch::<_MM_HINT_T0>(
                weights.wrapping_add(step * NR + PREFETCH_AHEAD) as *const i8
            );
            _mm_prefetch::<_MM_HINT_T0>(
                weights_b.wrapping_add(step * NR + PREFETCH_AHEAD) as *const i8
            );
            let w = unsafe { _mm512_loadu_ps(weights.add(step * NR)) };
            let w_b = unsafe { _mm512_loadu_ps(weights_b.add(step * NR)) };
            for row in 0..R {
                let input = _mm512_set1_ps(unsafe { *a.add(row * k + step) });
                sums[row] = _mm512_fmadd_ps(input, w, sums[row]);
                sums_b[row] = _mm512_fmadd_ps(input, w_b, sums_b[row]);
            }
        }
        for row in 0..R {
            unsafe {
                _mm512_storeu_ps(tile[row].as_mut_ptr(), sums[row]);
                _mm512_storeu_ps(tile_b[row].as_mut_ptr(), sums_b[row]);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A reproducible pseudo-random matrix in [-1, 1) (a 64-bit LCG's high bits).
    fn matrix(len: usize, seed: u64) -> Vec<f32> {
        let mut state = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
        (0..len)
            .map(|_| {
                state = state
                    .wrapping_mul(6_364_136_223_846_793_005)
                    .wrapping_add(1_442_695_040_888_963_407);
                ((state >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0
            })
            .collect()
    }

    /// Checks `kernel`'s product against an f64 one: each output within
    /// K·ε·(|b| + Σ|x_k·w_k|), the bound for a sum of K+1 terms in f32.
    fn check(kernel: Kernel, rows: usize, inputs: usize, outputs: usize) {
        let x = matrix(rows * inputs, 1);
        let weight = matrix(outputs * inputs, 2);
        let bias = matrix(outputs, 3);
        let layer = PackedLinear::new(&weight, &bias, inputs, outputs);
        let mut out = vec![f32::NAN; rows * outputs];
        layer.forward(&x, &mut out, Epilogue::None, kernel);
        for row in 0..rows {
            for column in 0..outputs {
                let (mut exact, mut magnitude) = (bias[column] as f64, bias[column].abs() as f64);
                for k in 0..inputs {
                    let term = x[row * inputs + k] as f64 * weight[column * inputs + k] as f64;
                    exact += term;
                    magnitude += term.abs();
                }
                let bound = (inputs + 1) as f64 * f32::EPSILON as f64 * magnitude;
                let got = out[row * outputs + column] as f64;
                assert!(
                    (got - exact).abs() <= bound,
                    "{kernel:?} {rows}×{inputs}·{inputs}×{outputs} at ({row}, {column}): \
                     {got} against {exact} (bound {bound:e})"
                );
            }
        }
    }

    /// Every kernel this CPU runs.
    fn kernels() -> Vec<Kernel> {
        let mut kernels = vec![Kernel::Portable];
        #[cfg(target_arch = "x86_64")]
        {
            if Kernel::best() != Kernel::Portable {
                kernels.push(Kernel::Avx2Fma);
            }
            if Kernel::best() == Kernel::Avx512 {
                kernels.push(Kernel::Avx512);
            }
        }
        kernels
    }

    #[test]
    fn runs_cover_the_range_evenly_or_in_whole_runs_and_a_rest() {
        for start in [0, 7] {
            for len in 0..80 {
                for most in 1..14 {
                    for even in [true, false] {
                        let runs: Vec<_> = runs(start..start + len, most, even).collect();
                        let case = format!("{len} by {most}, even {even}: {runs:?}");
                        assert_eq!(runs.len(), len.div_ceil(most), "{case}");
                        let mut at = start;
                        for run in &runs {
                            assert_eq!(run.start, at, "{case}");
                            assert!(!run.is_empty() && run.len() <= most, "{case}");
                            at = run.end;
                        }
                        assert_eq!(at, start + len, "{case}");
                        let lengths: Vec<usize> = runs.iter().map(|run| run.len()).collect();
                        match (even, lengths.split_last()) {
                            (_, None) => {}
                            (true, Some(_)) => {
                                let (low, high) = (lengths.iter().min(), lengths.iter().max());
                                assert!(high.unwrap() - low.unwrap() <= 1, "{case}");
                            }
                            (false, Some((_, whole))) => {
                                assert!(whole.iter().all(|&l| l == most), "{case}")
                            }
                        }
                    }
                }
            }
        }
    }

    #[test]
    #[cfg(target_arch = "x86_64")]
    fn the_avx512_kernel_gives_the_avx2_kernels_bits() {
        if Kernel::best() != Kernel::Avx512 {
            eprintln!("skipped: this CPU has no AVX-512F");
            return;
        }
        // Every AVX-512 tile height (1–12 rows, then whole tiles and a rest), K not a
        // multiple of 8, a partial panel, and rows past one block at K = 1536.
        for (rows, inputs, outputs) in [
            (1, 37, 19),
            (5, 37, 19),
            (11, 37, 19),
            (12, 37, 19),
            (13, 37, 19),
            (15, 37, 19),
            (25, 384, 48),
            (25, 384, 80),
            (27, 384, 48),
            (30, 1536, 32),
            (49, 1536, 32),
            (70, 1536, 32),
        ] {
            let x = matrix(rows * inputs, 13);
            let layer = PackedLinear::new(
                &matrix(outputs * inputs, 14),
                &matrix(outputs, 15),
                inputs,
                outputs,
            );
            let run = |kernel| {
                let mut out = vec![f32::NAN; rows * outputs];
                layer.forward(&x, &mut out, Epilogue::Gelu, kernel);
                out
            };
            let (narrow, wide) = (run(Kernel::Avx2Fma), run(Kernel::Avx512));
            assert!(
                narrow
                    .iter()
                    .zip(&wide)
                    .all(|(n, w)| n.to_bits() == w.to_bits()),
                "{rows}×{inputs}·{inputs}×{outputs}"
            );
        }
    }

    /// A short tile's panels computed together give each panel's tile computed alone,
    /// bit for bit, at K not a multiple of 8, the model's K, and a partial last panel.
    #[test]
    fn short_tiles_of_several_panels_give_each_panels_own_bits() {
        for kernel in kernels() {
            for rows in 1..=MR {
                let at_once = kernel.panels_at_once(rows);
                if at_once == 1 {
                    continue;
                }
                for (inputs, outputs) in [
                    (37, 16 * at_once - 5),
                    (384, 16 * at_once),
                    (1536, 16 * at_once),
                ] {
                    let x = matrix(rows * inputs, 20 + rows as u64);
                    let layer = PackedLinear::new(
                        &matrix(outputs * inputs, 21),
                        &matrix(outputs, 22),
                        inputs,
                        outputs,
                    );
                    let mut together = [[[0.0f32; NR]; WIDE_MR]; MAX_PANELS_AT_ONCE];
                    let group = (&layer.panels[..], &layer.bias[..]);
                    kernel.tile_panels(&x, rows, inputs, at_once, group, &mut together);
                    for (p, tile) in together.iter().take(at_once).enumerate() {
                        let (weights, bias) = layer.panel(p);
                        let mut alone = [[0.0f32; NR]; WIDE_MR];
                        kernel.tile(&x, rows, inputs, weights, bias, &mut alone);
                        for row in 0..rows {
                            assert!(
                                tile[row]
                                    .iter()
                                    .zip(&alone[row])
                                    .all(|(a, b)| a.to_bits() == b.to_bits()),
                                "{kernel:?} rows {rows} K {inputs} panel {p} row {row}"
                            );
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn products_match_f64_within_the_summation_bound() {
        for kernel in kernels() {
            // Every tile height (1–6 rows, and blocks of several tiles), a partial panel
            // (outputs not a multiple of 16), and the model's own shapes.
            for rows in [1, 2, 3, 4, 5, 6, 7, 11, 12, 13, 23, 25] {
                check(kernel, rows, 40, 37);
            }
            check(kernel, 22, 384, 1152);
            check(kernel, 22, 1536, 384);
            // Short last tiles (1 and 2 rows) over panel counts that are and are not a
            // whole number of groups.
            for (rows, outputs) in [(7, 64), (7, 100), (8, 48), (8, 130), (13, 1152), (14, 384)] {
                check(kernel, rows, 384, outputs);
            }
            // More rows than one block holds at K = 1536 (32 rows of 6 KB).
            check(kernel, 70, 1536, 48);
        }
    }

    #[test]
    fn a_row_gets_the_same_bits_whatever_rows_surround_it() {
        // What makes a batch equal its texts encoded alone: tile position and height
        // change nothing in a row's sum.
        let (inputs, outputs) = (384, 64);
        let x = matrix(13 * inputs, 4);
        let layer = PackedLinear::new(
            &matrix(outputs * inputs, 5),
            &matrix(outputs, 6),
            inputs,
            outputs,
        );
        for kernel in kernels() {
            let mut all = vec![0.0; 13 * outputs];
            layer.forward(&x, &mut all, Epilogue::None, kernel);
            for row in 0..13 {
                let mut alone = vec![0.0; outputs];
                layer.forward(
                    &x[row * inputs..(row + 1) * inputs],
                    &mut alone,
                    Epilogue::None,
                    kernel,
                );
                assert_eq!(
                    alone,
                    all[row * outputs..(row + 1) * outputs],
                    "{kernel:?} row {row}"
                );
            }
        }
    }

    #[test]
    fn the_gelu_epilogue_is_the_gelu_of_the_product() {
        let (rows, inputs, outputs) = (9, 48, 80);
        let x = matrix(rows * inputs, 7);
        let layer = PackedLinear::new(
            &matrix(outputs * inputs, 8),
            &matrix(outputs, 9),
            inputs,
            outputs,
        );
        for kernel in kernels() {
            let mut plain = vec![0.0; rows * outputs];
            layer.forward(&x, &mut plain, Epilogue::None, kernel);
            crate::kernels::gelu_slice(&mut plain);
            let mut fused = vec![0.0; rows * outputs];
            layer.forward(&x, &mut fused, Epilogue::Gelu, kernel);
            assert_eq!(fused, plain, "{kernel:?}");
        }
    }

    #[test]
    fn two_threads_give_the_same_bits_as_one() {
        let (rows, inputs, outputs) = (20, 384, 384);
        let x = matrix(rows * inputs, 10);
        let layer = PackedLinear::new(
            &matrix(outputs * inputs, 11),
            &matrix(outputs, 12),
            inputs,
            outputs,
        );
        let kernel = Kernel::best();
        let run = |threads: usize| {
            let team = crate::threads::Team::new(threads);
            let mut out = vec![0.0; rows * outputs];
            team.install(|| layer.forward(&x, &mut out, Epilogue::Gelu, kernel));
            out
        };
        let (single, split) = (run(1), run(2));
        assert_eq!(split, single);
    }
}
