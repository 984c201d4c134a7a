/*
 * loggp-prefetch-manager: the advice manager (pf_manager.h, README.md,
 * "Advice manager").  Processes connect over a Unix socket and hand it the
 * descriptors of their hinted files; it keeps one advisor (a thread) per
 * file on the page-cache back-end, so the advice is given outside the
 * application's threads.
 *
 *   loggp-prefetch-manager --socket PATH
 *
 * Prints "loggp-prefetch-manager: ready socket=PATH" when it accepts, and on
 * SIGINT or SIGTERM its counters as one JSON line on stderr.
 */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "pf_advisor.h"
#include "pf_manager.h"

static struct pf_counters counters;

struct file {
	uint64_t id;
	struct pf_advisor *adv;
	struct file *next;
};

/* The descriptor an OPEN carried, or -1. */
static int passed_fd(struct msghdr *mh)
{
	int fd = -1;
	for (struct cmsghdr *c = CMSG_FIRSTHDR(mh); c; c = CMSG_NXTHDR(mh, c))
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS &&
		    c->cmsg_len == CMSG_LEN(sizeof(int)))
			memcpy(&fd, CMSG_DATA(c), sizeof(int));
	return fd;
}

static struct file **find(struct file **head, uint64_t id)
{
	while (*head && (*head)->id != id)
		head = &(*head)->next;
	return head;
}

static void open_file(int sock, struct file **files, struct pf_msg *m, int fd)
{
	struct pf_reply rep = {0};
	struct pf_entry e = {0};
	struct file *f = NULL;
	m->path[sizeof(m->path) - 1] = '\0';
	if (fd < 0 || m->nhints > PF_MAX_HINTS || !m->block_size || !m->cache_size ||
	    m->readahead >= m->cache_size) {
		rep.status = -EPROTO;
		snprintf(rep.msg, sizeof(rep.msg), "advice manager: malformed OPEN for %.400s",
			 m->path);
	} else if (!(f = calloc(1, sizeof(*f)))) {
		rep.status = -ENOMEM;
		snprintf(rep.msg, sizeof(rep.msg), "advice manager: out of memory");
	} else {
		e.block_size = m->block_size;
		e.cache_size = m->cache_size;
		e.readahead = m->readahead;
		e.adaptive = m->adaptive != 0;
		e.nhints = m->nhints;
		e.hints = m->hints;
		f->adv = pf_advisor_open(&e, &pf_pagecache_ops, fd, m->path, 1, &counters, rep.msg,
					 sizeof(rep.msg));
		if (!f->adv) {
			rep.status = -EIO;
			atomic_fetch_add(&counters.errors, 1);
			free(f);
		} else {
			f->id = m->id;
			f->next = *files;
			*files = f;
		}
	}
	if (fd >= 0)
		close(fd);	/* the advisor holds its own duplicate */
	if (send(sock, &rep, sizeof(rep), MSG_NOSIGNAL) < 0)
		return;
}

static void *serve(void *arg)
{
	int sock = (int)(intptr_t)arg;
	struct file *files = NULL;
	struct pf_msg *m = malloc(sizeof(*m));
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} ctl;
	while (m) {
		struct iovec iov = {m, sizeof(*m)};
		struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.buf,
				    .msg_controllen = sizeof(ctl.buf)};
		ssize_t n = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC);
		if (n <= 0)
			break;
		int fd = passed_fd(&mh);
		if ((size_t)n < offsetof(struct pf_msg, path)) {
			if (fd >= 0)
				close(fd);
			continue;
		}
		struct file **f = find(&files, m->id);
		if (m->op == PF_OP_OPEN) {
			open_file(sock, &files, m, fd);
			continue;
		}
		if (fd >= 0)
			close(fd);
		if (!*f)
			continue;
		if (m->op == PF_OP_READ) {
			pf_advisor_request((*f)->adv, m->off, m->len);
		} else if (m->op == PF_OP_DETACH) {
			pf_advisor_detach((*f)->adv);
		} else if (m->op == PF_OP_SEQUENTIAL) {
			pf_advisor_sequential((*f)->adv);
		} else if (m->op == PF_OP_CLOSE) {
			struct file *gone = *f;
			*f = gone->next;
			pf_advisor_close(gone->adv);
			free(gone);
		}
	}
	while (files) {
		struct file *gone = files;
		files = gone->next;
		pf_advisor_close(gone->adv);
		free(gone);
	}
	free(m);
	close(sock);
	return NULL;
}

/* Accepts clients until the process ends; each gets a thread. */
static void *accept_loop(void *arg)
{
	int ls = (int)(intptr_t)arg;
	for (;;) {
		pthread_t t;
		int s = accept4(ls, NULL, NULL, SOCK_CLOEXEC);
		if (s < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			return NULL;
		}
		if (pthread_create(&t, NULL, serve, (void *)(intptr_t)s) != 0)
			close(s);
		else
			pthread_detach(t);
	}
}

static void usage(void)
{
	fputs("usage: loggp-prefetch-manager --socket PATH\n", stderr);
	exit(2);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {{"socket", required_argument, NULL, 's'},
					     {"help", no_argument, NULL, 'h'},
					     {NULL, 0, NULL, 0}};
	const char *path = NULL;
	int c;
	while ((c = getopt_long(argc, argv, "s:h", opts, NULL)) != -1) {
		if (c == 's')
			path = optarg;
		else
			usage();
	}
	if (!path || optind != argc)
		usage();
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	if (strlen(path) >= sizeof(sa.sun_path)) {
		fprintf(stderr, "loggp-prefetch-manager: --socket %s: longer than %zu bytes\n",
			path, sizeof(sa.sun_path) - 1);
		return 2;
	}
	strcpy(sa.sun_path, path);
	sigset_t stop;
	sigemptyset(&stop);
	sigaddset(&stop, SIGINT);
	sigaddset(&stop, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &stop, NULL);
	signal(SIGPIPE, SIG_IGN);
	int ls = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	unlink(path);
	if (ls < 0 || bind(ls, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(ls, 64) < 0) {
		fprintf(stderr, "loggp-prefetch-manager: --socket %s: %s\n", path,
			strerror(errno));
		return 1;
	}
	printf("loggp-prefetch-manager: ready socket=%s\n", path);
	fflush(stdout);
	pthread_t acceptor;
	if (pthread_create(&acceptor, NULL, accept_loop, (void *)(intptr_t)ls) != 0) {
		fputs("loggp-prefetch-manager: cannot start a thread\n", stderr);
		return 1;
	}
	int sig;
	sigwait(&stop, &sig);
	unlink(path);
	char buf[512];
	pf_counters_json(&counters, buf, sizeof(buf));
	fprintf(stderr, "{%s}\n", buf);
	return 0;
}
