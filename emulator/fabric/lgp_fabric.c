/* SPDX-License-Identifier: MIT */
/*
 * Fabric wrapper: the hook's entry point and the per-fabric counters.
 */
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lgp_config.h"
#include "lgp_cq.h"
#include "lgp_domain.h"
#include "lgp_eq.h"
#include "lgp_fabric.h"
#include "lgp_fid.h"
#include "lgp_log.h"
#include "lgp_pep.h"
#include "lgp_poll.h"
#include "lgp_util.h"
#include "lgp_wait.h"

static pthread_mutex_t lgp_fabric_list_lock = PTHREAD_MUTEX_INITIALIZER;
static struct lgp_fabric *lgp_fabric_list;

int lgp_domain_open(struct fid_fabric *fabric, struct fi_info *info,
		    struct fid_domain **domain, void *context);

/*
 * Utility providers are named ofi_* (ofi_rxm, ofi_rxd, ofi_mrail); they move
 * their messages through a core fabric that is hooked on its own.
 */
static bool lgp_prov_is_utility(const struct fi_provider *prov)
{
	return prov && prov->name && !strncmp(prov->name, "ofi_", 4);
}

void lgp_fabric_count_pair(struct lgp_fabric *fab, const struct lgp_topo_dest *d,
			   const struct lgp_eng_msg *msg, const struct lgp_eng_plan *plan)
{
	uint64_t *p = fab->pair, n = lgp_config_get()->topo.ranks;

	if (!d || d->rank < 0) {
		__atomic_fetch_add(&fab->pair_unmatched, 1, __ATOMIC_RELAXED);
	} else if (p) {
		p += d->rank;
		__atomic_fetch_add(&p[LGP_PAIR_MSGS * n], 1, __ATOMIC_RELAXED);
		__atomic_fetch_add(&p[LGP_PAIR_LATENCY * n], msg->pair_latency_ns,
				   __ATOMIC_RELAXED);
		__atomic_fetch_add(&p[LGP_PAIR_BYTES * n], msg->len, __ATOMIC_RELAXED);
		__atomic_fetch_add(&p[LGP_PAIR_PACED * n], plan->paced, __ATOMIC_RELAXED);
	}
}

/* Appends to line at *pos; a line too long for size leaves *pos >= size. */
static void lgp_fabric_put(char *line, size_t size, size_t *pos, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (*pos >= size)
		return;
	va_start(ap, fmt);
	n = vsnprintf(line + *pos, size - *pos, fmt, ap);
	va_end(ap);
	*pos += n < 0 ? size : (size_t)n;
}

/* ,"name":[n0,n1,...] of count numbers. */
static void lgp_fabric_put_list(char *line, size_t size, size_t *pos, const char *name,
				const uint64_t *v, uint32_t count)
{
	uint32_t i;

	lgp_fabric_put(line, size, pos, ",\"%s\":[", name);
	for (i = 0; i < count; i++)
		lgp_fabric_put(line, size, pos, "%s%" PRIu64, i ? "," : "",
			       __atomic_load_n(&v[i], __ATOMIC_RELAXED));
	lgp_fabric_put(line, size, pos, "]");
}

/*
 * The topology's and the schedule's fields replace the closing brace of
 * the core's line of len bytes: "rank", "pair_unmatched", "pair_msgs",
 * "pair_latency_ns", "pair_bytes" and "pair_paced_ns"; "step_origin_ns", "step_msgs" and "step_latency_ns" (README.md,
 * "Counters").  Returns the new length, size or more if the line did not
 * fit.
 */
static size_t lgp_fabric_put_extra(const struct lgp_fabric *fab, char *line, size_t size,
				   size_t len)
{
	const struct lgp_config *cfg = lgp_config_get();
	const struct lgp_topo *t = &cfg->topo;
	uint32_t steps = cfg->sched.steps;
	size_t pos = len - 1;

	if (t->on)
		lgp_fabric_put(line, size, &pos, ",\"rank\":%u,\"pair_unmatched\":%" PRIu64,
			       t->rank,
			       __atomic_load_n(&fab->pair_unmatched, __ATOMIC_RELAXED));
	if (fab->pair) {
		lgp_fabric_put_list(line, size, &pos, "pair_msgs",
				    fab->pair + LGP_PAIR_MSGS * t->ranks, t->ranks);
		lgp_fabric_put_list(line, size, &pos, "pair_latency_ns",
				    fab->pair + LGP_PAIR_LATENCY * t->ranks, t->ranks);
		lgp_fabric_put_list(line, size, &pos, "pair_bytes",
				    fab->pair + LGP_PAIR_BYTES * t->ranks, t->ranks);
		lgp_fabric_put_list(line, size, &pos, "pair_paced_ns",
				    fab->pair + LGP_PAIR_PACED * t->ranks, t->ranks);
	}
	if (fab->steps) {
		lgp_fabric_put(line, size, &pos, ",\"step_origin_ns\":%" PRIu64,
			       cfg->sched_origin_unix_ns);
		lgp_fabric_put_list(line, size, &pos, "step_msgs", fab->steps, steps);
		lgp_fabric_put_list(line, size, &pos, "step_latency_ns",
				    fab->steps + steps, steps);
	}
	lgp_fabric_put(line, size, &pos, "}");
	return pos;
}

