/*
 * throughput.cpp: the throughput workloads of workloads.hpp, their checks
 * and their result line.
 */
#include "workloads.hpp"

#include <cstdio>
#include <set>
#include <vector>

#include "global_hash.hpp"
#include "global_vector.hpp"
#include "lincheck.hpp"
#include "report.hpp"
#include "runtime.hpp"
#include "splitmix.hpp"

namespace comb {

namespace {

/* Each worker's own stream. */
struct Rng {
	uint64_t s;
	uint64_t next() { return splitmix64(s); }
};

Rng worker_rng(const Options &o, uint32_t rank, size_t w)
{
	return Rng{static_cast<uint64_t>(o.seed) * 1000003u + (uint64_t(rank) << 32) + w};
}

/* Operations of worker w out of the process's ops. */
int64_t share(const Options &o, size_t w)
{
	return o.ops / o.workers + (int64_t(w) < o.ops % o.workers ? 1 : 0);
}

/* The value a map holds for key: lookups and the final cells are checked
 * against it. */
int64_t map_value(uint64_t key)
{
	return static_cast<int64_t>(key * 2654435761u + 7);
}

/* Rank 0 gets every process's history and checks it; the verdict is
 * everyone's. */
bool check_history(LinModel m, const std::vector<HistOp> &mine, int rank, int nranks)
{
	int bytes = static_cast<int>(mine.size() * sizeof(HistOp));
	std::vector<int> counts(nranks), displs(nranks);
	MPI_Gather(&bytes, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
	int total = 0;
	for (int i = 0; i < nranks; i++) {
		displs[i] = total;
		total += counts[i];
	}
	std::vector<HistOp> all(rank == 0 ? total / sizeof(HistOp) : 0);
	MPI_Gatherv(mine.data(), bytes, MPI_BYTE, all.data(), counts.data(), displs.data(),
		    MPI_BYTE, 0, MPI_COMM_WORLD);
	int ok = rank == 0 ? linearizable(m, all) : 1;
	MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
	return ok;
}

/*
 * Every worker's share of the process's operations, timed: op(rng, worker,
 * index, h) performs one whose kind (h.update) the mix drew, between h's
 * invocation and response times; h goes to hist with -H.
 */
using OpFn = std::function<void(Rng &, size_t, int64_t, HistOp &)>;
Timed run_ops(Runtime &rt, const Options &o, std::vector<HistOp> &hist, const OpFn &op)
{
	return timed_run(rt, [&] {
		rt.parallel(size_t(o.workers), [&](size_t w) {
			Rng rng = worker_rng(o, rt.rank(), w);
			for (int64_t i = 0, n = share(o, w); i < n; i++) {
				HistOp h{};
				h.update = int64_t(rng.next() % 100) < o.push_pct;
				h.inv = now_ns();
				op(rng, w, i, h);
				h.res = now_ns();
				if (o.history)
					hist.push_back(h);
			}
		});
	});
}

std::vector<wl_param> params(const Options &o, const char *structure)
{
	return {
		{"structure", 0, structure},
		{"mode", 0, mode_name(o.mode)},
		{"ops_per_process", o.ops, nullptr},
		{"workers", o.workers, nullptr},
		{"push_pct", o.push_pct, nullptr},
		{"buffer", o.buffer, nullptr},
		{"keys", o.keys, nullptr},
		{"aggregation", o.aggregate, nullptr},
		{"provider", 0, o.provider.c_str()},
	};
}

} // namespace

int run_vector(const wl_prog &p, const Options &o)
{
	VecKind kind = o.structure == Structure::STACK ? VecKind::STACK : VecKind::QUEUE;
	uint64_t cap = o.capacity ? uint64_t(o.capacity) : uint64_t(o.ops) * p.nranks;
	Runtime rt(MPI_COMM_WORLD, runtime_config(o));
	GlobalVector v(rt, kind, o.mode, cap, size_t(o.buffer));
	int64_t pushed = 0, popped = 0;
	std::vector<HistOp> hist;
	Timed t = run_ops(rt, o, hist, [&](Rng &, size_t w, int64_t i, HistOp &h) {
		if (h.update) {
			h.arg = int64_t(rt.rank()) << 40 | int64_t(w) << 20 | i;
			h.ok = v.push(h.arg);
			pushed += h.ok ? h.arg : 0;
		} else if (auto r = v.pop()) {
			h.ok = true;
			h.ret = *r;
			popped += *r;
		}
	});

	/* Conservation: what was pushed was popped or is still held. */
	uint64_t live[2] = {v.live().first, v.live().second};
	MPI_Bcast(live, 2, MPI_UINT64_T, 0, MPI_COMM_WORLD);
	int64_t held = 0;
	uint64_t first = uint64_t(rt.rank()) * v.block();
	for (uint64_t i = live[0]; i < live[0] + live[1]; i++) {
		uint64_t s = v.slot(i);
		if (s >= first && s < first + v.block())
			held += v.local_slots()[s - first];
	}
	VecStats s = v.stats();
	int64_t ops = sum_all(int64_t(s.pushes + s.pops + s.pops_empty + s.pushes_full));
	int64_t net = sum_all(int64_t(s.pushes) - int64_t(s.pops));
	bool valid = sum_all(pushed) == sum_all(popped) + sum_all(held) && net == int64_t(live[1]);
	if (!valid && p.rank == 0)
		std::fprintf(stderr, "%s: pushed elements are neither popped nor held\n", p.name);
	int lin = 1;
	if (o.history) {
		lin = check_history(kind == VecKind::STACK ? LinModel::STACK : LinModel::QUEUE,
				    hist, p.rank, p.nranks);
		if (!lin && p.rank == 0)
			std::fprintf(stderr, "%s: the recorded history is not linearizable\n",
				     p.name);
	}
	double master_requests = double(sum_all(int64_t(s.master_requests)));
	double pop_requests = double(sum_all(int64_t(s.pop_requests)));
	double push_requests = master_requests - pop_requests;
	double pushes = double(sum_all(int64_t(s.pushes + s.pushes_full)));
	double pops = double(ops) - pushes;
	std::vector<wl_metric> metrics = {
		{"ops", double(ops)},
		{"ops_per_s", t.time_s > 0 ? ops / t.time_s : 0},
		{"ops_per_msg", master_requests ? ops / master_requests : 0},
		{"push_ops_per_msg", push_requests ? pushes / push_requests : 0},
		{"pop_ops_per_msg", pop_requests ? pops / pop_requests : 0},
		{"pushes", double(sum_all(int64_t(s.pushes)))},
		{"pops", double(sum_all(int64_t(s.pops)))},
		{"pops_empty", double(sum_all(int64_t(s.pops_empty)))},
		{"pushes_full", double(sum_all(int64_t(s.pushes_full)))},
		{"matched", double(sum_all(int64_t(s.matched)))},
		{"master_requests", master_requests},
		{"batched_ops", double(sum_all(int64_t(s.batched_ops)))},
		{"owner_requests", double(sum_all(int64_t(s.owner_requests)))},
		{"master_groups", double(sum_all(int64_t(s.master_groups)))},
		{"master_combined", double(sum_all(int64_t(s.master_combined)))},
		{"linearizable", double(lin)},
	};
	print_result(p, valid && lin, t, metrics,
		     params(o, kind == VecKind::STACK ? "stack" : "queue"));
	return valid && lin ? 0 : 1;
}

int run_hash(const wl_prog &p, const Options &o)
{
	bool is_map = o.structure == Structure::MAP;
	Runtime rt(MPI_COMM_WORLD, runtime_config(o));
	GlobalHashMap h(rt, combines_locally(o.mode), size_t(o.buffer));
	std::set<uint64_t> inserted;
	std::vector<HistOp> hist;
	bool lookups_ok = true;
	Timed t = run_ops(rt, o, hist, [&](Rng &rng, size_t, int64_t, HistOp &op) {
		op.key = rng.next() % uint64_t(o.keys);
		if (op.update) {
			op.arg = map_value(op.key);
			h.insert(op.key, op.arg);
			inserted.insert(op.key);
		} else if (auto r = h.lookup(op.key)) {
			op.ok = true;
			op.ret = is_map ? *r : 0;
			lookups_ok &= *r == map_value(op.key);
		}
	});

	/* Against the serial model: the cells hold exactly the inserted keys,
	 * each with its value, at its owner. */
	std::vector<uint64_t> mine(inserted.begin(), inserted.end());
	int n = static_cast<int>(mine.size());
	std::vector<int> counts(p.nranks), displs(p.nranks);
	MPI_Allgather(&n, 1, MPI_INT, counts.data(), 1, MPI_INT, MPI_COMM_WORLD);
	int total = 0;
	for (int i = 0; i < p.nranks; i++) {
		displs[i] = total;
		total += counts[i];
	}
	std::vector<uint64_t> all(total);
	MPI_Allgatherv(mine.data(), n, MPI_UINT64_T, all.data(), counts.data(), displs.data(),
		       MPI_UINT64_T, MPI_COMM_WORLD);
	std::set<uint64_t> model;
	for (uint64_t k : all)
		if (h.owner(k) == rt.rank())
			model.insert(k);
	bool cells_ok = model.size() == h.local().size();
	for (const auto &[k, v] : h.local())
		cells_ok &= model.count(k) && v == map_value(k);
	bool valid = all_true(cells_ok && lookups_ok);
	if (!valid && p.rank == 0)
		std::fprintf(stderr, "%s: the cells differ from the serial model\n", p.name);
	int lin = 1;
	if (o.history) {
		lin = check_history(is_map ? LinModel::MAP : LinModel::SET, hist, p.rank,
				    p.nranks);
		if (!lin && p.rank == 0)
			std::fprintf(stderr, "%s: the recorded history is not linearizable\n",
				     p.name);
	}
	const HashStats &s = h.stats();
	double ops = double(sum_all(int64_t(s.inserts + s.lookups)));
	double requests = double(sum_all(int64_t(s.requests)));
	std::vector<wl_metric> metrics = {
		{"ops", ops},
		{"ops_per_s", t.time_s > 0 ? ops / t.time_s : 0},
		{"ops_per_msg", requests ? ops / requests : 0},
		{"inserts", double(sum_all(int64_t(s.inserts)))},
		{"lookups", double(sum_all(int64_t(s.lookups)))},
		{"found", double(sum_all(int64_t(s.found)))},
		{"requests", requests},
		{"combined", double(sum_all(int64_t(s.combined)))},
		{"linearizable", double(lin)},
	};
	print_result(p, valid && lin, t, metrics, params(o, is_map ? "map" : "set"));
	return valid && lin ? 0 : 1;
}

} // namespace comb
