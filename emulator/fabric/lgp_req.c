/* SPDX-License-Identifier: MIT */
/*
 * Pool of send-type requests (lgp_req.h): one slab mapped on first use,
 * each slot a request and the copies of its vectors (struct lgp_req_slot).
 */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "lgp_ep.h"
#include "lgp_req.h"

/* Bounds the shim's outstanding operations across the whole process. */
#define LGP_REQ_POOL	(1u << 16)
/* Payloads from this size are kept for reuse, at most LGP_PAYLOAD_KEEP
 * of them and LGP_PAYLOAD_KEEP_BYTES in all (what an idle process holds). */
#define LGP_PAYLOAD_BIG		(64u << 10)
#define LGP_PAYLOAD_KEEP	8
#define LGP_PAYLOAD_KEEP_BYTES	(64u << 20)

static pthread_mutex_t lgp_req_lock = PTHREAD_MUTEX_INITIALIZER;
static struct lgp_req_slot *lgp_req_slab;
static struct lgp_req *lgp_req_free_list;
static size_t lgp_req_next;	/* slab entries handed out at least once */
static struct {
	void *buf;
	size_t cap;
} lgp_payload_kept[LGP_PAYLOAD_KEEP];	/* under lgp_req_lock */
static size_t lgp_payload_kept_bytes;

void *lgp_payload_alloc(size_t len, size_t *cap)
{
	void *buf = NULL;
	size_t i, best = LGP_PAYLOAD_KEEP;

	if (len < LGP_PAYLOAD_BIG) {
		*cap = len ? len : 1;
		return malloc(*cap);
	}
	pthread_mutex_lock(&lgp_req_lock);
	for (i = 0; i < LGP_PAYLOAD_KEEP; i++) {
		if (lgp_payload_kept[i].buf && lgp_payload_kept[i].cap >= len &&
		    (best == LGP_PAYLOAD_KEEP ||
		     lgp_payload_kept[i].cap < lgp_payload_kept[best].cap))
			best = i;
	}
	if (best < LGP_PAYLOAD_KEEP) {
		buf = lgp_payload_kept[best].buf;
		*cap = lgp_payload_kept[best].cap;
		lgp_payload_kept_bytes -= *cap;
		lgp_payload_kept[best].buf = NULL;
	}
	pthread_mutex_unlock(&lgp_req_lock);
	if (!buf) {
		*cap = len;
		buf = malloc(len);
	}
	return buf;
}

static void lgp_payload_free(void *buf, size_t cap)
{
	size_t i;

	if (buf && cap >= LGP_PAYLOAD_BIG) {
		pthread_mutex_lock(&lgp_req_lock);
		for (i = 0; i < LGP_PAYLOAD_KEEP; i++) {
			if (!lgp_payload_kept[i].buf &&
			    lgp_payload_kept_bytes + cap <= LGP_PAYLOAD_KEEP_BYTES) {
				lgp_payload_kept[i].buf = buf;
				lgp_payload_kept[i].cap = cap;
				lgp_payload_kept_bytes += cap;
				buf = NULL;
				break;
			}
		}
		pthread_mutex_unlock(&lgp_req_lock);
	}
	free(buf);
}

void lgp_payload_release_kept(void)
{
	size_t i;

	pthread_mutex_lock(&lgp_req_lock);
	for (i = 0; i < LGP_PAYLOAD_KEEP; i++) {
		free(lgp_payload_kept[i].buf);
		lgp_payload_kept[i].buf = NULL;
	}
	lgp_payload_kept_bytes = 0;
	pthread_mutex_unlock(&lgp_req_lock);
}

struct lgp_req *lgp_req_alloc(void)
{
	struct lgp_req *req = NULL;

	pthread_mutex_lock(&lgp_req_lock);
	if (!lgp_req_slab) {
		/* Untouched pages cost nothing until the queue grows. */
		void *p = mmap(NULL, LGP_REQ_POOL * sizeof(struct lgp_req_slot),
			       PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

		if (p != MAP_FAILED)
			lgp_req_slab = p;
	}
	if (lgp_req_free_list) {
		req = lgp_req_free_list;
		lgp_req_free_list = req->next_free;
	} else if (lgp_req_slab && lgp_req_next < LGP_REQ_POOL) {
		req = &lgp_req_slab[lgp_req_next++].req;
	}
	pthread_mutex_unlock(&lgp_req_lock);
	if (req) {
		memset(req, 0, sizeof(*req));
		req->refs = 1;
	}
	return req;
}

void lgp_req_put(struct lgp_req *req)
{
	if (--req->refs > 0)
		return;
	lgp_payload_free(req->payload, req->payload_cap);
	pthread_mutex_lock(&lgp_req_lock);
	req->next_free = lgp_req_free_list;
	lgp_req_free_list = req;
	pthread_mutex_unlock(&lgp_req_lock);
}

struct lgp_req *lgp_req_from_context(void *op_context)
{
	char *p = op_context, *base = (char *) lgp_req_slab;

	if (!base || p < base ||
	    p >= base + LGP_REQ_POOL * sizeof(struct lgp_req_slot))
		return NULL;
	return &lgp_req_slab[(size_t) (p - base) / sizeof(struct lgp_req_slot)].req;
}

void lgp_req_forget_ep(struct lgp_ep *ep)
{
	size_t i;

	pthread_mutex_lock(&lgp_req_lock);
	for (i = 0; i < lgp_req_next; i++) {
		if (lgp_req_slab[i].req.ep == ep)
			lgp_req_slab[i].req.ep = NULL;
	}
	pthread_mutex_unlock(&lgp_req_lock);
}
