/*
 * loggp-kvs-broker: a standing KVS instance, one broker per MPI rank, that
 * people and tools reach through loggp-kvs (the CLI) on a Unix socket per
 * rank.  Workloads such as KAP embed their brokers instead (instance.hpp).
 *
 *   mpirun -np N loggp-kvs-broker --socket-dir DIR [--sqlite FILE] ...
 *
 * Rank r listens on DIR/kvs-<r>.sock.  When every rank listens, rank 0
 * prints "loggp-kvs-broker: ready ranks=N".  SIGINT or SIGTERM (mpirun
 * forwards them) stops every broker; each prints its counters as one JSON
 * line on stderr.
 */
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <getopt.h>
#include <string>

#include <mpi.h>

#include "common/options.hpp"
#include "error.hpp"
#include "instance.hpp"
#include "sockserver.hpp"

namespace {

const char usage[] =
	"usage: mpirun -np N loggp-kvs-broker --socket-dir DIR [--sqlite FILE]\n"
	"       [--provider P] [--fanout K] [--inline-max B] [--timeout SEC]\n"
	"       [--cache-expire SEC]\n"
	"  --socket-dir DIR   rank r listens on DIR/kvs-<r>.sock (required)\n"
	"  --sqlite FILE      the root's backing file: the namespace survives restarts\n"
	"  --provider P       libfabric provider (default $LOGGP_PROVIDER, else tcp;ofi_rxm)\n"
	"  --fanout K         children per broker in the tree (default 2)\n"
	"  --inline-max B     values of B bytes or more are stored by reference (default 42)\n"
	"  --timeout SEC      longest wait of any request (default 30)\n"
	"  --cache-expire SEC drop cached objects unused this long (default 60, 0 = never)\n";

struct Args {
	std::string socket_dir;
	kvs::Config cfg;
};

Args parse(int argc, char **argv)
{
	static const struct option opts[] = {
		{"socket-dir", required_argument, nullptr, 's'},
		{"sqlite", required_argument, nullptr, 'q'},
		{"provider", required_argument, nullptr, 'p'},
		{"fanout", required_argument, nullptr, 'f'},
		{"inline-max", required_argument, nullptr, 'i'},
		{"timeout", required_argument, nullptr, 't'},
		{"cache-expire", required_argument, nullptr, 'e'},
		{"help", no_argument, nullptr, 'h'},
		{nullptr, 0, nullptr, 0},
	};
	Args a;
	a.cfg.provider = svc::default_provider();
	opterr = 0;
	int c;
	while ((c = getopt_long(argc, argv, ":h", opts, nullptr)) != -1) {
		switch (c) {
		case 's': a.socket_dir = optarg; break;
		case 'q': a.cfg.sqlite = optarg; break;
		case 'p': a.cfg.provider = optarg; break;
		case 'f':
			a.cfg.fanout =
				static_cast<uint32_t>(svc::option_number("fanout", optarg, 1, 1024));
			break;
		case 'i':
			a.cfg.limits.inline_max =
				static_cast<size_t>(svc::option_number("inline-max", optarg, 1, 1 << 26));
			break;
		case 't':
			a.cfg.timeout =
				std::chrono::seconds(svc::option_number("timeout", optarg, 1, 86400));
			break;
		case 'e':
			a.cfg.cache_expire = std::chrono::seconds(
				svc::option_number("cache-expire", optarg, 0, 86400));
			break;
		case 'h': std::fputs(usage, stdout); std::exit(0);
		case ':':
			throw kvs::Error(EINVAL, std::string("option ") + argv[optind - 1] +
							 " needs a value (see --help)");
		default:
			throw kvs::Error(EINVAL, std::string("unknown option ") + argv[optind - 1] +
							 " (see --help)");
		}
	}
	if (optind < argc)
		throw kvs::Error(EINVAL, std::string("unexpected argument '") + argv[optind] +
						 "' (see --help)");
	if (a.socket_dir.empty())
		throw kvs::Error(EINVAL, "--socket-dir DIR is required (see --help)");
	return a;
}

} // namespace

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int rank, size;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	/* Every thread inherits the mask, so the signals reach sigwait only. */
	sigset_t sigs;
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &sigs, nullptr);
	try {
		Args a = parse(argc, argv);
		kvs::Instance inst(MPI_COMM_WORLD, a.cfg);
		kvs::SockServer server(inst.broker(),
				       a.socket_dir + "/kvs-" + std::to_string(rank) + ".sock");
		MPI_Barrier(MPI_COMM_WORLD);
		if (rank == 0) {
			std::printf("loggp-kvs-broker: ready ranks=%d\n", size);
			std::fflush(stdout);
		}
		int sig = 0;
		sigwait(&sigs, &sig);
		server.stop();
		kvs::BrokerStats s = inst.broker().stats();
		inst.broker().stop();
		std::fprintf(stderr,
			     "{\"kvs_broker\": %d, \"version\": %llu, \"fences_applied\": %llu, "
			     "\"gets\": %llu, \"loads_sent\": %llu, \"msgs_sent\": %llu}\n",
			     rank, (unsigned long long)s.version,
			     (unsigned long long)s.fences_applied, (unsigned long long)s.gets,
			     (unsigned long long)s.loads_sent,
			     (unsigned long long)s.fabric.msgs_sent);
	} catch (const std::exception &e) {
		std::fprintf(stderr, "loggp-kvs-broker: rank %d: %s\n", rank, e.what());
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	MPI_Finalize();
	return 0;
}
