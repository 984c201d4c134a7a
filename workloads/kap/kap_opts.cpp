/*
 * kap_opts.cpp: KAP's command line, with the original tester's letters.
 */
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>

extern "C" {
#include "wl.h"
}

#include "kap.hpp"

namespace kap {

namespace {

const char usage[] =
	"usage: mpirun -np N kap [options]\n"
	"  -T N   total processes (default: all ranks; must equal the rank count)\n"
	"  -P N   producers, ranks 0..P-1 (default: all)\n"
	"  -C N   consumers, the last C ranks (default: all)\n"
	"  -p B   value size in bytes, a multiple of 8 (default 8)\n"
	"  -c N   gets per consumer iteration, the access count (default 1)\n"
	"  -a N   access stride: consumer i reads producer (i + N) mod P (default 1)\n"
	"  -i N   puts per producer (default 1)\n"
	"  -f N   commit every N puts during the producer phase (default 0: none)\n"
	"  -t fence|serial  commit type of -f (default fence)\n"
	"  -j N   consumer iterations (default 1)\n"
	"  -s fence|causal  sync type: collective fence, or commit + wait for version\n"
	"  -d N   directories the objects are spread over (default 1)\n"
	"  -D N   objects per directory (overrides -d; the seed's 128)\n"
	"  -e     redundant values: every producer writes the same objects\n"
	"  -o DIR write per-operation latencies to DIR/kap-ops-<rank>.csv\n"
	"  -R P   libfabric provider (default $LOGGP_PROVIDER, else tcp;ofi_rxm)\n"
	"  -F K   tree fan-out of the brokers (default 2)\n"
	"  -I B   values of B bytes or more are stored by reference (default 42)\n"
	"  -W S   seconds any KVS wait may take before it fails (default 30)\n";

const struct option longopts[] = {
	{"procs", required_argument, nullptr, 'T'},
	{"producers", required_argument, nullptr, 'P'},
	{"consumers", required_argument, nullptr, 'C'},
	{"value-size", required_argument, nullptr, 'p'},
	{"access", required_argument, nullptr, 'c'},
	{"stride", required_argument, nullptr, 'a'},
	{"puts", required_argument, nullptr, 'i'},
	{"commit-every", required_argument, nullptr, 'f'},
	{"commit-type", required_argument, nullptr, 't'},
	{"iterations", required_argument, nullptr, 'j'},
	{"sync", required_argument, nullptr, 's'},
	{"dirs", required_argument, nullptr, 'd'},
	{"dir-size", required_argument, nullptr, 'D'},
	{"redundant", no_argument, nullptr, 'e'},
	{"out", required_argument, nullptr, 'o'},
	{"provider", required_argument, nullptr, 'R'},
	{"fanout", required_argument, nullptr, 'F'},
	{"inline-max", required_argument, nullptr, 'I'},
	{"timeout", required_argument, nullptr, 'W'},
	{"help", no_argument, nullptr, 'h'},
	{nullptr, 0, nullptr, 0},
};

constexpr int64_t kMaxCount = 1LL << 30;

int one(const wl_prog *p, int c, const char *arg, void *ctx)
{
	auto *o = static_cast<Options *>(ctx);
	static const char *const commits[] = {"fence", "serial"};
	static const char *const syncs[] = {"fence", "causal"};
	int64_t v = 0;
	int w = 0, ret = 0;

	switch (c) {
	case 'T': return wl_opt_int(p, c, arg, 1, kMaxCount, &o->procs);
	case 'P': return wl_opt_int(p, c, arg, 1, kMaxCount, &o->producers);
	case 'C': return wl_opt_int(p, c, arg, 1, kMaxCount, &o->consumers);
	case 'p':
		ret = wl_opt_size(p, c, arg, 8, 64LL << 20, &o->value_size);
		if (!ret && o->value_size % 8) {
			if (!p->rank)
				std::fprintf(stderr, "kap: bad value '%s' for -p: expected a "
					     "multiple of 8 bytes\n", arg);
			return -EINVAL;
		}
		return ret;
	case 'c': return wl_opt_int(p, c, arg, 1, kMaxCount, &o->access);
	case 'a': return wl_opt_int(p, c, arg, 0, kMaxCount, &o->stride);
	case 'i': return wl_opt_int(p, c, arg, 1, kMaxCount, &o->puts);
	case 'f': return wl_opt_int(p, c, arg, 0, kMaxCount, &o->commit_every);
	case 'j': return wl_opt_int(p, c, arg, 1, kMaxCount, &o->iterations);
	case 'd': return wl_opt_int(p, c, arg, 1, kMaxCount, &o->dirs);
	case 'D': return wl_opt_int(p, c, arg, 1, kMaxCount, &o->dir_size);
	case 'e': o->redundant = true; return 0;
	case 'o': o->out_dir = arg ? arg : ""; return arg ? 0 : wl_opt_unknown(p, c);
	case 't':
		ret = wl_opt_word(p, c, arg, commits, 2, "fence or serial", &w);
		o->commit = w ? Commit::SERIAL : Commit::FENCE;
		return ret;
	case 's':
		ret = wl_opt_word(p, c, arg, syncs, 2, "fence or causal", &w);
		o->sync = w ? Sync::CAUSAL : Sync::FENCE;
		return ret;
	case 'R':
		if (!arg || !*arg)
			return wl_opt_unknown(p, c);
		o->kvs.provider = arg;
		return 0;
	case 'F':
		ret = wl_opt_int(p, c, arg, 1, 1024, &v);
		o->kvs.fanout = static_cast<uint32_t>(v);
		return ret;
	case 'I':
		ret = wl_opt_size(p, c, arg, 1, 64LL << 20, &v);
		o->kvs.limits.inline_max = static_cast<size_t>(v);
		return ret;
	case 'W':
		ret = wl_opt_int(p, c, arg, 1, 86400, &v);
		o->kvs.timeout = std::chrono::seconds(v);
		return ret;
	}
	return wl_opt_unknown(p, c);
}

} // namespace

int parse_options(const wl_prog *p, int argc, char **argv, Options *o)
{
	if (const char *prov = std::getenv("LOGGP_PROVIDER"); prov && *prov)
		o->kvs.provider = prov;
	int ret = wl_opt_getopt(p, argc, argv, ":T:P:C:p:c:a:i:f:t:j:s:d:D:eo:R:F:I:W:h",
				longopts, usage, one, o);
	if (ret)
		return ret;
	int64_t n = p->nranks;
	if (!o->procs)
		o->procs = n;
	if (!o->producers)
		o->producers = n;
	if (!o->consumers)
		o->consumers = n;
	const char *bad = nullptr;
	if (o->procs != n)
		bad = "-T must equal the number of ranks mpirun started";
	else if (o->producers > n)
		bad = "-P exceeds the number of ranks";
	else if (o->consumers > n)
		bad = "-C exceeds the number of ranks";
	if (bad) {
		if (!p->rank)
			std::fprintf(stderr, "kap: %s (%d)\n", bad, p->nranks);
		return -EINVAL;
	}
	return 0;
}

} // namespace kap
