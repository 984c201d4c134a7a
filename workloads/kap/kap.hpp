/*
 * kap.hpp: KAP's settings, the objects producers write, and the phases.
 *
 * Ranks 0..P-1 are producers and ranks T-C..T-1 consumers (with P = C = T
 * every rank is both).  Producer j writes puts_per_producer objects; object
 * o lives at key kap.d<o / per_dir>.o<o> and holds value_size bytes that
 * encode o, so a consumer can check every byte it reads.  With redundant
 * values every producer writes the same objects (same keys, same values),
 * which the fence merges on its way up the tree.
 */
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "broker.hpp"
#include "client.hpp"

struct wl_prog;

namespace kap {

enum class Commit { FENCE, SERIAL };
enum class Sync { FENCE, CAUSAL };

struct Options {
	int64_t procs = 0;		/* -T: total processes (0 = all ranks) */
	int64_t producers = 0;		/* -P (0 = all) */
	int64_t consumers = 0;		/* -C (0 = all) */
	int64_t value_size = 8;		/* -p, multiple of 8 */
	int64_t access = 1;		/* -c: gets per consumer iteration */
	int64_t stride = 1;		/* -a: consumer reads producer (i + stride) mod P */
	int64_t puts = 1;		/* -i: puts per producer */
	int64_t commit_every = 0;	/* -f: commit every N puts (0 = at the sync only) */
	Commit commit = Commit::FENCE;	/* -t */
	int64_t iterations = 1;		/* -j: consumer iterations */
	Sync sync = Sync::FENCE;	/* -s */
	int64_t dirs = 1;		/* -d: directories the objects are spread over */
	int64_t dir_size = 0;		/* -D: objects per directory (overrides -d) */
	bool redundant = false;		/* -e */
	std::string out_dir;		/* -o: per-operation latencies */
	kvs::Config kvs;		/* -R provider, -F fanout, -I inline max, -W timeout */
};

/* 0: run; 1: -h was shown; negative: bad usage (already reported). */
int parse_options(const wl_prog *p, int argc, char **argv, Options *o);

/* The object layout both sides agree on. */
struct Layout {
	int64_t objects;	/* distinct objects in the store */
	int64_t per_dir;
	int64_t ndirs;
	Layout(const Options &o);
	std::string key(int64_t obj) const;
	/* Object that producer `prod`'s k-th put writes. */
	int64_t produced(const Options &o, int64_t prod, int64_t k) const;
	/* Object a consumer with index ci reads at access a. */
	int64_t consumed(const Options &o, int64_t ci, int64_t a) const;
};
std::string value_of(int64_t obj, int64_t size);

/* Per-operation latencies (µs) of one rank, by kind. */
struct OpTimes {
	std::vector<double> put, commit, fence, get;
};

struct PhaseTimes {
	double setup = -1, producer = -1, sync = -1, consumer = -1;	/* -1: not in it */
};

/* kap_phases.cpp: the producer, sync and consumer phases of one rank.
 * Returns false if a consumer read a wrong value (reported on stderr). */
bool run_phases(const wl_prog *p, const Options &o, kvs::Client &c, PhaseTimes &pt,
		OpTimes &ops);

} // namespace kap
