/* SPDX-License-Identifier: MIT */
/*
 * fi_sendtime: how long one fi_send call takes (the LogGP send overhead),
 * and the fi_cq_read call that hands over the receive (the receive overhead).
 *
 *   fi_sendtime -p PROVIDER [-n ITERS] [-S SIZE] [-t TIMEOUT_S]
 *
 * One process, one RDM endpoint that sends to its own address, so no second
 * process or launcher is needed.  Each iteration posts a receive, times the
 * fi_send call alone (a call that returns -FI_EAGAIN is not a sample; the
 * CQ is progressed with fi_cq_read(cq, NULL, 0), the common progress idiom a
 * shim must honour, and the send retried; shm returns -FI_EAGAIN on the very
 * first send to a new peer), then waits for both completions
 * and checks the data, timing the read that returned the receive.  Prints
 * one JSON line with the median, p10 and p90 of both call times; exit 0
 * only if all data arrived intact.  The CQ is in the context format, which
 * carries no flags: a shim must still tell receives apart.
 */
#include <getopt.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>

struct st {
	struct fi_info *info;
	struct fid_fabric *fabric;
	struct fid_domain *domain;
	struct fid_av *av;
	struct fid_cq *cq;
	struct fid_ep *ep;
	fi_addr_t self;
	struct fi_context2 tx_ctx, rx_ctx;
};

static double st_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int st_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static int st_err(const char *what, int ret)
{
	fprintf(stderr, "fi_sendtime: %s: %s (%d)\n", what, fi_strerror(-ret), ret);
	return ret;
}

static int st_open(struct st *s, const char *prov)
{
	struct fi_cq_attr cq_attr = { .format = FI_CQ_FORMAT_CONTEXT };
	struct fi_av_attr av_attr = { .type = FI_AV_MAP };
	struct fi_info *hints = fi_allocinfo();
	char name[256];
	size_t len = sizeof(name);
	int ret;

	if (!hints)
		return -FI_ENOMEM;
	hints->caps = FI_MSG;
	hints->mode = FI_CONTEXT | FI_CONTEXT2;
	hints->ep_attr->type = FI_EP_RDM;
	hints->domain_attr->mr_mode = FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY;
	hints->fabric_attr->prov_name = strdup(prov);
	ret = fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, hints, &s->info);
	fi_freeinfo(hints);
	if (ret)
		return st_err("fi_getinfo", ret);
	ret = fi_fabric(s->info->fabric_attr, &s->fabric, NULL);
	if (ret)
		return st_err("fi_fabric", ret);
	ret = fi_domain(s->fabric, s->info, &s->domain, NULL);
	if (ret)
		return st_err("fi_domain", ret);
	ret = fi_cq_open(s->domain, &cq_attr, &s->cq, NULL);
	if (!ret)
		ret = fi_av_open(s->domain, &av_attr, &s->av, NULL);
	if (!ret)
		ret = fi_endpoint(s->domain, s->info, &s->ep, NULL);
	if (!ret)
		ret = fi_ep_bind(s->ep, &s->cq->fid, FI_TRANSMIT | FI_RECV);
	if (!ret)
		ret = fi_ep_bind(s->ep, &s->av->fid, 0);
	if (!ret)
		ret = fi_enable(s->ep);
	if (!ret)
		ret = fi_getname(&s->ep->fid, name, &len);
	if (ret)
		return st_err("endpoint setup", ret);
	ret = fi_av_insert(s->av, name, 1, &s->self, 0, NULL);
	if (ret != 1)
		return st_err("fi_av_insert", ret < 0 ? ret : -FI_EOTHER);
	return 0;
}

/*
 * Waits until both the send and the receive completed; *recv_call is the
 * duration of the fi_cq_read call that returned the receive.
 */
static int st_wait(struct st *s, double timeout, double *recv_call)
{
	struct fi_cq_entry ent;
	bool tx = false, rx = false;
	double t0 = st_now(), c0;
	unsigned idle = 0;
	ssize_t n;

	while (!tx || !rx) {
		c0 = st_now();
		n = fi_cq_read(s->cq, &ent, 1);
		if (n == 1) {
			tx |= ent.op_context == &s->tx_ctx;
			if (ent.op_context == &s->rx_ctx) {
				*recv_call = st_now() - c0;
				rx = true;
			}
			continue;
		}
		if (n != -FI_EAGAIN)
			return st_err("fi_cq_read", (int)n);
		if (++idle % 256 == 0)
			sched_yield();
		if (st_now() - t0 > timeout) {
			fprintf(stderr, "fi_sendtime: no %s completion within %.0f s\n",
				tx ? "receive" : "send", timeout);
			return -FI_ETIMEDOUT;
		}
	}
	return 0;
}

