/* SPDX-License-Identifier: MIT */
/*
 * Out-of-band TCP control socket between the two calibrate processes:
 * carries libfabric endpoint names, point descriptions, samples and
 * barriers.  Every call waits at most the timeout given at setup; on
 * failure it prints one line naming what failed and returns a negative
 * errno (-ETIMEDOUT, -ECONNRESET, ...).
 */
#ifndef CALIB_OOB_H
#define CALIB_OOB_H

#include <stddef.h>
#include <stdint.h>

struct calib_oob {
	int fd;
	int timeout_ms;
};

/* Listens on addr:port (addr NULL = any), accepts one peer, closes the listener. */
int calib_oob_serve(struct calib_oob *o, const char *addr, uint16_t port,
		    unsigned timeout_s);

/* Connects to host:port, retrying while the server is not yet listening. */
int calib_oob_connect(struct calib_oob *o, const char *host, uint16_t port,
		      unsigned timeout_s);

int calib_oob_send(struct calib_oob *o, const void *buf, size_t len);

/* Receives exactly len bytes. */
int calib_oob_recv(struct calib_oob *o, void *buf, size_t len);

/* Length-prefixed blobs; recv fails with -EMSGSIZE if the blob exceeds max. */
int calib_oob_send_blob(struct calib_oob *o, const void *buf, size_t len);
int calib_oob_recv_blob(struct calib_oob *o, void *buf, size_t max,
			size_t *len);

/* Both sides return once both have entered. */
int calib_oob_barrier(struct calib_oob *o);

void calib_oob_close(struct calib_oob *o);

#endif /* CALIB_OOB_H */
