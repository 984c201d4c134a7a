/* mclient.c: the interposer's side of the advice manager (pf_manager.h). */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include "pf_manager.h"
#include "pf_real.h"

struct pf_mclient {
	int sock;
	char path[108];
	pthread_mutex_t open_lock;	/* one OPEN and its reply at a time */
	atomic_ulong next_id;
	atomic_int gone;		/* no more calls: it timed out or went away */
};

/*
 * The manager is no longer asked: the first caller to find it so gets the
 * one-line reason (1), later ones nothing (0).  Shutting the socket down
 * makes a manager that resumes drop this process's advisors, and no late
 * reply can be taken for the answer to a later OPEN.
 */
static int give_up(struct pf_mclient *m, char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static int give_up(struct pf_mclient *m, char *err, size_t errlen, const char *fmt, ...)
{
	if (atomic_exchange(&m->gone, 1))
		return 0;
	shutdown(m->sock, SHUT_RDWR);
	int n = snprintf(err, errlen, "the advice manager at %s ", m->path);
	va_list ap;
	va_start(ap, fmt);
	if (n > 0 && (size_t)n < errlen)
		vsnprintf(err + n, errlen - (size_t)n, fmt, ap);
	va_end(ap);
	return 1;
}

int pf_mclient_connect(const char *path, struct pf_mclient **out, char *err, size_t errlen)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	if (strlen(path) >= sizeof(sa.sun_path)) {
		snprintf(err, errlen, "manager socket %s: path longer than %zu bytes", path,
			 sizeof(sa.sun_path) - 1);
		return -ENAMETOOLONG;
	}
	strcpy(sa.sun_path, path);
	/* Every blocking send and receive ends after the timeout (a stopped
	 * manager must not stop the application). */
	struct timeval tv = {PF_MANAGER_TIMEOUT_MS / 1000, PF_MANAGER_TIMEOUT_MS % 1000 * 1000};
	int s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (s < 0 || setsockopt(s, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)) < 0 ||
	    setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) < 0 ||
	    connect(s, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		int e = errno;
		snprintf(err, errlen, "manager socket %s: cannot connect: %s", path, strerror(e));
		if (s >= 0)
			pf_real_close(s);
		return -e;
	}
	struct pf_mclient *m = calloc(1, sizeof(*m));
	if (!m) {
		pf_real_close(s);
		snprintf(err, errlen, "manager socket %s: out of memory", path);
		return -ENOMEM;
	}
	m->sock = s;
	strcpy(m->path, path);
	pthread_mutex_init(&m->open_lock, NULL);
	atomic_init(&m->next_id, 1);
	*out = m;
	return 0;
}

static size_t msg_size(const struct pf_msg *msg)
{
	return offsetof(struct pf_msg, path) + strlen(msg->path) + 1;
}

int pf_mclient_open(struct pf_mclient *m, const struct pf_entry *e, int fd, const char *path,
		    uint64_t *id, char *err, size_t errlen)
{
	struct pf_msg msg = {.op = PF_OP_OPEN};
	struct pf_reply rep;
	if (e->nhints > PF_MAX_HINTS || strlen(path) >= sizeof(msg.path)) {
		snprintf(err, errlen, "%s: more than %d hint ranges or a path too long for the "
			 "manager", path, PF_MAX_HINTS);
		return -E2BIG;
	}
	msg.id = atomic_fetch_add(&m->next_id, 1);
	msg.nhints = (uint32_t)e->nhints;
	msg.block_size = e->block_size;
	msg.cache_size = e->cache_size;
	msg.readahead = e->readahead;
	msg.adaptive = (uint32_t)e->adaptive;
	memcpy(msg.hints, e->hints, e->nhints * sizeof(*e->hints));
	strcpy(msg.path, path);
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} ctl;
	struct iovec iov = {&msg, msg_size(&msg)};
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.buf,
			    .msg_controllen = sizeof(ctl.buf)};
	struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &fd, sizeof(int));
	if (atomic_load(&m->gone)) {
		snprintf(err, errlen, "%s: the advice manager is no longer asked", path);
		return -ENOTCONN;
	}
	pthread_mutex_lock(&m->open_lock);
	ssize_t n = sendmsg(m->sock, &mh, MSG_NOSIGNAL);
	while (n >= 0 && (n = recv(m->sock, &rep, sizeof(rep), 0)) < 0 && errno == EINTR)
		;
	int e2 = errno;
	pthread_mutex_unlock(&m->open_lock);
	if (n <= 0) {
		int late = n < 0 && (e2 == EAGAIN || e2 == EWOULDBLOCK);
		int first = late ? give_up(m, err, errlen, "did not answer the open of %s within "
					   "%d ms", path, PF_MANAGER_TIMEOUT_MS)
				 : give_up(m, err, errlen, "is gone (%s at the open of %s)",
					   n == 0 ? "connection closed" : strerror(e2), path);
		if (!first)
			snprintf(err, errlen, "%s: the advice manager is no longer asked", path);
		return late ? -ETIMEDOUT : n == 0 ? -ECONNRESET : -e2;
	}
	if (rep.status < 0) {
		rep.msg[sizeof(rep.msg) - 1] = '\0';
		snprintf(err, errlen, "%s", rep.msg);
		return rep.status;
	}
	*id = msg.id;
	return 0;
}

/*
 * Sends one message that is not answered.  A READ is advice: a full socket
 * drops it (1).  The others wait for room, at most the timeout.  A
 * manager that is gone, or that leaves no room within the timeout, is given
 * up: -1 with the one-line reason the first time.
 */
static int post(struct pf_mclient *m, uint32_t op, uint64_t id, uint64_t off, uint64_t len,
		char *err, size_t errlen)
{
	struct pf_msg msg;
	if (atomic_load(&m->gone))
		return 0;
	msg.op = op;
	msg.id = id;
	msg.off = off;
	msg.len = len;
	msg.path[0] = '\0';
	ssize_t n = send(m->sock, &msg, msg_size(&msg), MSG_NOSIGNAL | MSG_DONTWAIT);
	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
		if (op == PF_OP_READ)
			return 1;
		struct pollfd p = {m->sock, POLLOUT, 0};
		if (poll(&p, 1, PF_MANAGER_TIMEOUT_MS) == 1)
			n = send(m->sock, &msg, msg_size(&msg), MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
			return -give_up(m, err, errlen, "took no message within %d ms",
					PF_MANAGER_TIMEOUT_MS);
	}
	if (n < 0)
		return -give_up(m, err, errlen, "is gone (%s)", strerror(errno));
	return 0;
}

int pf_mclient_request(struct pf_mclient *m, uint64_t id, uint64_t off, uint64_t len,
		       char *err, size_t errlen)
{
	return post(m, PF_OP_READ, id, off, len, err, errlen);
}

int pf_mclient_detach(struct pf_mclient *m, uint64_t id, char *err, size_t errlen)
{
	return post(m, PF_OP_DETACH, id, 0, 0, err, errlen);
}

int pf_mclient_sequential(struct pf_mclient *m, uint64_t id, char *err, size_t errlen)
{
	return post(m, PF_OP_SEQUENTIAL, id, 0, 0, err, errlen);
}

int pf_mclient_close(struct pf_mclient *m, uint64_t id, char *err, size_t errlen)
{
	return post(m, PF_OP_CLOSE, id, 0, 0, err, errlen);
}