void lgp_fabric_stats_write(struct lgp_fabric *fab)
{
	const struct lgp_config *cfg = lgp_config_get();
	/* the counters, a delay histogram, numbers per destination and step */
	size_t size = 4096 + (cfg->topo.on ? LGP_PAIR_COUNT * 21 * (size_t)cfg->topo.ranks + 160 : 0) +
		      (fab->steps ? 2 * 21 * (size_t)cfg->sched.steps + 64 : 0);
	char *line = malloc(size);
	int len, fd;

	if (fab->stats_written || !line) {
		free(line);
		return;
	}
	fab->stats_written = true;
	len = lgp_stats_json(&fab->stats, fab->prov_name, line, 4096 - 1);
	if (len >= 4096 - 1)
		len = -1;
	else if (len > 0 && (cfg->topo.on || fab->steps))
		len = (int)lgp_fabric_put_extra(fab, line, size - 1, (size_t)len);
	if (len < 0 || (size_t) len >= size - 1) {
		free(line);
		return;
	}
	LGP_INFO(FI_LOG_FABRIC, "stats %s\n", line);
	if (!cfg->stats_file[0]) {
		free(line);
		return;
	}
	line[len++] = '\n';
	/* One O_APPEND write per line keeps lines of concurrent ranks whole. */
	fd = lgp_stats_file_open(cfg->stats_file);
	if (fd < 0) {
		LGP_WARN(FI_LOG_FABRIC, "cannot open LOGGP_STATS_FILE %s\n",
			 cfg->stats_file);
		free(line);
		return;
	}
	if (write(fd, line, len) != len)
		LGP_WARN(FI_LOG_FABRIC, "short write to %s\n", cfg->stats_file);
	close(fd);
	free(line);
}

void lgp_fabric_stats_write_all(void)
{
	struct lgp_fabric *fab;

	pthread_mutex_lock(&lgp_fabric_list_lock);
	for (fab = lgp_fabric_list; fab; fab = fab->next)
		lgp_fabric_stats_write(fab);
	pthread_mutex_unlock(&lgp_fabric_list_lock);
}

static int lgp_fabric_close(struct fid *fid)
{
	struct lgp_fabric *fab = lgp_container_of(fid, struct lgp_fabric, fabric.fid);
	struct lgp_fabric **p;
	int ret;

	ret = fi_close(&fab->hfabric->fid);
	if (ret)
		return ret;
	pthread_mutex_lock(&lgp_fabric_list_lock);
	lgp_fabric_stats_write(fab);
	for (p = &lgp_fabric_list; *p; p = &(*p)->next) {
		if (*p == fab) {
			*p = fab->next;
			break;
		}
	}
	pthread_mutex_unlock(&lgp_fabric_list_lock);
	free(fab->pair);
	free(fab->steps);
	free(fab);
	return 0;
}

static int lgp_fabric_domain(struct fid_fabric *fabric, struct fi_info *info,
			     struct fid_domain **domain, void *context)
{
	return lgp_domain_open(fabric, info, domain, context);
}

static int lgp_fabric_domain2(struct fid_fabric *fabric, struct fi_info *info,
			      struct fid_domain **domain, uint64_t flags,
			      void *context)
{
	if (flags)
		return -FI_EBADFLAGS;
	return lgp_domain_open(fabric, info, domain, context);
}

static int lgp_fabric_pep(struct fid_fabric *fabric, struct fi_info *info,
			  struct fid_pep **pep, void *context)
{
	return lgp_pep_open(lgp_container_of(fabric, struct lgp_fabric, fabric),
			    info, pep, context);
}

static int lgp_fabric_eq_open(struct fid_fabric *fabric, struct fi_eq_attr *attr,
			      struct fid_eq **eq, void *context)
{
	return lgp_eq_open(lgp_container_of(fabric, struct lgp_fabric, fabric),
			   attr, eq, context);
}

