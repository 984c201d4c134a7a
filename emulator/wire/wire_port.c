/* SPDX-License-Identifier: MIT */
/* Port and mbuf pool set-up (see wire_port.h). */
#include <errno.h>
#include <stdio.h>

#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>

#include "wire_fwd.h"
#include "wire_port.h"

#define WIRE_POOL_CACHE	256

struct rte_mempool *wire_pool_create(unsigned int nports, uint32_t capacity,
				     char *err, size_t errlen)
{
	uint64_t n = (uint64_t)nports * (capacity + 2 * WIRE_BURST) +
		     2 * WIRE_POOL_CACHE * rte_lcore_count() + 1024;
	struct rte_mempool *mp;

	mp = rte_pktmbuf_pool_create("wire_mbufs", (unsigned int)n,
				     WIRE_POOL_CACHE, 0,
				     RTE_MBUF_DEFAULT_BUF_SIZE,
				     rte_socket_id());
	if (!mp)
		snprintf(err, errlen, "cannot allocate %llu mbufs (about %llu "
			 "MiB) for %u ports x %u packets of delay line: %s; "
			 "raise the EAL -m option or lower --queue-capacity",
			 (unsigned long long)n,
			 (unsigned long long)(n * (RTE_MBUF_DEFAULT_BUF_SIZE +
						   256) >> 20) + 1,
			 nports, capacity, rte_strerror(rte_errno));
	return mp;
}

int wire_port_start(uint16_t port, struct rte_mempool *pool, char *err,
		    size_t errlen)
{
	struct rte_eth_conf conf = { 0 };
	struct rte_eth_dev_info info;
	uint16_t nb_rxd = WIRE_RX_DESC, nb_txd = WIRE_TX_DESC;
	const char *what;
	int rc;

	what = "get device info";
	rc = rte_eth_dev_info_get(port, &info);
	if (rc)
		goto err;
	what = "configure";
	rc = rte_eth_dev_configure(port, 1, 1, &conf);
	if (rc)
		goto err;
	what = "adjust descriptor counts";
	rc = rte_eth_dev_adjust_nb_rx_tx_desc(port, &nb_rxd, &nb_txd);
	if (rc)
		goto err;
	what = "set up the RX queue";
	rc = rte_eth_rx_queue_setup(port, 0, nb_rxd,
				    rte_eth_dev_socket_id(port), NULL, pool);
	if (rc)
		goto err;
	what = "set up the TX queue";
	rc = rte_eth_tx_queue_setup(port, 0, nb_txd,
				    rte_eth_dev_socket_id(port), NULL);
	if (rc)
		goto err;
	what = "start";
	rc = rte_eth_dev_start(port);
	if (rc)
		goto err;
	/* af_packet and most PMDs support it; a NIC that cannot is still
	 * usable when hosts address each other's real MACs. */
	rte_eth_promiscuous_enable(port);
	return 0;
err:
	snprintf(err, errlen, "port %u: cannot %s: %s", port, what,
		 rte_strerror(-rc));
	return rc < 0 ? rc : -EIO;
}

void wire_port_stop(uint16_t port)
{
	rte_eth_dev_stop(port);
	rte_eth_dev_close(port);
}
