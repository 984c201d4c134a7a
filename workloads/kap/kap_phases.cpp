/*
 * kap_phases.cpp: the object layout and KAP's producer, sync and consumer
 * phases on one rank (kap.hpp).
 */
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstring>

#include <mpi.h>

#include "kap.hpp"

extern "C" {
#include "wl.h"
}

namespace kap {

namespace {

double now_s()
{
	return std::chrono::duration<double>(
		       std::chrono::steady_clock::now().time_since_epoch())
		.count();
}

} // namespace

Layout::Layout(const Options &o)
{
	objects = o.redundant ? o.puts : o.producers * o.puts;
	per_dir = o.dir_size ? o.dir_size : (objects + o.dirs - 1) / o.dirs;
	ndirs = (objects + per_dir - 1) / per_dir;
}

std::string Layout::key(int64_t obj) const
{
	return "kap.d" + std::to_string(obj / per_dir) + ".o" + std::to_string(obj);
}

int64_t Layout::produced(const Options &o, int64_t prod, int64_t k) const
{
	return o.redundant ? k : prod * o.puts + k;
}

int64_t Layout::consumed(const Options &o, int64_t ci, int64_t a) const
{
	if (o.redundant)
		return (ci * o.stride + a) % objects;
	return (((ci + o.stride) % o.producers) * o.puts + a) % objects;
}

std::string value_of(int64_t obj, int64_t size)
{
	std::string v(static_cast<size_t>(size), '\0');
	for (int64_t j = 0; j < size / 8; j++) {
		uint64_t w = static_cast<uint64_t>(obj) * 0x9E3779B97F4A7C15ULL +
			     static_cast<uint64_t>(j) * 0x632BE59BD9B4E019ULL;
		std::memcpy(&v[static_cast<size_t>(j) * 8], &w, 8);
	}
	return v;
}

bool run_phases(const wl_prog *p, const Options &o, kvs::Client &c, PhaseTimes &pt,
		OpTimes &ops)
{
	const Layout lay(o);
	const bool producer = p->rank < o.producers;
	const bool consumer = p->rank >= p->nranks - o.consumers;
	const int64_t ci = p->rank - (p->nranks - o.consumers);
	bool ok = true;
	double t0, t;

	MPI_Barrier(MPI_COMM_WORLD);
	if (producer) {
		t0 = now_s();
		int64_t commits = 0;
		for (int64_t k = 0; k < o.puts; k++) {
			int64_t obj = lay.produced(o, p->rank, k);
			t = now_s();
			c.put(lay.key(obj), value_of(obj, o.value_size));
			ops.put.push_back((now_s() - t) * 1e6);
			if (!o.commit_every || (k + 1) % o.commit_every)
				continue;
			t = now_s();
			if (o.commit == Commit::SERIAL)
				c.commit();
			else
				c.fence("kap.producer." + std::to_string(commits),
					static_cast<uint32_t>(o.producers));
			commits++;
			ops.commit.push_back((now_s() - t) * 1e6);
		}
		pt.producer = now_s() - t0;
	}

	MPI_Barrier(MPI_COMM_WORLD);
	t0 = now_s();
	if (o.sync == Sync::FENCE) {
		c.fence("kap.sync", static_cast<uint32_t>(p->nranks));
		ops.fence.push_back((now_s() - t0) * 1e6);
	} else {
		uint64_t mine = producer ? c.commit() : 0, need = 0;
		ops.commit.push_back((now_s() - t0) * 1e6);
		MPI_Allreduce(&mine, &need, 1, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD);
		if (consumer)
			c.wait_version(need);
	}
	pt.sync = now_s() - t0;

	MPI_Barrier(MPI_COMM_WORLD);
	if (consumer) {
		t0 = now_s();
		for (int64_t it = 0; it < o.iterations; it++) {
			for (int64_t a = 0; a < o.access; a++) {
				int64_t obj = lay.consumed(o, ci, a);
				t = now_s();
				std::string v = c.get(lay.key(obj));
				ops.get.push_back((now_s() - t) * 1e6);
				if (v != value_of(obj, o.value_size)) {
					std::fprintf(stderr, "kap: rank %d: %s holds %zu bytes that "
						     "differ from what its producer put\n",
						     p->rank, lay.key(obj).c_str(), v.size());
					ok = false;
				}
			}
		}
		pt.consumer = now_s() - t0;
	}
	return ok;
}

} // namespace kap
