/* SPDX-License-Identifier: MIT */
/*
 * The control protocol and the documents built from the shared state:
 * request handling for the --control socket (newline-delimited JSON,
 * see README.md), the per-port JSON used by "get", "stats" and the exit
 * totals, and the Prometheus text exposition (format 0.0.4) of /metrics.
 *
 * Called from the control thread only (the single writer of knobs).
 * Every function appends to a wire_buf; the caller owns it.
 */
#ifndef WIRE_CTL_H
#define WIRE_CTL_H

#include <stddef.h>

#include "wire_buf.h"
#include "wire_state.h"

/*
 * Answer one request (one line, without its newline) with one line of
 * JSON, without newline: {"ok":true,...} or {"ok":false,"error":"..."}.
 */
void wire_ctl_handle(struct wire_state *st, const char *line, size_t len,
		     struct wire_buf *out);

/* [{"port":0,"name":...,"latency_ns":...}, ...] */
void wire_ctl_config_json(struct wire_state *st, struct wire_buf *b);
/* [{"port":0,"rx_pkts":...,"drops":{...},...}, ...] */
void wire_ctl_stats_json(struct wire_state *st, struct wire_buf *b);
/* {"mode":...,"ports":[stats]} printed and written at exit. */
void wire_ctl_totals_json(struct wire_state *st, struct wire_buf *b);
/* The body of GET /metrics. */
void wire_ctl_metrics(struct wire_state *st, struct wire_buf *b);

#endif /* WIRE_CTL_H */
