/* SPDX-License-Identifier: MIT */
/* Control socket and metrics endpoint thread (see wire_server.h). */
#define _GNU_SOURCE	/* accept4, pipe2, memmem */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "wire_buf.h"
#include "wire_ctl.h"
#include "wire_server.h"

/*
 * Each kind of client has its own slots, so scrapers that pile up cannot
 * lock loggp out of the control socket.  A control connection may idle for
 * a whole run, until all slots are taken: then a new client takes the slot
 * of the one idle longest, if nothing was read or sent on it for
 * WIRE_SRV_CTL_IDLE_MS, so idle connections cannot lock control out.  An
 * HTTP one with nothing read or sent for WIRE_SRV_HTTP_IDLE_MS is closed (a
 * scraper sends its request at once).
 */
#define WIRE_SRV_CTL_CLIENTS	32
#define WIRE_SRV_HTTP_CLIENTS	32
#define WIRE_SRV_CLIENTS	(WIRE_SRV_CTL_CLIENTS + WIRE_SRV_HTTP_CLIENTS)
#define WIRE_SRV_CTL_IDLE_MS	2000
#define WIRE_SRV_HTTP_IDLE_MS	5000
/* Room for a burst of connects while the thread is busy elsewhere: Unix
 * sockets refuse a non-blocking connect at once when the backlog is full. */
#define WIRE_SRV_BACKLOG	WIRE_SRV_CLIENTS
#define WIRE_SRV_INBUF		8192

enum wire_conn_kind { WIRE_CONN_CTL, WIRE_CONN_HTTP };

struct wire_conn {
	int fd;
	enum wire_conn_kind kind;
	char in[WIRE_SRV_INBUF];
	size_t inlen;
	int discarding;		/* skipping the rest of an over-long line */
	int closing;		/* HTTP: close once out is sent */
	int64_t active_ms;	/* HTTP: monotonic time of the last progress */
	struct wire_buf out;
	size_t outoff;
};

struct wire_server {
	struct wire_state *st;
	pthread_t thread;
	int running;
	int wake[2];
	int ctl_fd;
	int http_fd;
	char ctl_path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	struct wire_conn *conns[WIRE_SRV_CLIENTS];
	int nconns[2];		/* open, by enum wire_conn_kind */
	struct wire_buf reply;
};

static int64_t wire_srv_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int wire_srv_nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	return fl < 0 ? -errno : fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

/* Refuse a live socket, replace a stale one, refuse other files. */
static int wire_srv_ctl_bind(struct wire_server *srv, const char *path,
			     char *err, size_t errlen)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char dir[sizeof(sa.sun_path)], *slash;
	struct stat stt;
	int fd, rc;

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (slash && slash != dir) {
		*slash = '\0';
		if (mkdir(dir, 0755) && errno != EEXIST) {
			rc = -errno;
			snprintf(err, errlen, "cannot create directory %s for "
				 "--control: %s", dir, strerror(errno));
			return rc;
		}
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		goto err_errno;
	if (!lstat(path, &stt)) {
		if (!S_ISSOCK(stt.st_mode)) {
			snprintf(err, errlen, "--control %s exists and is not a "
				 "socket: remove it or choose another path",
				 path);
			rc = -EEXIST;
			goto err;
		}
		if (!connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
			snprintf(err, errlen, "--control %s is in use by a "
				 "running process: choose another path", path);
			rc = -EADDRINUSE;
			goto err;
		}
		close(fd);
		unlink(path);
		fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd < 0)
			goto err_errno;
	}
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) ||
	    listen(fd, WIRE_SRV_BACKLOG))
		goto err_errno;
	srv->ctl_fd = fd;
	snprintf(srv->ctl_path, sizeof(srv->ctl_path), "%s", path);
	return wire_srv_nonblock(fd);
err_errno:
	rc = -errno;
	snprintf(err, errlen, "cannot listen on --control %s: %s", path,
		 strerror(errno));
err:
	if (fd >= 0)
		close(fd);
	return rc;
}

