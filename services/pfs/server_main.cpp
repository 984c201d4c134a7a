/*
 * loggp-pfs-server: one storage server of a PFS instance (README.md).
 *
 *   loggp-pfs-server --instance DIR --index I --servers N [--provider P]
 *                    [--capacity BYTES] [--timeout SEC] [--metrics HOST[:PORT]]
 *
 * Server I keeps its objects in DIR/server-I/ (server 0 also the namespace,
 * DIR/server-0/meta.db), holds DIR/server-I/lock while it runs, so a second
 * server on the same directory is refused, and publishes its endpoint
 * address in DIR/server-I.addr.  Then it prints
 * "loggp-pfs-server: ready index=I servers=N" on stdout (with --metrics,
 * " metrics=HOST:PORT": its Prometheus endpoint).  SIGINT or SIGTERM
 * stops it: it removes its .addr file and prints its counters as one JSON
 * line on stderr.
 */
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <getopt.h>
#include <string>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/options.hpp"
#include "error.hpp"
#include "instance.hpp"
#include "server.hpp"

namespace {

const char usage[] =
	"usage: loggp-pfs-server --instance DIR --index I --servers N [--provider P]\n"
	"       [--capacity BYTES] [--timeout SEC]\n"
	"  --instance DIR     the directory every server of the instance shares (required)\n"
	"  --index I          this server's number, 0..N-1; server 0 keeps the namespace\n"
	"  --servers N        the number of servers of the instance (required)\n"
	"  --provider P       libfabric provider (default $LOGGP_PROVIDER, else tcp;ofi_rxm)\n"
	"  --capacity BYTES   refuse writes (ENOSPC) past this many bytes of objects\n"
	"  --timeout SEC      drop a message whose pieces have not all come by then (10)\n"
	"  --metrics HOST[:PORT]  serve the counters for Prometheus there (port 0 or none:\n"
	"                     any free one, named in the ready line)\n";

std::atomic<bool> stop{false};

void on_signal(int)
{
	stop = true;
}

/* Holds dir/lock for the life of the process; refuses a second server. */
void lock_dir(const std::string &dir)
{
	std::string path = dir + "/lock";
	int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0)
		throw pfs::Error(errno, "open " + path + ": " + std::strerror(errno));
	if (::flock(fd, LOCK_EX | LOCK_NB)) {
		char pid[32] = {0};
		ssize_t n = ::pread(fd, pid, sizeof pid - 1, 0);
		std::string who = n > 0 ? std::string(pid, strcspn(pid, "\n")) : "?";
		throw pfs::Error(EBUSY, dir + " is in use by another server (pid " + who + ")");
	}
	std::string me = std::to_string(::getpid()) + "\n";
	if (::ftruncate(fd, 0) || ::pwrite(fd, me.data(), me.size(), 0) < 0)
		throw pfs::Error(errno, "write " + path + ": " + std::strerror(errno));
	/* fd stays open: the lock lives as long as the process. */
}

int serve(int argc, char **argv)
{
	static const struct option opts[] = {
		{"instance", required_argument, nullptr, 'i'},
		{"index", required_argument, nullptr, 'x'},
		{"servers", required_argument, nullptr, 'n'},
		{"provider", required_argument, nullptr, 'p'},
		{"capacity", required_argument, nullptr, 'c'},
		{"timeout", required_argument, nullptr, 't'},
		{"metrics", required_argument, nullptr, 'm'},
		{"help", no_argument, nullptr, 'h'},
		{nullptr, 0, nullptr, 0},
	};
	pfs::ServerConfig cfg;
	std::string instance;
	bool have_index = false, have_servers = false;
	cfg.provider = svc::default_provider();
	int c;
	while ((c = getopt_long(argc, argv, "", opts, nullptr)) != -1) {
		switch (c) {
		case 'i': instance = optarg; break;
		case 'x':
			cfg.index = static_cast<uint32_t>(svc::option_number("index", optarg, 0, 1023));
			have_index = true;
			break;
		case 'n':
			cfg.servers = static_cast<uint32_t>(
				svc::option_number("servers", optarg, 1, 1024));
			have_servers = true;
			break;
		case 'p': cfg.provider = optarg; break;
		case 'c': cfg.capacity = svc::option_number("capacity", optarg, 1, UINT64_MAX); break;
		case 't':
			cfg.ttl = std::chrono::seconds(svc::option_number("timeout", optarg, 1, 86400));
			break;
		case 'm': {
			std::string a = optarg;
			size_t colon = a.rfind(':');
			cfg.metrics_host = a.substr(0, colon);
			if (colon != std::string::npos)
				cfg.metrics_port = static_cast<uint16_t>(
					svc::option_number("metrics port", a.c_str() + colon + 1, 0, 65535));
			break;
		}
		case 'h': std::fputs(usage, stdout); return 0;
		default: std::fputs(usage, stderr); return 2;
		}
	}
	if (instance.empty() || !have_index || !have_servers || optind != argc) {
		std::fputs(usage, stderr);
		return 2;
	}
	if (cfg.index >= cfg.servers)
		throw pfs::Error(EINVAL, "--index " + std::to_string(cfg.index) +
						 ": expected 0 to " + std::to_string(cfg.servers - 1) +
						 " (--servers " + std::to_string(cfg.servers) + ")");
	cfg.dir = pfs::server_dir(instance, cfg.index);
	if (::mkdir(instance.c_str(), 0755) && errno != EEXIST)
		throw pfs::Error(errno, "mkdir " + instance + ": " + std::strerror(errno));
	if (::mkdir(cfg.dir.c_str(), 0755) && errno != EEXIST)
		throw pfs::Error(errno, "mkdir " + cfg.dir + ": " + std::strerror(errno));
	lock_dir(cfg.dir);

	pfs::Server server(cfg);
	struct sigaction sa = {};
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, nullptr);
	sigaction(SIGTERM, &sa, nullptr);
	pfs::addr_publish(instance, cfg.index, server.address());
	std::string metrics = server.metrics_address();
	std::printf("loggp-pfs-server: ready index=%u servers=%u%s%s\n", cfg.index, cfg.servers,
		    metrics.empty() ? "" : " metrics=", metrics.c_str());
	std::fflush(stdout);
	server.run(stop);
	::unlink(pfs::addr_path(instance, cfg.index).c_str());
	std::fprintf(stderr, "%s\n", server.stats().c_str());
	return 0;
}

} // namespace

int main(int argc, char **argv)
{
	try {
		return serve(argc, argv);
	} catch (const std::exception &e) {
		std::fprintf(stderr, "loggp-pfs-server: %s\n", e.what());
		return 1;
	}
}
