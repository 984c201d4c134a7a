/* SPDX-License-Identifier: MIT */
/*
 * Ethernet port set-up for loggp-wire, as in DPDK's l2fwd: one RX and
 * one TX queue per port, promiscuous (the wire forwards frames for any
 * host), started and stopped here.  Errors are negative errno values
 * with one line in err.
 */
#ifndef WIRE_PORT_H
#define WIRE_PORT_H

#include <stddef.h>
#include <stdint.h>

#include <rte_mempool.h>

#define WIRE_RX_DESC	1024
#define WIRE_TX_DESC	1024

/*
 * The mbuf pool: every delay line full (nports x capacity packets), plus
 * an RX burst in hand per port and the per-lcore caches.  Returns NULL
 * with one line in err naming the memory needed.
 */
struct rte_mempool *wire_pool_create(unsigned int nports, uint32_t capacity,
				     char *err, size_t errlen);

int wire_port_start(uint16_t port, struct rte_mempool *pool, char *err,
		    size_t errlen);
void wire_port_stop(uint16_t port);

#endif /* WIRE_PORT_H */
