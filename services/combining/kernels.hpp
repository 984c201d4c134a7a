/*
 * kernels.hpp: the Graph500 kernels as workloads (README.md, "Graph
 * kernels"): the graph is generated (or read from a packed edge file) by
 * every process alike, searched or labelled over the runtime, and checked at
 * rank 0 (the five BFS rules; union-find's component count).
 */
#pragma once

extern "C" {
#include "wl.h"
}

#include "options.hpp"

namespace comb {

/* Collective; rank 0 prints the result line.  0, or 1 when invalid. */
int run_bfs(const wl_prog &p, const Options &o);
int run_cc(const wl_prog &p, const Options &o);

} // namespace comb
