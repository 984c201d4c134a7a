/*
 * options.cpp: loggp-combining's options, parsed alike by every rank.
 */
#include "options.hpp"

#include <cerrno>

#include "common/options.hpp"

namespace comb {

namespace {

const char usage[] =
	"usage: mpirun -np N loggp-combining [options]\n"
	"  -s stack|queue|set|map  the structure (default stack)\n"
	"  -m none|centralized|local|full  combining mode (default full; sets and maps:\n"
	"         none or local)\n"
	"  -n N   operations per process (default 100000)\n"
	"  -w N   workers per process (default 2048)\n"
	"  -p P   percent pushes (stack, queue) or inserts (set, map) (default 100)\n"
	"  -b N   combining buffer, operations per batch (default 1024)\n"
	"  -k N   key range of sets and maps (default 1024)\n"
	"  -c N   capacity of the stack or queue (default: every push fits)\n"
	"  -A     aggregation off: every record its own message\n"
	"  -H     record the history and check it is linearizable (small runs)\n"
	"  -S N   seed (default 1)\n"
	"  -R P   libfabric provider (default $LOGGP_PROVIDER, else tcp;ofi_rxm)\n";

const char *const structures[] = {"stack", "queue", "set", "map"};
const char *const modes[] = {"none", "centralized", "local", "full"};

int opt(const wl_prog *p, int c, const char *arg, void *ctx)
{
	auto *o = static_cast<Options *>(ctx);
	int idx, ret;
	switch (c) {
	case 's':
		ret = wl_opt_word(p, c, arg, structures, 4, "stack, queue, set or map", &idx);
		o->structure = static_cast<Structure>(idx);
		return ret;
	case 'm':
		ret = wl_opt_word(p, c, arg, modes, 4, "none, centralized, local or full", &idx);
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
	}
	return wl_opt_unknown(p, c);
}

} // namespace

int parse_options(const wl_prog *p, int argc, char **argv, Options *o)
{
	o->provider = svc::default_provider();
	int ret = wl_opt_getopt(p, argc, argv, ":s:m:n:w:p:b:k:c:AHS:R:h", nullptr, usage, opt, o);
	if (ret)
		return ret;
	bool hash = o->structure == Structure::SET || o->structure == Structure::MAP;
	if (hash && (o->mode == Mode::CENTRALIZED || o->mode == Mode::FULL)) {
		if (p->rank == 0)
			std::fprintf(stderr, "%s: bad value '%s' for -m with -s %s: expected none "
					     "or local (sets and maps have no master)\n",
				     p->name, mode_name(o->mode), structures[int(o->structure)]);
		return -EINVAL;
	}
	return 0;
}

} // namespace comb
