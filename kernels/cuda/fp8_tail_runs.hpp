// The K runs of the tiles past the whole waves of a dense GEMM (LastWaveSplitSchedule,
// fp8_blockscale_kernel.cuh), one run per CTA. The tail tiles' K blocks lie end to end, tile
// after tile, each tile taking `tile_stride` positions of which its first `kblocks` hold its K
// blocks; CTA c takes positions [c * run_kblocks, (c + 1) * run_kblocks). Two layouts:
// - aligned ranges (the split of the last wave): tile_stride = ranges * run_kblocks, so every
//   run is one K range of one tile and the CTAs of a tile read each K block of its B column
//   at about the same time;
// - stream-K: tile_stride = kblocks, so runs are equal whatever the tile count and may cross
//   tile boundaries (a run's first piece may end a tile, its last start one).
// A run's pieces are its parts of consecutive tiles. The run holding a tile's first K block
// finishes the tile: every other run of it is a contributor (only a run's first piece can be
// one), and the finisher's piece is its run's last (the tile goes on past the run), so a
// finisher waits only after its own work and a contributor never waits.
#pragma once

#include "kernels/host_device.hpp"

namespace shapescope::kernels::cuda {

struct Fp8TailRuns {
  int tiles = 0;        // tiles past the whole waves
  int kblocks = 0;      // K blocks of a tile
  int tile_stride = 0;  // positions one tile takes (>= kblocks)
  int run_kblocks = 0;  // positions of one run (0: no tail runs)

  struct Piece {
    int tile;      // among the tail tiles
    int kb_begin;  // its first K block
    int kb_count;
  };

  SHAPESCOPE_HD int positions() const { return (tiles - 1) * tile_stride + kblocks; }
  // The runs that hold work: the CTAs of the tail.
  SHAPESCOPE_HD int runs() const { return (positions() + run_kblocks - 1) / run_kblocks; }
  // The run holding the tile's first K block (its finisher) and the one holding its last.
  SHAPESCOPE_HD int first_run(int tile) const { return tile * tile_stride / run_kblocks; }
  SHAPESCOPE_HD int last_run(int tile) const { return (tile * tile_stride + kblocks - 1) / run_kblocks; }
  // The most runs any tile is cut into (an upper bound for stream-K, exact for aligned ranges).
  SHAPESCOPE_HD int most_runs_per_tile() const {
    return tile_stride % run_kblocks == 0 ? (kblocks + run_kblocks - 1) / run_kblocks
                                          : (kblocks + 2 * run_kblocks - 2) / run_kblocks;
  }

  // Piece `index` of run `run`, in increasing tile order; false past the run's last piece.
  SHAPESCOPE_HD bool piece(int run, int index, Piece& out) const {
    const int begin = run * run_kblocks;
    const int end = begin + run_kblocks < positions() ? begin + run_kblocks : positions();
    const int tile = begin / tile_stride + index;
    const int tile_begin = tile * tile_stride;
    if (tile >= tiles || tile_begin >= end) return false;
    out.tile = tile;
    out.kb_begin = begin > tile_begin ? begin - tile_begin : 0;
    out.kb_count = (end - tile_begin < kblocks ? end - tile_begin : kblocks) - out.kb_begin;
    return out.kb_count > 0;  // a run starting in a tile's padding holds nothing (never laid out so)
  }
};

}  // namespace shapescope::kernels::cuda
