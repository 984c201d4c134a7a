/* SPDX-License-Identifier: MIT */
/* The wire's delay distribution (see wire_dist.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lgp/env.h>

#include "wire_dist.h"

/* The shim's setting names in err become the wire's names for them. */
static void wire_dist_rename(char *err, size_t errlen,
			     enum wire_dist_names names)
{
	static const struct {
		enum lgp_setting setting;
		const char *name[2];
	} map[] = {
		{ LGP_SETTING_LATENCY_DIST, { "--latency-dist", "latency_dist" } },
		{ LGP_SETTING_LATENCY_CORR, { "--latency-corr", "latency_corr" } },
		{ LGP_SETTING_SEED, { "--seed", "seed" } },
	};
	char out[512];
	const char *env, *name, *at;
	size_t i;

	for (i = 0; i < sizeof(map) / sizeof(map[0]); i++) {
		env = lgp_setting_env(map[i].setting);
		name = map[i].name[names];
		/* each name at most once per message, in any case */
		at = strstr(err, env);
		if (!at)
			continue;
		snprintf(out, sizeof(out), "%.*s%s%s", (int)(at - err), err,
			 name, at + strlen(env));
		snprintf(err, errlen, "%s", out);
	}
}

struct wire_dist *wire_dist_new(const char *spec, const char *corr,
				const char *seed, enum wire_dist_names names,
				int *rc, char *err, size_t errlen)
{
	struct wire_dist *d = calloc(1, sizeof(*d));

	if (!d) {
		*rc = -ENOMEM;
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	if ((spec && strlen(spec) >= sizeof(d->spec)) ||
	    (corr && strlen(corr) >= sizeof(d->corr))) {
		int dist_long = spec && strlen(spec) >= sizeof(d->spec);

		snprintf(err, errlen, "bad value for %s: expected at most %zu "
			 "characters", dist_long ?
			 (names ? "latency_dist" : "--latency-dist") :
			 (names ? "latency_corr" : "--latency-corr"),
			 (dist_long ? sizeof(d->spec) : sizeof(d->corr)) - 1);
		free(d);
		*rc = -EINVAL;
		return NULL;
	}
	*rc = lgp_dist_config(&d->dist, spec, corr, seed, 0, err, errlen);
	if (*rc) {
		wire_dist_rename(err, errlen, names);
		free(d);
		return NULL;
	}
	if (lgp_dist_active(&d->dist))
		snprintf(d->spec, sizeof(d->spec), "%s", spec);
	if (corr)
		snprintf(d->corr, sizeof(d->corr), "%s", corr);
	d->seed = d->dist.seed;
	return d;
}

void wire_dist_free(struct wire_dist *d)
{
	if (!d)
		return;
	lgp_dist_fini(&d->dist);
	free(d);
}
