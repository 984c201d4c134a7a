/*
 * metrics_http.cpp: the polled /metrics endpoint (metrics_http.hpp).
 */
#include "metrics_http.hpp"

#include <arpa/inet.h>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "error.hpp"

namespace svc {

MetricsHttp::MetricsHttp(const std::string &host, uint16_t port)
{
	sockaddr_in sa = {};
	sa.sin_family = AF_INET;
	sa.sin_port = htons(port);
	if (inet_pton(AF_INET, host.c_str(), &sa.sin_addr) != 1)
		throw Error(EINVAL, "bad metrics address '" + host + "': expected an IPv4 address");
	listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (listen_fd_ < 0)
		throw Error(errno, std::string("metrics socket: ") + std::strerror(errno));
	int one = 1;
	::setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	socklen_t len = sizeof sa;
	if (::bind(listen_fd_, reinterpret_cast<sockaddr *>(&sa), sizeof sa) ||
	    ::listen(listen_fd_, 16) ||
	    ::getsockname(listen_fd_, reinterpret_cast<sockaddr *>(&sa), &len)) {
		int e = errno;
		::close(listen_fd_);
		throw Error(e, "metrics endpoint " + host + ":" + std::to_string(port) + ": " +
				       std::strerror(e));
	}
	address_ = host + ":" + std::to_string(ntohs(sa.sin_port));
}

MetricsHttp::~MetricsHttp()
{
	for (Client &c : clients_)
		::close(c.fd);
	::close(listen_fd_);
}

bool MetricsHttp::poll(const std::function<std::string()> &render)
{
	bool did = false;
	auto now = std::chrono::steady_clock::now();
	if (clients_.empty() && now - accepted_ < kAcceptEvery)
		return false;
	accepted_ = now;
	for (;;) {
		int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0)
			break;
		did = true;
		if (clients_.size() >= kMaxClients)
			::close(fd);
		else
			clients_.push_back({fd, {}, now});
	}
	for (size_t i = 0; i < clients_.size();) {
		Client &c = clients_[i];
		bool done = serve(c, render) || now - c.since > kIdle;
		if (done) {
			did = true;
			::close(c.fd);
			clients_[i] = clients_.back();
			clients_.pop_back();
		} else {
			i++;
		}
	}
	return did;
}

/* True when the client is finished with: answered, gone, or misbehaving. */
bool MetricsHttp::serve(Client &c, const std::function<std::string()> &render)
{
	char buf[1024];
	for (;;) {
		ssize_t n = ::recv(c.fd, buf, sizeof buf, 0);
		if (n == 0)
			return true;
		if (n < 0)
			return errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR;
		c.in.append(buf, size_t(n));
		if (c.in.find("\r\n\r\n") != std::string::npos)
			break;
		if (c.in.size() > 8192)
			return true;
	}
	std::string body = render();
	std::string reply = "HTTP/1.1 200 OK\r\n"
			    "Content-Type: text/plain; version=0.0.4\r\n"
			    "Content-Length: " + std::to_string(body.size()) + "\r\n"
			    "Connection: close\r\n\r\n" + body;
	/* A scrape is a few KiB: it fits the socket buffer; a short write is dropped. */
	(void)::send(c.fd, reply.data(), reply.size(), MSG_NOSIGNAL);
	return true;
}

std::string prom_metric(const std::string &name, const char *type, const std::string &help,
			const std::string &labels, double value)
{
	char num[64];
	std::snprintf(num, sizeof num, "%.17g", value);
	return "# HELP " + name + " " + help + "\n# TYPE " + name + " " + type + "\n" + name +
	       "{" + labels + "} " + num + "\n";
}

} // namespace svc
