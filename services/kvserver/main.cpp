/*
 * loggp-kvserver: a threaded HTTP/1.1 key-value server with interchangeable
 * work queues and store locks ([KVSRV] in docs/design.md; README.md here).
 *
 *   loggp-kvserver [--port P] [--threads N] [--queue Q] [--store S] ...
 *
 * Prints "loggp-kvserver: ready port=P ..." on stdout once it accepts
 * connections.  SIGINT or SIGTERM stop it cleanly (server.hpp): the signals
 * are blocked in every thread and taken here by sigtimedwait, so no handler
 * runs inside the server's code, as DPDK's l2fwd ends its loops on a signal.
 * It then prints one JSON line of its counters on stdout and exits 0.
 */
#include <csignal>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <sys/resource.h>

#include "options.hpp"
#include "server.hpp"

int main(int argc, char **argv)
{
	kvsrv::Options opt;
	try {
		opt = kvsrv::parse_options(argc, argv);
	} catch (const std::invalid_argument &e) {
		std::fprintf(stderr, "loggp-kvserver: %s\n", e.what());
		return 2;
	}
	/* One descriptor per connection: allow as many as the hard limit. */
	rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	sigset_t sigs;
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &sigs, nullptr);
	std::signal(SIGPIPE, SIG_IGN);
	try {
		kvsrv::Server server(opt);
		server.start();
		std::printf("loggp-kvserver: ready port=%d queue=%s store=%s threads=%d\n",
			    server.port(), kvsrv::queue_name(opt.queue), kvsrv::store_name(opt.store),
			    opt.threads);
		std::fflush(stdout);
		int sig = -1;
		const timespec tick = {1, 0};
		while (sig < 0)
			sig = sigtimedwait(&sigs, nullptr, &tick);
		server.stop();
		std::printf("{\"kvserver\": \"stopped\", \"signal\": \"%s\", %s}\n",
			    sig == SIGINT ? "SIGINT" : "SIGTERM", server.summary().c_str());
		std::fflush(stdout);
	} catch (const std::runtime_error &e) {	/* system errors and a corrupt log */
		std::fprintf(stderr, "loggp-kvserver: %s\n", e.what());
		return 1;
	}
	return 0;
}