static int wire_srv_http_bind(struct wire_server *srv, const char *host,
			      uint16_t port, uint16_t *bound, char *err,
			      size_t errlen)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM,
				  .ai_flags = AI_PASSIVE | AI_NUMERICSERV };
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	struct addrinfo *ai = NULL;
	char sport[8];
	int fd = -1, one = 1, rc;

	snprintf(sport, sizeof(sport), "%u", port);
	rc = getaddrinfo(host, sport, &hints, &ai);
	if (rc) {
		snprintf(err, errlen, "bad host '%s' for --metrics: %s", host,
			 gai_strerror(rc));
		return -EINVAL;
	}
	fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC,
		    ai->ai_protocol);
	if (fd < 0)
		goto err_errno;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, ai->ai_addr, ai->ai_addrlen) ||
	    listen(fd, WIRE_SRV_BACKLOG))
		goto err_errno;
	if (bound && !getsockname(fd, (struct sockaddr *)&ss, &sl))
		*bound = ntohs(ss.ss_family == AF_INET6 ?
			       ((struct sockaddr_in6 *)&ss)->sin6_port :
			       ((struct sockaddr_in *)&ss)->sin_port);
	freeaddrinfo(ai);
	srv->http_fd = fd;
	return wire_srv_nonblock(fd);
err_errno:
	rc = -errno;
	snprintf(err, errlen, "cannot listen on --metrics %s:%u: %s", host,
		 port, strerror(errno));
	if (fd >= 0)
		close(fd);
	freeaddrinfo(ai);
	return rc;
}

/* Best effort: a client turned away learns why before the close. */
static void wire_srv_refuse(int fd, enum wire_conn_kind kind, int open)
{
	char body[96], msg[256];
	int n;

	if (kind == WIRE_CONN_CTL) {
		n = snprintf(msg, sizeof(msg), "{\"ok\":false,\"error\":\"too many "
			     "control connections (%d open): close one and "
			     "retry\"}\n", open);
	} else {
		snprintf(body, sizeof(body), "too many metrics connections "
			 "(%d open)\n", open);
		n = snprintf(msg, sizeof(msg), "HTTP/1.0 503 Service Unavailable"
			     "\r\nContent-Type: text/plain\r\nContent-Length: "
			     "%zu\r\nConnection: close\r\n\r\n%s",
			     strlen(body), body);
	}
	/* A client already gone has nobody left to tell. */
	(void)send(fd, msg, (size_t)n, MSG_NOSIGNAL | MSG_DONTWAIT);
	close(fd);
}

static void wire_srv_close(struct wire_server *srv, int i)
{
	struct wire_conn *c = srv->conns[i];

	srv->nconns[c->kind]--;
	close(c->fd);
	wire_buf_fini(&c->out);
	free(c);
	srv->conns[i] = NULL;
}

/*
 * Makes room for a new control client when every slot is taken: closes the
 * control connection idle longest, telling it why, if it has been idle for
 * WIRE_SRV_CTL_IDLE_MS with no answer waiting to be sent.
 */
static void wire_srv_ctl_evict(struct wire_server *srv)
{
	static const char msg[] = "{\"ok\":false,\"error\":\"closed after "
		"2 s idle: all control connections were taken and a new "
		"client needed one; reconnect\"}\n";
	int64_t oldest = wire_srv_now_ms() - WIRE_SRV_CTL_IDLE_MS;
	int i, found = -1;

	for (i = 0; i < WIRE_SRV_CLIENTS; i++) {
		struct wire_conn *c = srv->conns[i];

		if (c && c->kind == WIRE_CONN_CTL && !c->out.len &&
		    c->active_ms <= oldest) {
			oldest = c->active_ms;
			found = i;
		}
	}
	if (found < 0)
		return;
	(void)send(srv->conns[found]->fd, msg, sizeof(msg) - 1,
		   MSG_NOSIGNAL | MSG_DONTWAIT);
	wire_srv_close(srv, found);
}

/* Accepts every pending connection on lfd. */
static void wire_srv_accept(struct wire_server *srv, int lfd,
			    enum wire_conn_kind kind)
{
	int limit = kind == WIRE_CONN_CTL ? WIRE_SRV_CTL_CLIENTS :
		    WIRE_SRV_HTTP_CLIENTS;
	struct wire_conn *c;
	int fd, i;

	while ((fd = accept4(lfd, NULL, NULL,
			     SOCK_NONBLOCK | SOCK_CLOEXEC)) >= 0) {
		if (srv->nconns[kind] >= limit && kind == WIRE_CONN_CTL)
			wire_srv_ctl_evict(srv);
		if (srv->nconns[kind] >= limit) {
			wire_srv_refuse(fd, kind, srv->nconns[kind]);
			continue;
		}
		c = calloc(1, sizeof(*c));
		if (!c) {
			close(fd);
			continue;
		}
		for (i = 0; srv->conns[i]; i++)
			;
		c->fd = fd;
		c->kind = kind;
		c->active_ms = wire_srv_now_ms();
		wire_buf_init(&c->out);
		srv->conns[i] = c;
		srv->nconns[kind]++;
	}
}