static int lgp_fabric_wait_open(struct fid_fabric *fabric,
				struct fi_wait_attr *attr,
				struct fid_wait **waitset)
{
	return lgp_wait_open(lgp_container_of(fabric, struct lgp_fabric, fabric),
			     attr, waitset);
}

/* Whether fid has a due completion only the shim knows of. */
static bool lgp_fid_ready(struct fid *fid)
{
	if (fid->ops == &lgp_cq_fi_ops)
		return lgp_cq_ready(lgp_container_of(fid, struct lgp_cq, cq.fid),
				    NULL);
	if (fid->ops == &lgp_wait_fi_ops)
		return lgp_wait_set_ready(lgp_container_of(fid, struct lgp_wait,
							   wait.fid));
	return false;
}

/*
 * A due synthesised completion means "do not wait", as the provider says
 * for its own.  It is checked before the real trywait, which may reset a
 * wait object the shim signalled for it.
 */
static int lgp_fabric_trywait(struct fid_fabric *fabric, struct fid **fids,
			      int count)
{
	struct lgp_fabric *fab = lgp_container_of(fabric, struct lgp_fabric, fabric);
	struct fid *hfids[LGP_SET_MAX];
	int i;

	if (count > LGP_SET_MAX)
		return -FI_EINVAL;
	for (i = 0; i < count; i++) {
		if (lgp_fid_ready(fids[i]))
			return -FI_EAGAIN;
		hfids[i] = lgp_fid_real(fids[i]);
	}
	return fi_trywait(fab->hfabric, hfids, count);
}

struct fi_ops lgp_fabric_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = lgp_fabric_close,
	.bind = lgp_fid_bind,
	.control = lgp_fid_control,
	.ops_open = lgp_fid_ops_open,
	.tostr = lgp_fid_tostr,
	.ops_set = lgp_fid_ops_set,
};

static struct fi_ops_fabric lgp_fabric_ops = {
	.size = sizeof(struct fi_ops_fabric),
	.domain = lgp_fabric_domain,
	.passive_ep = lgp_fabric_pep,
	.eq_open = lgp_fabric_eq_open,
	.wait_open = lgp_fabric_wait_open,
	.trywait = lgp_fabric_trywait,
	.domain2 = lgp_fabric_domain2,
};

int lgp_fabric_hook(struct fi_fabric_attr *attr, struct fid_fabric **fabric,
		    void *context)
{
	const struct fi_provider *hprov = context;
	const struct lgp_config *cfg = lgp_config_get();
	struct lgp_fabric *fab;

	if (lgp_prov_is_utility(hprov)) {
		*fabric = attr->fabric;
		return lgp_util_hook(attr->fabric);
	}
	if (cfg->error) {
		/*
		 * libfabric ignores a hook's error here and keeps the unhooked
		 * fabric, so the refusal happens at fi_domain()/fi_passive_ep()
		 * instead: say so loudly now, whatever FI_LOG_LEVEL is.
		 */
		if (fi_log_enabled(&lgp_prov, FI_LOG_WARN, FI_LOG_FABRIC))
			LGP_WARN(FI_LOG_FABRIC, "%s\n", cfg->errmsg);
		else
			fprintf(stderr, "loggp: %s\n", cfg->errmsg);
	}

	fab = calloc(1, sizeof(*fab));
	if (!fab)
		return -FI_ENOMEM;
	fab->hfabric = attr->fabric;
	fab->prov_name = hprov && hprov->name ? hprov->name : "unknown";
	if (lgp_dist_active(&cfg->dist))
		lgp_stats_delay_init(&fab->stats, lgp_dist_max_ns(&cfg->dist));
	if (cfg->topo.on)	/* without memory: only pair_unmatched is kept */
		fab->pair = calloc(LGP_PAIR_COUNT * (size_t)cfg->topo.ranks, sizeof(*fab->pair));
	if (cfg->sched.steps)	/* without memory: no counts per step */
		fab->steps = calloc(2 * (size_t)cfg->sched.steps, sizeof(*fab->steps));
	fab->fabric.fid.fclass = FI_CLASS_FABRIC;
	fab->fabric.fid.context = attr->fabric->fid.context;
	fab->fabric.fid.ops = &lgp_fabric_fi_ops;
	fab->fabric.ops = &lgp_fabric_ops;
	fab->fabric.api_version = attr->fabric->api_version;

	pthread_mutex_lock(&lgp_fabric_list_lock);
	fab->next = lgp_fabric_list;
	lgp_fabric_list = fab;
	pthread_mutex_unlock(&lgp_fabric_list_lock);

	*fabric = &fab->fabric;
	return 0;
}
