/*
 * workloads.hpp: what loggp-combining runs (README.md, "The program").
 *
 * Throughput (throughput.cpp), after the seed's: a parallel loop of workers
 * on every process, each choosing push or pop (insert or lookup) by the mix.
 * Graph kernels (kernels.cpp): the Graph500 graph is generated (or read from
 * a packed edge file) by every process alike, searched or labelled over the
 * runtime and checked at rank 0 (the five BFS rules; union-find's count).
 * Each is collective; rank 0 prints the result line; 0, or 1 when invalid.
 */
#pragma once

extern "C" {
#include "wl.h"
}

#include "options.hpp"

namespace comb {

int run_vector(const wl_prog &p, const Options &o);
int run_hash(const wl_prog &p, const Options &o);
int run_bfs(const wl_prog &p, const Options &o);
int run_cc(const wl_prog &p, const Options &o);

} // namespace comb
