/*
 * metrics_http.hpp: a Prometheus /metrics endpoint polled from a service's
 * own loop.
 *
 * A service whose state belongs to one thread (the PFS server's loop) calls
 * poll() from that thread: it accepts waiting connections, reads their
 * requests without blocking, and answers each complete one with render()'s
 * text, so the counters are read where they are written, with no lock.  A
 * client that sends nothing is dropped after kIdle; the listening socket is
 * looked at no more than every kAcceptEvery (the loop calls poll() on every
 * turn, and a scrape can wait that long; a system call per turn cannot); at
 * most kMaxClients are
 * served at once, a further connection is closed at accept.  Any request is
 * answered with the metrics (Prometheus asks only for them); the reply
 * closes the connection.
 */
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <vector>

namespace svc {

class MetricsHttp {
public:
	static constexpr std::chrono::milliseconds kIdle{2000};
	static constexpr size_t kMaxClients = 8;
	static constexpr std::chrono::milliseconds kAcceptEvery{10};

	/* Listens on host:port (port 0: any free one); throws Error naming it. */
	MetricsHttp(const std::string &host, uint16_t port);
	~MetricsHttp();
	MetricsHttp(const MetricsHttp &) = delete;
	MetricsHttp &operator=(const MetricsHttp &) = delete;

	/* "host:port" as bound. */
	std::string address() const { return address_; }
	/* Serves what is ready now; returns whether anything happened. */
	bool poll(const std::function<std::string()> &render);

private:
	struct Client {
		int fd;
		std::string in;
		std::chrono::steady_clock::time_point since;
	};

	bool serve(Client &c, const std::function<std::string()> &render);

	int listen_fd_ = -1;
	std::string address_;
	std::vector<Client> clients_;
	std::chrono::steady_clock::time_point accepted_;	/* last look at the socket */
};

/*
 * One sample line of the Prometheus text format, with its HELP and TYPE
 * lines: name{labels} value.  type is "counter" or "gauge".
 */
std::string prom_metric(const std::string &name, const char *type, const std::string &help,
			const std::string &labels, double value);

} // namespace svc