/*
 * Closes HTTP connections idle for WIRE_SRV_HTTP_IDLE_MS; returns the poll
 * timeout until the next one would be (-1: none open).
 */
static int wire_srv_reap_idle(struct wire_server *srv)
{
	int64_t now = wire_srv_now_ms(), next = -1, left;
	int i;

	for (i = 0; i < WIRE_SRV_CLIENTS; i++) {
		struct wire_conn *c = srv->conns[i];

		if (!c || c->kind != WIRE_CONN_HTTP)
			continue;
		left = c->active_ms + WIRE_SRV_HTTP_IDLE_MS - now;
		if (left <= 0)
			wire_srv_close(srv, i);
		else if (next < 0 || left < next)
			next = left;
	}
	return (int)next;
}

static void wire_srv_ctl_lines(struct wire_server *srv, struct wire_conn *c)
{
	char *nl, *line = c->in;
	size_t len, rest;

	while ((nl = memchr(line, '\n', c->inlen - (size_t)(line - c->in)))) {
		len = (size_t)(nl - line);
		if (len && line[len - 1] == '\r')
			len--;
		if (c->discarding) {
			c->discarding = 0;
		} else if (len) {
			wire_ctl_handle(srv->st, line, len, &srv->reply);
			wire_buf_printf(&c->out, "%s\n", wire_buf_str(&srv->reply));
		}
		line = nl + 1;
	}
	rest = c->inlen - (size_t)(line - c->in);
	memmove(c->in, line, rest);
	c->inlen = rest;
	if (c->inlen == sizeof(c->in)) {
		if (!c->discarding)
			wire_buf_printf(&c->out, "{\"ok\":false,\"error\":\"request"
					" line longer than %zu bytes\"}\n",
					sizeof(c->in) - 1);
		c->discarding = 1;
		c->inlen = 0;
	}
}

static void wire_srv_http(struct wire_server *srv, struct wire_conn *c)
{
	const char *status = "200 OK", *ctype =
		"text/plain; version=0.0.4; charset=utf-8";

	if (!memmem(c->in, c->inlen, "\r\n\r\n", 4) &&
	    !memmem(c->in, c->inlen, "\n\n", 2) && c->inlen < sizeof(c->in))
		return;
	wire_buf_reset(&srv->reply);
	if (c->inlen < 4 || memcmp(c->in, "GET ", 4)) {
		status = "405 Method Not Allowed";
		ctype = "text/plain";
		wire_buf_printf(&srv->reply, "only GET /metrics is served\n");
	} else if (c->inlen < 13 || memcmp(c->in + 4, "/metrics", 8) ||
		   (c->in[12] != ' ' && c->in[12] != '?')) {
		status = "404 Not Found";
		ctype = "text/plain";
		wire_buf_printf(&srv->reply, "not found: try /metrics\n");
	} else {
		wire_ctl_metrics(srv->st, &srv->reply);
	}
	wire_buf_printf(&c->out, "HTTP/1.0 %s\r\nContent-Type: %s\r\n"
			"Content-Length: %zu\r\nConnection: close\r\n\r\n%s",
			status, ctype, srv->reply.len, wire_buf_str(&srv->reply));
	c->closing = 1;
	c->inlen = 0;
}

/* Returns nonzero when the connection is finished. */
static int wire_srv_io(struct wire_server *srv, struct wire_conn *c,
		       short revents)
{
	ssize_t n;

	if (revents & POLLIN) {
		n = read(c->fd, c->in + c->inlen, sizeof(c->in) - c->inlen);
		if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
			return 1;
		if (n > 0) {
			c->active_ms = wire_srv_now_ms();
			c->inlen += (size_t)n;
			if (c->kind == WIRE_CONN_CTL)
				wire_srv_ctl_lines(srv, c);
			else if (!c->closing)
				wire_srv_http(srv, c);
		}
	} else if (revents & (POLLERR | POLLHUP)) {
		return 1;
	}
	while (c->outoff < c->out.len) {
		/* a client gone before its answer must not SIGPIPE us */
		n = send(c->fd, c->out.data + c->outoff,
			 c->out.len - c->outoff, MSG_NOSIGNAL);
		if (n < 0)
			return errno != EAGAIN && errno != EINTR;
		c->active_ms = wire_srv_now_ms();
		c->outoff += (size_t)n;
	}
	wire_buf_reset(&c->out);
	c->outoff = 0;
	return c->closing;
}

