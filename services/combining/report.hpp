/*
 * report.hpp: what loggp-combining's workloads share: reductions over the
 * processes, the timed region between two barriers, the runtime's settings
 * from the options and the result line (docs/results.md).
 */
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

extern "C" {
#include "wl.h"
}

#include "options.hpp"
#include "runtime.hpp"

namespace comb {

/* MPI reductions over every process (outside Runtime::run). */
int64_t sum_all(int64_t v);
bool all_true(bool v);

/* ns of the one monotonic clock of the machine (histories compare them
 * across processes). */
uint64_t now_ns();

RuntimeConfig runtime_config(const Options &o);

/* What a workload times and counts. */
struct Timed {
	double time_s = 0;
	svc::FabricStats f0, f1;
	RuntimeStats r0, r1;
};

/* Runs body() on every process between two barriers, timing it. */
Timed timed_run(Runtime &rt, const std::function<void()> &body);

/* Collective: reduces the counts; rank 0 prints the result line with the
 * runtime's records and messages added to metrics. */
void print_result(const wl_prog &p, bool valid, const Timed &t, std::vector<wl_metric> metrics,
		  const std::vector<wl_param> &params);

} // namespace comb