static void st_close(struct st *s)
{
	if (s->ep)
		fi_close(&s->ep->fid);
	if (s->av)
		fi_close(&s->av->fid);
	if (s->cq)
		fi_close(&s->cq->fid);
	if (s->domain)
		fi_close(&s->domain->fid);
	if (s->fabric)
		fi_close(&s->fabric->fid);
	if (s->info)
		fi_freeinfo(s->info);
}

int main(int argc, char **argv)
{
	const char *prov = NULL;
	int iters = 1000, timeout = 30, c, i, ret, bad = 0;
	long eagain = 0;
	size_t size = 8, j;
	struct st s = { 0 };
	char *sbuf = NULL, *rbuf = NULL;
	double *t = NULL, *r = NULL, t0;

	while ((c = getopt(argc, argv, "p:n:S:t:")) != -1) {
		switch (c) {
		case 'p': prov = optarg; break;
		case 'n': iters = atoi(optarg); break;
		case 'S': size = strtoull(optarg, NULL, 0); break;
		case 't': timeout = atoi(optarg); break;
		default: prov = NULL; iters = 0; break;
		}
	}
	if (!prov || iters < 1 || timeout < 1) {
		fprintf(stderr, "usage: fi_sendtime -p PROVIDER [-n ITERS] [-S SIZE] [-t TIMEOUT_S]\n");
		return 2;
	}
	sbuf = malloc(size + 1);
	rbuf = malloc(size + 1);
	t = malloc(sizeof(double) * (size_t)iters);
	r = malloc(sizeof(double) * (size_t)iters);
	ret = (!sbuf || !rbuf || !t || !r) ? -FI_ENOMEM : st_open(&s, prov);
	for (i = 0; !ret && i < iters; i++) {
		for (j = 0; j < size; j++)
			sbuf[j] = (char)(i + j * 3);
		memset(rbuf, 0, size);
		do {
			ret = (int)fi_recv(s.ep, rbuf, size, NULL, FI_ADDR_UNSPEC, &s.rx_ctx);
			if (ret == -FI_EAGAIN)
				(void)fi_cq_read(s.cq, NULL, 0);
		} while (ret == -FI_EAGAIN);
		if (ret) {
			st_err("fi_recv", ret);
			break;
		}
		for (;;) {
			t0 = st_now();
			ret = (int)fi_send(s.ep, sbuf, size, NULL, s.self, &s.tx_ctx);
			t[i] = st_now() - t0;
			if (ret != -FI_EAGAIN)
				break;
			eagain++;
			(void)fi_cq_read(s.cq, NULL, 0);
		}
		if (ret) {
			st_err("fi_send", ret);
			break;
		}
		ret = st_wait(&s, timeout, &r[i]);
		for (j = 0; j < size; j++)
			bad += rbuf[j] != (char)(i + j * 3);
	}
	if (!ret) {
		qsort(t, (size_t)iters, sizeof(double), st_cmp);
		qsort(r, (size_t)iters, sizeof(double), st_cmp);
		printf("{\"test\":\"fi_sendtime\",\"provider\":\"%s\",\"iters\":%d,"
		       "\"size\":%zu,\"send_call_us\":{\"median\":%.3f,\"p10\":%.3f,"
		       "\"p90\":%.3f},\"recv_call_us\":{\"median\":%.3f,\"p10\":%.3f,"
		       "\"p90\":%.3f},\"eagain\":%ld,\"bad_bytes\":%d,\"ok\":%s}\n", prov,
		       iters, size, t[iters / 2] * 1e6, t[iters / 10] * 1e6,
		       t[iters * 9 / 10] * 1e6, r[iters / 2] * 1e6, r[iters / 10] * 1e6,
		       r[iters * 9 / 10] * 1e6, eagain, bad, bad ? "false" : "true");
	}
	st_close(&s);
	free(sbuf);
	free(rbuf);
	free(t);
	free(r);
	return ret || bad ? 1 : 0;
}
