/*
 * report.cpp: the shared parts of the workloads (report.hpp).
 */
#include "report.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string_view>

namespace comb {

int64_t sum_all(int64_t v)
{
	int64_t s = 0;
	MPI_Allreduce(&v, &s, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
	return s;
}

bool all_true(bool v)
{
	int in = v, out = 0;
	MPI_Allreduce(&in, &out, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
	return out;
}

uint64_t now_ns()
{
	return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
					     std::chrono::steady_clock::now().time_since_epoch())
					     .count());
}

RuntimeConfig runtime_config(const Options &o)
{
	RuntimeConfig rc;
	rc.provider = o.provider;
	rc.aggregate = o.aggregate;
	return rc;
}

Timed timed_run(Runtime &rt, const std::function<void()> &body)
{
	Timed t;
	rt.run([&] {
		rt.barrier();
		t.f0 = rt.fabric_stats();
		t.r0 = rt.stats();
		auto a = std::chrono::steady_clock::now();
		body();
		rt.barrier();
		t.time_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - a)
				   .count();
		t.f1 = rt.fabric_stats();
		t.r1 = rt.stats();
	});
	return t;
}

void print_result(const wl_prog &p, bool valid, const Timed &t, std::vector<wl_metric> metrics,
		  const std::vector<wl_param> &params)
{
	wl_msgs m{};
	m.sent = static_cast<int64_t>(t.f1.msgs_sent - t.f0.msgs_sent);
	m.sent_bytes = static_cast<int64_t>(t.f1.bytes_sent - t.f0.bytes_sent);
	m.recvd = static_cast<int64_t>(t.f1.msgs_recvd - t.f0.msgs_recvd);
	m.recvd_bytes = static_cast<int64_t>(t.f1.bytes_recvd - t.f0.bytes_recvd);
	wl_critical crit{};
	wl_result r{};
	wl_result_reduce(&p, valid, t.time_s, &m, &crit, &r);
	metrics.push_back({"records", double(sum_all(int64_t(t.r1.records_sent -
								 t.r0.records_sent)))});
	metrics.push_back({"runtime_msgs", double(sum_all(int64_t(t.r1.messages_sent -
								      t.r0.messages_sent)))});
	/* Operations per libfabric message of every kind (requests, replies, the runtime's
	 * own), beside ops_per_msg, which counts operations per request batch. */
	int64_t sent = sum_all(m.sent);
	auto ops = std::find_if(metrics.begin(), metrics.end(),
				[](const wl_metric &w) { return std::string_view(w.name) == "ops"; });
	if (ops != metrics.end()) {
		double per = sent ? ops->value / double(sent) : 0;
		metrics.push_back({"ops_per_fabric_msg", per});
	}
	/* Time the processes spent blocked on the fabric with nothing to do (summed). */
	metrics.push_back({"idle_wait_s", double(sum_all(int64_t(t.f1.wait_ns - t.f0.wait_ns))) /
						 1e9});
	/* Blocks that outlived a message (Fabric's lost wake-ups): each costs up to
	 * Fabric::kTimerCheck, so any here makes the point's time suspect. */
	metrics.push_back({"missed_wakeups",
			   double(sum_all(int64_t(t.f1.missed_wakeups - t.f0.missed_wakeups)))});
	if (p.rank == 0) {
		wl_result_print(stdout, &p, &r, metrics.data(), int(metrics.size()),
				params.data(), int(params.size()));
		std::fflush(stdout);
	}
	wl_result_fini(&r);
}

} // namespace comb
