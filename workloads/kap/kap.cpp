/*
 * kap: KVS Access Patterns, after Flux's KAP tester ([KVS], docs/design.md).
 *
 * Producers put objects into the hierarchical KVS (services/kvs), a sync
 * (collective fence, or commit + causal wait for the version) makes them
 * visible, consumers get and check them.  Phases setup, producer, sync and
 * consumer are timed on every rank; rank 0 prints the max and min over the
 * ranks taking part (the max is the critical path) and per-operation
 * latency percentiles in the result line of docs/results.md.  msgs counts
 * the libfabric messages the brokers sent during the three timed phases.
 */
#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>

#include <mpi.h>
#include <nlohmann/json.hpp>

extern "C" {
#include "wl.h"
}

#include "error.hpp"
#include "instance.hpp"
#include "kap.hpp"

namespace {

using json = nlohmann::json;

double now_s()
{
	return std::chrono::duration<double>(
		       std::chrono::steady_clock::now().time_since_epoch())
		.count();
}

/* Max and min of a phase over the ranks in it (t < 0: not in it). */
void phase_reduce(double t, json &metrics, const char *name)
{
	double hi = t, lo = t < 0 ? std::numeric_limits<double>::infinity() : t;
	double max = 0, min = 0;
	MPI_Reduce(&hi, &max, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
	MPI_Reduce(&lo, &min, 1, MPI_DOUBLE, MPI_MIN, 0, MPI_COMM_WORLD);
	metrics[std::string(name) + "_max_s"] = std::max(max, 0.0);
	metrics[std::string(name) + "_min_s"] = std::isfinite(min) ? min : 0.0;
}

/* Percentiles of one operation's latencies gathered from every rank. */
void op_reduce(const std::vector<double> &mine, json &metrics, const char *name)
{
	int n = static_cast<int>(mine.size()), nranks, rank;
	MPI_Comm_size(MPI_COMM_WORLD, &nranks);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	std::vector<int> counts(nranks), displs(nranks);
	MPI_Gather(&n, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
	int total = 0;
	for (int i = 0; i < nranks; i++) {
		displs[i] = total;
		total += counts[i];
	}
	std::vector<double> all(rank ? 0 : total);
	MPI_Gatherv(mine.data(), n, MPI_DOUBLE, all.data(), counts.data(), displs.data(),
		    MPI_DOUBLE, 0, MPI_COMM_WORLD);
	if (rank || all.empty())
		return;
	std::sort(all.begin(), all.end());
	auto pct = [&](double q) { return all[static_cast<size_t>(q * (all.size() - 1))]; };
	std::string n_ = name;
	metrics[n_ + "_us_p50"] = pct(0.5);
	metrics[n_ + "_us_p99"] = pct(0.99);
	metrics[n_ + "_us_max"] = all.back();
	metrics[n_ + "_count"] = all.size();
}

void write_ops(const std::string &dir, int rank, const kap::OpTimes &ops)
{
	std::string path = dir + "/kap-ops-" + std::to_string(rank) + ".csv";
	std::ofstream f(path);
	f << "op,us\n";
	auto dump = [&](const char *op, const std::vector<double> &v) {
		for (double us : v)
			f << op << ',' << us << '\n';
	};
	dump("put", ops.put);
	dump("commit", ops.commit);
	dump("fence", ops.fence);
	dump("get", ops.get);
	if (!f)
		std::fprintf(stderr, "kap: rank %d: cannot write %s\n", rank, path.c_str());
}

int64_t sum_to_root(int64_t v)
{
	int64_t s = 0;
	MPI_Reduce(&v, &s, 1, MPI_INT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
	return s;
}

int run(const wl_prog &p, const kap::Options &o)
{
	kap::PhaseTimes pt;
	kap::OpTimes ops;
	double t0 = now_s();
	kvs::Instance inst(MPI_COMM_WORLD, o.kvs);
	pt.setup = now_s() - t0;
	kvs::Client client(inst.broker());
	kvs::BrokerStats s0 = inst.broker().stats();
	bool ok = kap::run_phases(&p, o, client, pt, ops);
	kvs::BrokerStats s1 = inst.broker().stats();
	inst.close();

	int mine_ok = ok, all_ok = 0;
	MPI_Allreduce(&mine_ok, &all_ok, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
	json metrics;
	phase_reduce(pt.setup, metrics, "setup");
	phase_reduce(pt.producer, metrics, "producer");
	phase_reduce(pt.sync, metrics, "sync");
	phase_reduce(pt.consumer, metrics, "consumer");
	op_reduce(ops.put, metrics, "put");
	op_reduce(ops.commit, metrics, "commit");
	op_reduce(ops.fence, metrics, "fence");
	op_reduce(ops.get, metrics, "get");
	if (!o.out_dir.empty())
		write_ops(o.out_dir, p.rank, ops);

	int64_t sent = static_cast<int64_t>(s1.fabric.msgs_sent - s0.fabric.msgs_sent);
	int64_t bytes = static_cast<int64_t>(s1.fabric.bytes_sent - s0.fabric.bytes_sent);
	std::vector<int64_t> per_rank(p.nranks);
	MPI_Gather(&sent, 1, MPI_INT64_T, per_rank.data(), 1, MPI_INT64_T, 0, MPI_COMM_WORLD);
	int64_t total = sum_to_root(sent), total_bytes = sum_to_root(bytes);
	int64_t loads = sum_to_root(static_cast<int64_t>(s1.loads_sent - s0.loads_sent));
	int64_t waits = sum_to_root(static_cast<int64_t>(s1.fabric.waits - s0.fabric.waits));
	int64_t contributed = sum_to_root(static_cast<int64_t>(ops.put.size()));
	if (p.rank)
		return all_ok ? 0 : 1;

	const kap::Layout lay(o);
	metrics["time_s"] = metrics["producer_max_s"].get<double>() +
			    metrics["sync_max_s"].get<double>() +
			    metrics["consumer_max_s"].get<double>();
	metrics["ops_put"] = contributed;
	metrics["ops_applied"] = s1.fence_ops_out - s0.fence_ops_out;
	metrics["objects_faulted"] = loads;
	metrics["broker_waits"] = waits;
	json out = {
		{"loggp_result", 1},
		{"workload", "kap"},
		{"valid", static_cast<bool>(all_ok)},
		{"ranks", p.nranks},
		{"metrics", metrics},
		{"msgs", {{"total", total}, {"bytes", total_bytes}, {"per_rank", per_rank}}},
		{"params",
		 {{"producers", o.producers},
		  {"consumers", o.consumers},
		  {"value_size", o.value_size},
		  {"access", o.access},
		  {"stride", o.stride},
		  {"puts", o.puts},
		  {"commit_every", o.commit_every},
		  {"commit_type", o.commit == kap::Commit::FENCE ? "fence" : "serial"},
		  {"iterations", o.iterations},
		  {"sync", o.sync == kap::Sync::FENCE ? "fence" : "causal"},
		  {"objects", lay.objects},
		  {"dirs", lay.ndirs},
		  {"per_dir", lay.per_dir},
		  {"redundant", o.redundant},
		  {"provider", o.kvs.provider},
		  {"fanout", o.kvs.fanout},
		  {"inline_max", o.kvs.limits.inline_max}}},
	};
	std::printf("%s\n", out.dump().c_str());
	std::fflush(stdout);
	return all_ok ? 0 : 1;
}

} // namespace

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	wl_prog p{};
	p.name = "kap";
	p.options = "-T -P -C -p -c -a -i -f -t -j -s -d -D -e -o -R -F -I -W";
	MPI_Comm_rank(MPI_COMM_WORLD, &p.rank);
	MPI_Comm_size(MPI_COMM_WORLD, &p.nranks);
	kap::Options o;
	int ret = kap::parse_options(&p, argc, argv, &o);
	if (ret) {
		MPI_Finalize();
		return ret > 0 ? 0 : WL_EXIT_USAGE;
	}
	int status;
	try {
		status = run(p, o);
	} catch (const std::exception &e) {
		/* Peers may be blocked in a collective or a fence: end the job. */
		std::fprintf(stderr, "kap: rank %d: %s\n", p.rank, e.what());
		MPI_Abort(MPI_COMM_WORLD, 1);
		return 1;
	}
	MPI_Finalize();
	return status;
}
