/*
 * reactor.cpp: accepting, dispatching and expiring connections (reactor.hpp).
 */
#include "reactor.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <system_error>
#include <unistd.h>

namespace kvsrv {

namespace {

constexpr uint64_t listener_key = 0;
constexpr uint64_t wake_key = 1;
constexpr uint32_t conn_events = EPOLLIN | EPOLLRDHUP | EPOLLONESHOT;

std::chrono::milliseconds scan_period(const Options &opt)
{
	auto p = std::min({opt.idle_timeout / 4, opt.bounds.header_timeout / 4,
			   std::chrono::milliseconds(250)});
	return std::max(p, std::chrono::milliseconds(1));
}

int add(int epfd, int fd, uint32_t events, uint64_t key)
{
	epoll_event ev{};
	ev.events = events;
	ev.data.u64 = key;
	return epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev);
}

} // namespace

Reactor::Reactor(int listen_fd, Dispatch dispatch, Metrics &metrics, const Options &opt)
	: listen_fd_(listen_fd), dispatch_(std::move(dispatch)), metrics_(metrics),
	  idle_timeout_(opt.idle_timeout), scan_period_(scan_period(opt))
{
	epoll_fd_ = epoll_create1(EPOLL_CLOEXEC);
	wake_fd_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (epoll_fd_ < 0 || wake_fd_ < 0 || add(epoll_fd_, listen_fd_, EPOLLIN, listener_key) ||
	    add(epoll_fd_, wake_fd_, EPOLLIN, wake_key)) {
		int err = errno;
		close_fds();
		throw std::system_error(err, std::generic_category(), "cannot set up epoll");
	}
}

Reactor::~Reactor()
{
	close_fds();
}

void Reactor::close_fds()
{
	for (int *fd : {&listen_fd_, &epoll_fd_, &wake_fd_})
		if (*fd >= 0) {
			close(*fd);
			*fd = -1;
		}
}

void Reactor::wake()
{
	uint64_t one = 1;
	if (write(wake_fd_, &one, sizeof(one)) < 0 && errno != EAGAIN)
		std::perror("kvserver: reactor wake-up");
}

int Reactor::rearm(Conn &c, bool readable, bool writable)
{
	epoll_event ev{};
	ev.events = EPOLLONESHOT | (readable ? EPOLLIN | EPOLLRDHUP : 0u) |
		    (writable ? static_cast<uint32_t>(EPOLLOUT) : 0u);
	ev.data.u64 = c.id;
	return epoll_ctl(epoll_fd_, EPOLL_CTL_MOD, c.fd, &ev) < 0 ? -errno : 0;
}

void Reactor::accept_all()
{
	for (;;) {
		int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
				std::fprintf(stderr, "kvserver: accept: %s: pausing for %lld ms\n",
					     std::strerror(errno),
					     static_cast<long long>(scan_period_.count()));
				pause_accept(true);
			} else if (errno != EAGAIN && errno != EWOULDBLOCK) {
				std::fprintf(stderr, "kvserver: accept: %s\n", std::strerror(errno));
			}
			return;
		}
		int one = 1;
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		auto c = std::make_shared<Conn>(fd, next_id_++, *this,
						Conn::Clock::now() + idle_timeout_);
		if (add(epoll_fd_, fd, conn_events, c->id) < 0) {
			std::fprintf(stderr, "kvserver: epoll: %s\n", std::strerror(errno));
			continue;
		}
		metrics_.accepted.fetch_add(1, std::memory_order_relaxed);
		metrics_.open.fetch_add(1, std::memory_order_relaxed);
		conns_.emplace(c->id, std::move(c));
	}
}

void Reactor::pause_accept(bool pause)
{
	epoll_event ev{};
	ev.events = pause ? 0u : static_cast<uint32_t>(EPOLLIN);
	ev.data.u64 = listener_key;
	if (epoll_ctl(epoll_fd_, EPOLL_CTL_MOD, listen_fd_, &ev) == 0)
		accept_paused_ = pause;
}

/* Drops closed connections and closes idle ones past their deadline (all:
 * every idle one, at shutdown). */
void Reactor::expire(bool all)
{
	auto now = Conn::Clock::now();
	for (auto it = conns_.begin(); it != conns_.end();) {
		Conn &c = *it->second;
		std::unique_lock lock(c.mu);
		if (c.state == Conn::State::idle && all)
			conn_close_locked(c, metrics_);
		else if (c.state == Conn::State::idle && now >= c.deadline)
			conn_expire_locked(c, metrics_);
		bool gone = c.state == Conn::State::closed;
		lock.unlock();
		it = gone ? conns_.erase(it) : std::next(it);
	}
}

void Reactor::run(const std::atomic<bool> &stopping)
{
	auto next_scan = Conn::Clock::now() + scan_period_;
	epoll_event evs[64];
	while (!stopping.load(std::memory_order_acquire)) {
		int n = epoll_wait(epoll_fd_, evs, 64, static_cast<int>(scan_period_.count()));
		if (n < 0 && errno != EINTR) {
			std::fprintf(stderr, "kvserver: epoll_wait: %s\n", std::strerror(errno));
			break;
		}
		for (int i = 0; i < n; i++) {
			uint64_t key = evs[i].data.u64;
			if (key == listener_key) {
				accept_all();
				continue;
			}
			if (key == wake_key) {
				uint64_t v;
				if (read(wake_fd_, &v, sizeof(v)) < 0 && errno != EAGAIN)
					std::perror("kvserver: reactor wake-up");
				continue;
			}
			auto it = conns_.find(key);
			if (it == conns_.end())
				continue;
			std::shared_ptr<Conn> c = it->second;
			{
				std::lock_guard lock(c->mu);
				if (c->state != Conn::State::idle)
					continue;
				/* Checked here too: the scan below may always
				 * find busy a client whose bytes wake the loop. */
				if (Conn::Clock::now() >= c->deadline) {
					conn_expire_locked(*c, metrics_);
					continue;
				}
				c->state = Conn::State::busy;
			}
			dispatch_(c);
		}
		if (Conn::Clock::now() >= next_scan) {
			expire(false);
			if (accept_paused_)
				pause_accept(false);
			next_scan = Conn::Clock::now() + scan_period_;
		}
	}
	close(listen_fd_);
	listen_fd_ = -1;
	expire(true);
}

} // namespace kvsrv