static void *wire_srv_main(void *arg)
{
	struct wire_server *srv = arg;
	struct pollfd pfd[3 + WIRE_SRV_CLIENTS];
	int idx[3 + WIRE_SRV_CLIENTS];
	int n, i, k, wait_ms;

	for (;;) {
		wait_ms = wire_srv_reap_idle(srv);
		n = 0;
		pfd[n++] = (struct pollfd){ .fd = srv->wake[0],
					    .events = POLLIN };
		pfd[n++] = (struct pollfd){ .fd = srv->ctl_fd, .events = POLLIN };
		pfd[n++] = (struct pollfd){ .fd = srv->http_fd,
					    .events = POLLIN };
		for (i = 0; i < WIRE_SRV_CLIENTS; i++) {
			struct wire_conn *c = srv->conns[i];

			if (!c)
				continue;
			idx[n] = i;
			pfd[n++] = (struct pollfd){
				.fd = c->fd,
				.events = (short)(POLLIN |
					  (c->out.len ? POLLOUT : 0)) };
		}
		if (poll(pfd, (nfds_t)n, wait_ms) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (pfd[0].revents)
			break;
		for (k = 3; k < n; k++)
			if (pfd[k].revents &&
			    wire_srv_io(srv, srv->conns[idx[k]], pfd[k].revents))
				wire_srv_close(srv, idx[k]);
		/* after the clients' I/O: an eviction frees a slot idx[] names */
		if (pfd[1].revents & POLLIN)
			wire_srv_accept(srv, srv->ctl_fd, WIRE_CONN_CTL);
		if (pfd[2].revents & POLLIN)
			wire_srv_accept(srv, srv->http_fd, WIRE_CONN_HTTP);
	}
	return NULL;
}

int wire_server_start(struct wire_server **out, struct wire_state *st,
		      const char *control_path, const char *metrics_host,
		      uint16_t metrics_port, uint16_t *metrics_port_out,
		      char *err, size_t errlen)
{
	struct wire_server *srv;
	int rc;

	srv = calloc(1, sizeof(*srv));
	if (!srv) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	srv->st = st;
	srv->ctl_fd = -1;
	srv->http_fd = -1;
	srv->wake[0] = srv->wake[1] = -1;
	wire_buf_init(&srv->reply);
	if (pipe2(srv->wake, O_CLOEXEC)) {
		rc = -errno;
		snprintf(err, errlen, "pipe: %s", strerror(errno));
		goto err;
	}
	if (control_path) {
		rc = wire_srv_ctl_bind(srv, control_path, err, errlen);
		if (rc)
			goto err;
	}
	if (metrics_host && *metrics_host) {
		rc = wire_srv_http_bind(srv, metrics_host, metrics_port,
					metrics_port_out, err, errlen);
		if (rc)
			goto err;
	}
	rc = -pthread_create(&srv->thread, NULL, wire_srv_main, srv);
	if (rc) {
		snprintf(err, errlen, "cannot start the control thread: %s",
			 strerror(-rc));
		goto err;
	}
	srv->running = 1;
	*out = srv;
	return 0;
err:
	wire_server_stop(srv);
	return rc;
}

void wire_server_stop(struct wire_server *srv)
{
	int i;

	if (!srv)
		return;
	if (srv->running) {
		if (write(srv->wake[1], "x", 1) < 0)
			perror("loggp-wire: waking the control thread");
		pthread_join(srv->thread, NULL);
	}
	for (i = 0; i < WIRE_SRV_CLIENTS; i++)
		if (srv->conns[i])
			wire_srv_close(srv, i);
	if (srv->ctl_fd >= 0) {
		close(srv->ctl_fd);
		unlink(srv->ctl_path);
	}
	if (srv->http_fd >= 0)
		close(srv->http_fd);
	for (i = 0; i < 2; i++)
		if (srv->wake[i] >= 0)
			close(srv->wake[i]);
	wire_buf_fini(&srv->reply);
	free(srv);
}
