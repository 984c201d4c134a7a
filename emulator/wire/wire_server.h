/* SPDX-License-Identifier: MIT */
/*
 * The control thread: one plain pthread (not an lcore) that serves the
 * --control Unix socket (newline-delimited JSON, many clients, many
 * requests per connection) and the --metrics HTTP endpoint with poll().
 * It is the only writer of knobs (wire_state.h).  Sockets are bound in
 * wire_server_start() so that address errors are reported before the
 * ready line; the thread owns them until wire_server_stop(), which also
 * removes the control socket file.
 */
#ifndef WIRE_SERVER_H
#define WIRE_SERVER_H

#include <stddef.h>
#include <stdint.h>

#include "wire_state.h"

struct wire_server;

/*
 * control_path may be NULL (no control socket), metrics_host empty (no
 * metrics).  Returns 0 with *out set, or a negative errno with one line
 * in err.  The bound metrics port (useful with port 0) is in
 * *metrics_port_out when not NULL.
 */
int wire_server_start(struct wire_server **out, struct wire_state *st,
		      const char *control_path, const char *metrics_host,
		      uint16_t metrics_port, uint16_t *metrics_port_out,
		      char *err, size_t errlen);
void wire_server_stop(struct wire_server *srv);

#endif /* WIRE_SERVER_H */
