/* SPDX-License-Identifier: MIT */
/* Reasons, time, bounded waits and data patterns shared by the cases. */
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "conform.h"

/* The runner reads these after a case returns (cf_main.c). */
char cf_reason[512];

static int cf_vrecord(int result, const char *fmt, va_list ap)
{
	if (!cf_reason[0])
		vsnprintf(cf_reason, sizeof(cf_reason), fmt, ap);
	return result;
}

int cf_why(const char *fmt, ...)
{
	va_list ap;
	int ret;

	va_start(ap, fmt);
	ret = cf_vrecord(CF_FAIL, fmt, ap);
	va_end(ap);
	return ret;
}

int cf_skip(const char *fmt, ...)
{
	va_list ap;
	int ret;

	va_start(ap, fmt);
	ret = cf_vrecord(CF_SKIP, fmt, ap);
	va_end(ap);
	return ret;
}

uint64_t cf_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t) ts.tv_sec * 1000000000ULL + (uint64_t) ts.tv_nsec;
}

void cf_progress(struct cf_pair *p)
{
	if (p->a.cq)
		fi_cq_read(p->a.cq, NULL, 0);
	if (p->b.cq)
		fi_cq_read(p->b.cq, NULL, 0);
	if (p->c.cq)
		fi_cq_read(p->c.cq, NULL, 0);
}

/*
 * One entry or error from cq within CF_WAIT_NS; *err set for an error.
 * Read as the largest format, so any CQ's entry fits.
 */
static int cf_cq_next(struct cf_pair *p, struct fid_cq *cq,
		      struct fi_cq_tagged_entry *entry, int *err,
		      const char *what)
{
	uint64_t deadline = cf_now_ns() + CF_WAIT_NS;
	struct fi_cq_err_entry e;
	ssize_t n;

	*err = 0;
	for (;;) {
		n = fi_cq_read(cq, entry, 1);
		if (n == 1)
			return 0;
		if (n == -FI_EAVAIL) {
			memset(&e, 0, sizeof(e));
			n = fi_cq_readerr(cq, &e, 0);
			CF_CHECK(n == 1, "%s: fi_cq_readerr returned %zd", what, n);
			*err = e.err;
			entry->op_context = e.op_context;
			entry->flags = e.flags;
			entry->len = e.len;
			entry->buf = e.buf;
			entry->data = e.data;
			entry->tag = e.tag;
			return 0;
		}
		CF_CHECK(n == -FI_EAGAIN, "%s: fi_cq_read: %s", what,
			 fi_strerror((int) -n));
		CF_CHECK(cf_now_ns() < deadline, "%s: no completion within %llu s",
			 what, CF_WAIT_NS / 1000000000ULL);
		cf_progress(p);
		sched_yield();
	}
}

int cf_cq_wait_tagged(struct cf_pair *p, struct fid_cq *cq,
		      struct fi_cq_tagged_entry *entry, const char *what)
{
	struct fi_cq_tagged_entry local;
	int err, ret;

	ret = cf_cq_next(p, cq, entry ? entry : &local, &err, what);
	if (ret)
		return ret;
	CF_CHECK(!err, "%s: error completion: %s", what, fi_strerror(err));
	return 0;
}

int cf_cq_wait(struct cf_pair *p, struct fid_cq *cq,
	       struct fi_cq_data_entry *entry, const char *what)
{
	struct fi_cq_tagged_entry t;
	int ret = cf_cq_wait_tagged(p, cq, &t, what);

	if (ret)
		return ret;
	if (entry)
		memcpy(entry, &t, sizeof(*entry));
	return 0;
}

int cf_cq_wait_err(struct cf_pair *p, struct fid_cq *cq, int *err,
		   void **ctx, const char *what)
{
	struct fi_cq_tagged_entry t;
	int ret = cf_cq_next(p, cq, &t, err, what);

	if (ret)
		return ret;
	CF_CHECK(*err, "%s: a success, expected an error completion", what);
	if (ctx)
		*ctx = t.op_context;
	return 0;
}

int cf_cntr_wait(struct cf_pair *p, struct fid_cntr *cntr, uint64_t value,
		 const char *what)
{
	uint64_t deadline = cf_now_ns() + CF_WAIT_NS;

	while (fi_cntr_read(cntr) < value) {
		CF_CHECK(!fi_cntr_readerr(cntr), "%s: counter error count %llu",
			 what, (unsigned long long) fi_cntr_readerr(cntr));
		CF_CHECK(cf_now_ns() < deadline, "%s: counter at %llu, not %llu "
			 "within %llu s", what,
			 (unsigned long long) fi_cntr_read(cntr),
			 (unsigned long long) value, CF_WAIT_NS / 1000000000ULL);
		cf_progress(p);
		sched_yield();
	}
	return 0;
}

int cf_burst_send(struct cf_pair *p, struct cf_side *to, int n, size_t len,
		  unsigned seed)
{
	int i, ret;

	CF_CHECK((size_t) n * len <= CF_BUF_LEN, "a burst of %d x %zu bytes", n,
		 len);
	for (i = 0; i < n; i++)
		CF_OK(fi_recv(to->ep, to->buf + (size_t) i * len, len,
			      to->desc, to->peer, to));
	for (i = 0; i < n; i++) {
		cf_fill(p->a.buf + (size_t) i * len, len, seed + (unsigned) i);
		CF_POST(p, fi_send(p->a.ep, p->a.buf + (size_t) i * len, len,
				   p->a.desc, p->a.peer, &p->a));
	}
	for (i = 0; i < n; i++)
		if ((ret = cf_cq_wait(p, p->a.cq, NULL, "send completion")))
			return ret;
	return 0;
}

int cf_burst_recv(struct cf_pair *p, struct cf_side *to, int n, size_t len,
		  unsigned seed)
{
	int i, ret;

	for (i = 0; i < n; i++)
		if ((ret = cf_cq_wait(p, to->cq, NULL, "receive of the burst")))
			return ret;
	for (i = 0; i < n; i++)
		CF_CHECK(cf_check(to->buf + (size_t) i * len, len,
				  seed + (unsigned) i),
			 "message %d of the burst differs", i);
	return 0;
}

void cf_fill(void *buf, size_t len, unsigned seed)
{
	unsigned char *b = buf;
	size_t i;

	for (i = 0; i < len; i++)
		b[i] = (unsigned char) (seed * 131u + i * 7u + (i >> 8));
}

bool cf_check(const void *buf, size_t len, unsigned seed)
{
	const unsigned char *b = buf;
	size_t i;

	for (i = 0; i < len; i++)
		if (b[i] != (unsigned char) (seed * 131u + i * 7u + (i >> 8)))
			return false;
	return true;
}
