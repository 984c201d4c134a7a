/*
 * throughput.hpp: the throughput workloads of the structures, after the
 * seed's (README.md, "The program"): a parallel loop of workers on every
 * process, each choosing push or pop (insert or lookup) by the mix.
 */
#pragma once

extern "C" {
#include "wl.h"
}

#include "options.hpp"

namespace comb {

/* Collective; rank 0 prints the result line.  0, or 1 when invalid. */
int run_vector(const wl_prog &p, const Options &o);
int run_hash(const wl_prog &p, const Options &o);

} // namespace comb
