/* mclient.c: the interposer's side of the advice manager (pf_manager.h). */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "pf_manager.h"
#include "pf_real.h"

struct pf_mclient {
	int sock;
	pthread_mutex_t open_lock;	/* one OPEN and its reply at a time */
	atomic_ulong next_id;
};

int pf_mclient_connect(const char *path, struct pf_mclient **out, char *err, size_t errlen)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	if (strlen(path) >= sizeof(sa.sun_path)) {
		snprintf(err, errlen, "manager socket %s: path longer than %zu bytes", path,
			 sizeof(sa.sun_path) - 1);
		return -ENAMETOOLONG;
	}
	strcpy(sa.sun_path, path);
	int s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (s < 0 || connect(s, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
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
	pthread_mutex_lock(&m->open_lock);
	ssize_t n = sendmsg(m->sock, &mh, MSG_NOSIGNAL);
	if (n >= 0)
		n = recv(m->sock, &rep, sizeof(rep), 0);
	int e2 = errno;
	pthread_mutex_unlock(&m->open_lock);
	if (n <= 0) {
		snprintf(err, errlen, "%s: the advice manager is gone: %s", path,
			 n == 0 ? "connection closed" : strerror(e2));
		return n == 0 ? -ECONNRESET : -e2;
	}
	if (rep.status < 0) {
		rep.msg[sizeof(rep.msg) - 1] = '\0';
		snprintf(err, errlen, "%s", rep.msg);
		return rep.status;
	}
	*id = msg.id;
	return 0;
}

static void post(struct pf_mclient *m, uint32_t op, uint64_t id, uint64_t off, uint64_t len,
		 int flags)
{
	struct pf_msg msg;
	msg.op = op;
	msg.id = id;
	msg.off = off;
	msg.len = len;
	msg.path[0] = '\0';
	ssize_t n = send(m->sock, &msg, msg_size(&msg), MSG_NOSIGNAL | flags);
	(void)n;	/* advice: a full or broken socket only loses it */
}

void pf_mclient_request(struct pf_mclient *m, uint64_t id, uint64_t off, uint64_t len)
{
	post(m, PF_OP_READ, id, off, len, MSG_DONTWAIT);
}

void pf_mclient_detach(struct pf_mclient *m, uint64_t id)
{
	post(m, PF_OP_DETACH, id, 0, 0, 0);
}

void pf_mclient_close(struct pf_mclient *m, uint64_t id)
{
	post(m, PF_OP_CLOSE, id, 0, 0, 0);
}
