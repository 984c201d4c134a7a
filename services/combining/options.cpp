/*
 * options.cpp: loggp-combining's options, parsed alike by every rank.
 */
#include "options.hpp"

#include <cerrno>
#include <cstdio>
#include <cstdlib>

#include "common/options.hpp"

namespace comb {

namespace {

const char usage[] =
	"usage: mpirun -np N loggp-combining [options]\n"
	"  -s stack|queue|set|map|bfs|cc  the structure or graph kernel (default stack)\n"
	"  -m none|centralized|local|full|tuned  combining mode (default full); sets, maps\n"
	"         and cc: none or local (the set's combining), cc and bfs also tuned (the\n"
	"         relaxed set, the direction-optimizing search); bfs: the frontier queue's\n"
	"  -n N   operations per process (default 100000)\n"
	"  -w N   workers per process (default 2048)\n"
	"  -p P   percent pushes (stack, queue) or inserts (set, map) (default 100)\n"
	"  -b N   combining buffer, operations per batch (default 1024)\n"
	"  -k N   key range of sets and maps (default 1024)\n"
	"  -c N   capacity of the stack or queue (default: every push fits)\n"
	"  -A     aggregation off: every record its own message\n"
	"  -H     record the history and check it is linearizable (small runs)\n"
	"  -S N   seed (default 1)\n"
	"  -R P   libfabric provider (default $LOGGP_PROVIDER, else tcp;ofi_rxm)\n"
	"graph kernels (Graph500):\n"
	"  -G N   scale: 2^N vertices (default 10; with -f, the file's)\n"
	"  -e N   edge factor (default 16)\n"
	"  -r N   BFS roots of degree > 0 (default 64)\n"
	"  -f F   read the graph from F, a file of 12-byte packed edges\n"
	"  -o F   write the generated graph to F (same format)\n"
	"  -a X   direction-optimizing alpha (default 14)\n"
	"  -B X   direction-optimizing beta (default 24)\n";

const char *const structures[] = {"stack", "queue", "set", "map", "bfs", "cc"};
const char *const modes[] = {"none", "centralized", "local", "full", "tuned"};

/* A positive real number (alpha, beta). */
int opt_real(const wl_prog *p, int c, const char *arg, double *out)
{
	char *end;
	errno = 0;
	double v = std::strtod(arg, &end);
	if (errno || end == arg || *end || !(v > 0) || v > 1e9) {
		if (p->rank == 0)
			std::fprintf(stderr, "%s: bad value '%s' for -%c: expected a number "
					     "above 0\n", p->name, arg, c);
		return -EINVAL;
	}
	*out = v;
	return 0;
}

int opt(const wl_prog *p, int c, const char *arg, void *ctx)
{
	auto *o = static_cast<Options *>(ctx);
	int idx, ret;
	switch (c) {
	case 's':
		ret = wl_opt_word(p, c, arg, structures, 6, "stack, queue, set, map, bfs or cc",
				  &idx);
		o->structure = static_cast<Structure>(idx);
		return ret;
	case 'm':
		ret = wl_opt_word(p, c, arg, modes, 5, "none, centralized, local, full or tuned",
				  &idx);
		o->tuned = idx == 4;
		if (!o->tuned)
			o->mode = static_cast<Mode>(idx);
		return ret;
	case 'n': return wl_opt_int(p, c, arg, 1, 1LL << 32, &o->ops);
	case 'w': return wl_opt_int(p, c, arg, 1, 1 << 20, &o->workers);
	case 'p': return wl_opt_int(p, c, arg, 0, 100, &o->push_pct);
	case 'b': return wl_opt_int(p, c, arg, 1, 1 << 20, &o->buffer);
	case 'k': return wl_opt_int(p, c, arg, 1, 1LL << 40, &o->keys);
	case 'c': return wl_opt_int(p, c, arg, 1, 1LL << 34, &o->capacity);
	case 'A': o->aggregate = false; return 0;
	case 'H': o->history = true; return 0;
	case 'S': return wl_opt_int(p, c, arg, 0, INT64_MAX, &o->seed);
	case 'R': o->provider = arg; return 0;
	case 'G': o->scale_given = true; return wl_opt_int(p, c, arg, 1, 32, &o->scale);
	case 'e': return wl_opt_int(p, c, arg, 1, 1024, &o->edgefactor);
	case 'r': return wl_opt_int(p, c, arg, 1, 1 << 16, &o->roots);
	case 'f': o->edge_file = arg; return 0;
	case 'o': o->write_file = arg; return 0;
	case 'a': return opt_real(p, c, arg, &o->alpha);
	case 'B': return opt_real(p, c, arg, &o->beta);
	}
	return wl_opt_unknown(p, c);
}

} // namespace

int parse_options(const wl_prog *p, int argc, char **argv, Options *o)
{
	o->provider = svc::default_provider();
	int ret = wl_opt_getopt(p, argc, argv, ":s:m:n:w:p:b:k:c:AHS:R:G:e:r:f:o:a:B:h", nullptr, usage, opt, o);
	if (ret)
		return ret;
	const char *s = structures[int(o->structure)];
	const char *m = o->tuned ? "tuned" : mode_name(o->mode);
	bool hash = o->structure == Structure::SET || o->structure == Structure::MAP;
	bool master = o->mode == Mode::CENTRALIZED || o->mode == Mode::FULL;
	const char *expect = nullptr;
	if (hash && (master || o->tuned))
		expect = "none or local (sets and maps have no master)";
	else if (o->structure == Structure::CC && master && !o->tuned)
		expect = "none, local or tuned (its set has no master)";
	else if (o->tuned && o->structure != Structure::BFS && o->structure != Structure::CC)
		expect = "none, centralized, local or full (tuned is for bfs and cc)";
	if (expect) {
		if (p->rank == 0)
			std::fprintf(stderr, "%s: bad value '%s' for -m with -s %s: expected %s\n",
				     p->name, m, s, expect);
		return -EINVAL;
	}
	return 0;
}

} // namespace comb
