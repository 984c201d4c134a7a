/*
 * options.cpp: the command line of loggp-kvserver (options.hpp).
 */
#include "options.hpp"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <getopt.h>
#include <stdexcept>

namespace kvsrv {

const char usage[] =
	"usage: loggp-kvserver [--bind ADDR] [--port P] [--threads N]\n"
	"       [--queue mutex|lockfree|reuseport] [--queue-capacity N]\n"
	"       [--store global|rwlock|sharded] [--shards N]\n"
	"       [--log FILE] [--fsync always|interval|none] [--fsync-interval MS]\n"
	"       [--recover refuse|truncate|skip]\n"
	"       [--idle-timeout MS] [--header-timeout MS] [--min-body-rate B]\n"
	"       [--max-header B] [--max-body B] [--max-key B]\n"
	"       [--max-unsent B] [--max-buffered B] [--hash-rounds N] [--backlog N]\n"
	"  --bind ADDR         IPv4 address to listen on (default 127.0.0.1)\n"
	"  --port P            TCP port (default 8080; 0 = any free port)\n"
	"  --threads N         worker threads, or accepting loops with reuseport (default 2)\n"
	"  --queue Q           how connections reach workers (default mutex):\n"
	"                      mutex = bounded queue under a mutex and condition variables,\n"
	"                      lockfree = Michael-Scott queue, hazard pointers, futex wake-ups,\n"
	"                      reuseport = one SO_REUSEPORT listener and event loop per thread\n"
	"  --queue-capacity N  connections waiting for a worker before 503 (default 1024)\n"
	"  --store S           global = one mutex, rwlock = one reader/writer lock,\n"
	"                      sharded = --shards reader/writer-locked maps (default rwlock)\n"
	"  --shards N          shards of --store sharded (default 16)\n"
	"  --log FILE          append-only log of every write, replayed at start\n"
	"  --fsync P           always = reply after fdatasync, interval = fdatasync every\n"
	"                      --fsync-interval, none = never (default interval)\n"
	"  --fsync-interval MS (default 1000)\n"
	"  --recover M         a log corrupt before its tail: refuse = do not start (default),\n"
	"                      truncate = cut it at the bad record, skip = drop the bad record\n"
	"  --idle-timeout MS   drop a connection silent this long, mid-request or not, or\n"
	"                      not reading its replies (default 10000)\n"
	"  --header-timeout MS a request's head must arrive whole this long after its first\n"
	"                      byte (default 5000)\n"
	"  --min-body-rate B   after --header-timeout, a request must keep arriving at this\n"
	"                      many bytes/s (default 1024)\n"
	"  --max-header B      request line and headers (default 8192; 431 above)\n"
	"  --max-body B        request body (default 1048576; 413 above)\n"
	"  --max-key B         key length (default 256; 400 above)\n"
	"  --max-unsent B      replies not yet written before a connection is not read\n"
	"                      (default 1048576)\n"
	"  --max-buffered B    bytes buffered for all connections before 503 (default 268435456)\n"
	"  --hash-rounds N     hash each value N times per request as CPU work (default 0)\n"
	"  --backlog N         listen backlog (default 1024)\n";

namespace {

long number(const char *opt, const char *arg, long min, long max)
{
	char *end;
	errno = 0;
	long v = std::strtol(arg, &end, 10);
	if (errno || end == arg || *end || v < min || v > max)
		throw std::invalid_argument(std::string("bad value '") + arg + "' for --" + opt +
					    ": expected an integer from " + std::to_string(min) +
					    " to " + std::to_string(max));
	return v;
}

template <typename E, size_t N>
E choice(const char *opt, const char *arg, const char *const (&names)[N], const E (&kinds)[N])
{
	std::string accepted;
	for (size_t i = 0; i < N; i++) {
		if (std::string(arg) == names[i])
			return kinds[i];
		accepted += (i ? ", " : "") + std::string(names[i]);
	}
	throw std::invalid_argument(std::string("bad value '") + arg + "' for --" + opt +
				    ": expected one of " + accepted);
}

const char *const queue_names[] = {"mutex", "lockfree", "reuseport"};
const QueueKind queue_kinds[] = {QueueKind::mutex, QueueKind::lockfree, QueueKind::reuseport};
const char *const store_names[] = {"global", "rwlock", "sharded"};
const StoreKind store_kinds[] = {StoreKind::global, StoreKind::rwlock, StoreKind::sharded};
const char *const fsync_names[] = {"always", "interval", "none"};
const FsyncPolicy fsync_kinds[] = {FsyncPolicy::always, FsyncPolicy::interval, FsyncPolicy::none};
const char *const recover_names[] = {"refuse", "truncate", "skip"};
const RecoverMode recover_kinds[] = {RecoverMode::refuse, RecoverMode::truncate, RecoverMode::skip};

} // namespace

const char *queue_name(QueueKind k) { return queue_names[static_cast<int>(k)]; }
const char *store_name(StoreKind k) { return store_names[static_cast<int>(k)]; }
const char *fsync_name(FsyncPolicy p) { return fsync_names[static_cast<int>(p)]; }
const char *recover_name(RecoverMode m) { return recover_names[static_cast<int>(m)]; }

Options parse_options(int argc, char **argv)
{
	static const struct option opts[] = {
		{"bind", required_argument, nullptr, 'b'},
		{"port", required_argument, nullptr, 'p'},
		{"threads", required_argument, nullptr, 't'},
		{"queue", required_argument, nullptr, 'q'},
		{"queue-capacity", required_argument, nullptr, 'Q'},
		{"store", required_argument, nullptr, 's'},
		{"shards", required_argument, nullptr, 'S'},
		{"log", required_argument, nullptr, 'l'},
		{"fsync", required_argument, nullptr, 'f'},
		{"fsync-interval", required_argument, nullptr, 'F'},
		{"recover", required_argument, nullptr, 'R'},
		{"idle-timeout", required_argument, nullptr, 'i'},
		{"header-timeout", required_argument, nullptr, 'T'},
		{"min-body-rate", required_argument, nullptr, 'M'},
		{"max-unsent", required_argument, nullptr, 'U'},
		{"max-buffered", required_argument, nullptr, 'W'},
		{"max-header", required_argument, nullptr, 'H'},
		{"max-body", required_argument, nullptr, 'B'},
		{"max-key", required_argument, nullptr, 'K'},
		{"hash-rounds", required_argument, nullptr, 'r'},
		{"backlog", required_argument, nullptr, 'g'},
		{"help", no_argument, nullptr, 'h'},
		{nullptr, 0, nullptr, 0},
	};
	Options o;
	opterr = 0;
	int c;
	while ((c = getopt_long(argc, argv, ":h", opts, nullptr)) != -1) {
		switch (c) {
		case 'b': o.bind = optarg; break;
		case 'p': o.port = static_cast<int>(number("port", optarg, 0, 65535)); break;
		case 't': o.threads = static_cast<int>(number("threads", optarg, 1, 256)); break;
		case 'q': o.queue = choice("queue", optarg, queue_names, queue_kinds); break;
		case 'Q':
			o.queue_capacity = static_cast<size_t>(number("queue-capacity", optarg, 1,
								       1 << 20));
			break;
		case 's': o.store = choice("store", optarg, store_names, store_kinds); break;
		case 'S': o.shards = static_cast<int>(number("shards", optarg, 1, 4096)); break;
		case 'l': o.log = optarg; break;
		case 'f': o.fsync = choice("fsync", optarg, fsync_names, fsync_kinds); break;
		case 'F':
			o.fsync_interval = std::chrono::milliseconds(
				number("fsync-interval", optarg, 1, 3600000));
			break;
		case 'R': o.recover = choice("recover", optarg, recover_names, recover_kinds); break;
		case 'i':
			o.idle_timeout = std::chrono::milliseconds(
				number("idle-timeout", optarg, 10, 86400000));
			break;
		case 'T':
			o.bounds.header_timeout = std::chrono::milliseconds(
				number("header-timeout", optarg, 10, 86400000));
			break;
		case 'M':
			o.bounds.min_body_rate = static_cast<size_t>(number("min-body-rate", optarg, 1,
									     1L << 30));
			break;
		case 'U':
			o.bounds.max_unsent = static_cast<size_t>(number("max-unsent", optarg, 4096,
									  1L << 30));
			break;
		case 'W':
			o.bounds.max_buffered = static_cast<size_t>(number("max-buffered", optarg,
									    1 << 16, 1L << 40));
			break;
		case 'H':
			o.limits.max_header = static_cast<size_t>(number("max-header", optarg, 64,
									  1 << 20));
			break;
		case 'B':
			o.limits.max_body = static_cast<size_t>(number("max-body", optarg, 0,
									1L << 30));
			break;
		case 'K':
			o.limits.max_key = static_cast<size_t>(number("max-key", optarg, 1, 4096));
			break;
		case 'r':
			o.hash_rounds = static_cast<int>(number("hash-rounds", optarg, 0, 1000000));
			break;
		case 'g': o.backlog = static_cast<int>(number("backlog", optarg, 1, 65535)); break;
		case 'h': std::fputs(usage, stdout); std::exit(0);
		case ':':
			throw std::invalid_argument(std::string("option ") + argv[optind - 1] +
						    " needs a value (see --help)");
		default:
			throw std::invalid_argument(std::string("unknown option ") +
						    argv[optind - 1] + " (see --help)");
		}
	}
	if (optind < argc)
		throw std::invalid_argument(std::string("unexpected argument '") + argv[optind] +
					    "' (see --help)");
	return o;
}

} // namespace kvsrv
