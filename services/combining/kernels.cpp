/*
 * kernels.cpp: the BFS and CC workloads of workloads.hpp.
 */
#include "workloads.hpp"

#include <algorithm>
#include <bit>
#include <cstdio>
#include <set>

#include "bfs.hpp"
#include "cc.hpp"
#include "dist_graph.hpp"
#include "graph_check.hpp"
#include "kronecker.hpp"
#include "report.hpp"
#include "splitmix.hpp"

namespace comb {

namespace {

struct Graph {
	uint64_t n;
	std::vector<Edge> edges;
};

Graph load(const wl_prog &p, const Options &o)
{
	KroneckerParams kp;
	kp.scale = int(o.scale);
	kp.edgefactor = int(o.edgefactor);
	Graph g;
	if (!o.edge_file.empty()) {
		g.edges = read_edge_file(o.edge_file);
		uint64_t top = 0;
		for (const Edge &e : g.edges)
			top = std::max({top, e.u, e.v});
		/* The file's scale: the fewest 2^s vertices that hold its largest. */
		int64_t s = std::bit_width(top);
		if (o.scale_given && o.scale != s)
			throw svc::Error(EINVAL, "-G " + std::to_string(o.scale) +
							 " disagrees with edge file " + o.edge_file +
							 ": its largest vertex " + std::to_string(top) +
							 " makes it scale " + std::to_string(s) +
							 " (give -G " + std::to_string(s) +
							 " or leave -G out)");
		g.n = 1ULL << s;
	} else {
		g.edges = kronecker_graph(kp);
		g.n = 1ULL << o.scale;
	}
	if (!o.write_file.empty() && p.rank == 0)
		write_edge_file(o.write_file, g.edges);
	return g;
}

/* Up to `count` distinct roots with an edge to another vertex, drawn from
 * the Graph500 seeds' stream: the same for the same edges everywhere. */
std::vector<uint64_t> pick_roots(const Graph &g, int64_t count)
{
	std::vector<bool> linked(g.n);
	for (const Edge &e : g.edges)
		if (e.u != e.v)
			linked[e.u] = linked[e.v] = true;
	uint64_t s = 2ULL << 32 | 3;
	std::set<uint64_t> seen;
	std::vector<uint64_t> roots;
	for (uint64_t tries = 0; int64_t(roots.size()) < count && tries < 64 * g.n; tries++) {
		uint64_t v = splitmix64(s) % g.n;
		if (linked[v] && seen.insert(v).second)
			roots.push_back(v);
	}
	return roots;
}

/* Every vertex's parent at rank 0, from each process's local ones. */
std::vector<int64_t> gather_parents(const wl_prog &p, uint64_t n,
				    const std::vector<int64_t> &mine)
{
	int cnt = int(mine.size());
	std::vector<int> counts(p.nranks), displs(p.nranks);
	MPI_Gather(&cnt, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
	int total = 0;
	for (int i = 0; i < p.nranks; i++) {
		displs[i] = total;
		total += counts[i];
	}
	std::vector<int64_t> all(p.rank == 0 ? total : 0);
	MPI_Gatherv(mine.data(), cnt, MPI_INT64_T, all.data(), counts.data(), displs.data(),
		    MPI_INT64_T, 0, MPI_COMM_WORLD);
	std::vector<int64_t> parent;
	if (p.rank == 0) {
		parent.assign(n, -1);
		for (int r = 0; r < p.nranks; r++)
			for (int i = 0; i < counts[r]; i++)
				parent[uint64_t(i) * p.nranks + r] = all[displs[r] + i];
	}
	return parent;
}

std::vector<wl_param> graph_params(const Options &o, const char *kernel, const char *variant,
				   const Graph &g)
{
	return {
		{"kernel", 0, kernel},
		{"variant", 0, variant},
		{"scale", int64_t(std::countr_zero(g.n)), nullptr},
		{"edgefactor", o.edgefactor, nullptr},
		{"vertices", int64_t(g.n), nullptr},
		{"edges", int64_t(g.edges.size()), nullptr},
		{"workers", o.workers, nullptr},
		{"buffer", o.buffer, nullptr},
		{"aggregation", o.aggregate, nullptr},
		{"edge_file", 0, o.edge_file.empty() ? "" : o.edge_file.c_str()},
		{"provider", 0, o.provider.c_str()},
	};
}

} // namespace

int run_bfs(const wl_prog &p, const Options &o)
{
	Graph g = load(p, o);
	std::vector<uint64_t> roots = pick_roots(g, o.roots);
	Runtime rt(MPI_COMM_WORLD, runtime_config(o));
	DistGraph dg(rt, g.n, g.edges);
	BfsConfig bc;
	bc.tuned = o.tuned;
	bc.mode = o.mode;
	bc.buffer = size_t(o.buffer);
	bc.workers = size_t(o.workers);
	bc.alpha = o.alpha;
	bc.beta = o.beta;
	Bfs bfs(rt, dg, bc);
	std::vector<std::vector<int64_t>> parents;
	std::vector<double> times;
	uint64_t bottom_up = 0;
	Timed t = timed_run(rt, [&] {
		for (uint64_t root : roots) {
			rt.barrier();
			uint64_t a = now_ns();
			bfs.search(root);
			rt.barrier();
			times.push_back(double(now_ns() - a) * 1e-9);
			parents.push_back(bfs.parents());
			bottom_up += bfs.bottom_up_levels();
		}
	});
	std::vector<double> tmax(times.size());
	MPI_Allreduce(times.data(), tmax.data(), int(times.size()), MPI_DOUBLE, MPI_MAX,
		      MPI_COMM_WORLD);
	bool valid = !roots.empty();
	double inv_sum = 0, edges_sum = 0, tmin = 1e300, tmx = 0;
	for (size_t k = 0; k < roots.size(); k++) {
		std::vector<int64_t> parent = gather_parents(p, g.n, parents[k]);
		if (p.rank)
			continue;
		std::string why = bfs_validate(g.n, g.edges, roots[k], parent);
		if (!why.empty()) {
			std::fprintf(stderr, "%s: BFS from %llu fails validation: %s\n", p.name,
				     (unsigned long long)roots[k], why.c_str());
			valid = false;
		}
		double edges = double(bfs_edges_traversed(g.edges, parent));
		double teps = edges / std::max(tmax[k], 1e-9);
		edges_sum += edges;
		inv_sum += 1 / std::max(teps, 1e-9);
		tmin = std::min(tmin, teps);
		tmx = std::max(tmx, teps);
	}
	valid = all_true(valid);
	uint64_t root_sum = 0;
	for (uint64_t r : roots)
		root_sum += r;
	const char *variant = o.tuned ? "tuned" : mode_name(o.mode);
	std::vector<wl_metric> metrics = {
		{"roots", double(roots.size())},
		{"root_sum", double(root_sum)},
		{"edges_traversed", edges_sum},
		{"harmonic_mean_teps", inv_sum > 0 ? double(roots.size()) / inv_sum : 0},
		{"min_teps", roots.empty() ? 0 : tmin},
		{"max_teps", tmx},
		{"bottom_up_levels", double(sum_all(int64_t(bottom_up)) / p.nranks)},
	};
	print_result(p, valid, t, metrics, graph_params(o, "bfs", variant, g));
	return valid ? 0 : 1;
}

int run_cc(const wl_prog &p, const Options &o)
{
	Graph g = load(p, o);
	Runtime rt(MPI_COMM_WORLD, runtime_config(o));
	DistGraph dg(rt, g.n, g.edges);
	CcVariant v = o.tuned ? CcVariant::RELAXED
			      : (combines_locally(o.mode) ? CcVariant::COMBINED : CcVariant::PLAIN);
	Cc cc(rt, dg, v, size_t(o.buffer), size_t(o.workers));
	uint64_t comps = 0;
	Timed t = timed_run(rt, [&] { comps = cc.run(); });
	uint64_t want = p.rank == 0 ? union_find_components(g.n, g.edges) : comps;
	bool valid = all_true(comps == want);
	if (!valid && p.rank == 0)
		std::fprintf(stderr, "%s: %llu components, union-find counts %llu\n", p.name,
			     (unsigned long long)comps, (unsigned long long)want);
	const HashStats &s = cc.set_stats();
	const char *variant = v == CcVariant::RELAXED ? "tuned" : mode_name(o.mode);
	std::vector<wl_metric> metrics = {
		{"components", double(comps)},
		{"union_find_components", double(want)},
		{"reduced_edges", double(cc.reduced_edges())},
		{"teps", double(g.edges.size()) / std::max(t.time_s, 1e-9)},
		{"set_inserts", double(sum_all(int64_t(s.inserts)))},
		{"set_requests", double(sum_all(int64_t(s.requests)))},
		{"set_combined", double(sum_all(int64_t(s.combined)))},
	};
	print_result(p, valid, t, metrics, graph_params(o, "cc", variant, g));
	return valid ? 0 : 1;
}

} // namespace comb
