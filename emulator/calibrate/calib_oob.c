/* SPDX-License-Identifier: MIT */
/* Out-of-band control socket; contracts in calib_oob.h. */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "calib_clock.h"
#include "calib_err.h"
#include "calib_oob.h"

/* Pause between connection attempts while the server is starting. */
#define CALIB_OOB_RETRY_MS 50

static int calib_oob_remaining_ms(uint64_t deadline_ns)
{
	uint64_t now = calib_now_ns();

	return now >= deadline_ns ? 0 : (int)((deadline_ns - now) / 1000000 + 1);
}

static int calib_oob_wait(int fd, short events, int timeout_ms)
{
	struct pollfd pfd = { .fd = fd, .events = events };
	int ret;

	do {
		ret = poll(&pfd, 1, timeout_ms);
	} while (ret < 0 && errno == EINTR);
	if (ret < 0)
		return -errno;
	return ret ? 0 : -ETIMEDOUT;
}

static void calib_oob_nodelay(int fd)
{
	int one = 1;

	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

int calib_oob_serve(struct calib_oob *o, const char *addr, uint16_t port,
		    unsigned timeout_s)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC,
				  .ai_socktype = SOCK_STREAM,
				  .ai_flags = AI_PASSIVE };
	struct addrinfo *res = NULL;
	char service[8];
	int lfd = -1, one = 1, ret;

	o->fd = -1;
	o->timeout_ms = (int)timeout_s * 1000;
	snprintf(service, sizeof(service), "%u", port);
	ret = getaddrinfo(addr, service, &hints, &res);
	if (ret) {
		calib_err("control address %s:%u: %s", addr ? addr : "*", port,
			  gai_strerror(ret));
		return -EINVAL;
	}
	lfd = socket(res->ai_family, res->ai_socktype, res->ai_protocol);
	if (lfd < 0)
		goto err_errno;
	setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(lfd, res->ai_addr, res->ai_addrlen) || listen(lfd, 1))
		goto err_errno;

	ret = calib_oob_wait(lfd, POLLIN, o->timeout_ms);
	if (ret == -ETIMEDOUT) {
		calib_err("no client connected to control port %s:%u within %u s",
			  addr ? addr : "*", port, timeout_s);
		goto err;
	}
	if (ret)
		goto err_ret;
	o->fd = accept(lfd, NULL, NULL);
	if (o->fd < 0)
		goto err_errno;
	calib_oob_nodelay(o->fd);
	close(lfd);
	freeaddrinfo(res);
	return 0;

err_errno:
	ret = -errno;
err_ret:
	calib_err("control port %s:%u: %s", addr ? addr : "*", port,
		  strerror(-ret));
err:
	if (lfd >= 0)
		close(lfd);
	freeaddrinfo(res);
	return ret;
}

/* One non-blocking connect attempt bounded by the overall deadline. */
static int calib_oob_try_connect(struct addrinfo *ai, uint64_t deadline_ns)
{
	int fd, ret, err = 0;
	socklen_t len = sizeof(err);

	fd = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK,
		    ai->ai_protocol);
	if (fd < 0)
		return -errno;
	if (connect(fd, ai->ai_addr, ai->ai_addrlen) && errno != EINPROGRESS)
		goto err_errno;
	ret = calib_oob_wait(fd, POLLOUT, calib_oob_remaining_ms(deadline_ns));
	if (ret)
		goto err_ret;
	if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len))
		goto err_errno;
	if (err) {
		ret = -err;
		goto err_ret;
	}
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	return fd;

err_errno:
	ret = -errno;
err_ret:
	close(fd);
	return ret;
}

int calib_oob_connect(struct calib_oob *o, const char *host, uint16_t port,
		      unsigned timeout_s)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC,
				  .ai_socktype = SOCK_STREAM };
	struct addrinfo *res = NULL;
	struct timespec pause = { 0, CALIB_OOB_RETRY_MS * 1000000L };
	uint64_t deadline = calib_now_ns() + (uint64_t)timeout_s * 1000000000ULL;
	char service[8];
	int ret;

	o->fd = -1;
	o->timeout_ms = (int)timeout_s * 1000;
	snprintf(service, sizeof(service), "%u", port);
	ret = getaddrinfo(host, service, &hints, &res);
	if (ret) {
		calib_err("cannot resolve server %s:%u: %s", host, port,
			  gai_strerror(ret));
		return -EHOSTUNREACH;
	}
	for (;;) {
		ret = calib_oob_try_connect(res, deadline);
		if (ret >= 0)
			break;
		if (!calib_oob_remaining_ms(deadline) ||
		    (ret != -ECONNREFUSED && ret != -ETIMEDOUT)) {
			calib_err("cannot reach server %s:%u: %s (gave up after %u s)",
				  host, port, strerror(-ret), timeout_s);
			freeaddrinfo(res);
			return ret;
		}
		nanosleep(&pause, NULL);
	}
	o->fd = ret;
	calib_oob_nodelay(o->fd);
	freeaddrinfo(res);
	return 0;
}

int calib_oob_send(struct calib_oob *o, const void *buf, size_t len)
{
	const char *p = buf;
	ssize_t n;

	while (len) {
		n = send(o->fd, p, len, MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			calib_err("control socket send: %s", strerror(errno));
			return -errno;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int calib_oob_recv(struct calib_oob *o, void *buf, size_t len)
{
	char *p = buf;
	ssize_t n;
	int ret;

	while (len) {
		ret = calib_oob_wait(o->fd, POLLIN, o->timeout_ms);
		if (ret == -ETIMEDOUT) {
			calib_err("peer silent on the control socket for %d s",
				  o->timeout_ms / 1000);
			return ret;
		}
		if (ret)
			return ret;
		n = recv(o->fd, p, len, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			ret = n ? -errno : -ECONNRESET;
			calib_err("control socket closed by peer: %s",
				  strerror(-ret));
			return ret;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int calib_oob_send_blob(struct calib_oob *o, const void *buf, size_t len)
{
	uint64_t n = len;
	int ret;

	ret = calib_oob_send(o, &n, sizeof(n));
	return ret ? ret : calib_oob_send(o, buf, len);
}

int calib_oob_recv_blob(struct calib_oob *o, void *buf, size_t max,
			size_t *len)
{
	uint64_t n;
	int ret;

	ret = calib_oob_recv(o, &n, sizeof(n));
	if (ret)
		return ret;
	if (n > max) {
		calib_err("control message of %llu bytes exceeds %zu",
			  (unsigned long long)n, max);
		return -EMSGSIZE;
	}
	*len = (size_t)n;
	return calib_oob_recv(o, buf, (size_t)n);
}

int calib_oob_barrier(struct calib_oob *o)
{
	char tok = 'b', got;
	int ret;

	ret = calib_oob_send(o, &tok, 1);
	if (ret)
		return ret;
	ret = calib_oob_recv(o, &got, 1);
	if (ret)
		return ret;
	if (got != tok) {
		calib_err("control protocol out of step (barrier got '%c')", got);
		return -EPROTO;
	}
	return 0;
}

void calib_oob_close(struct calib_oob *o)
{
	if (o->fd >= 0)
		close(o->fd);
	o->fd = -1;
}
