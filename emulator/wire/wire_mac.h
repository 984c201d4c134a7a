/* SPDX-License-Identifier: MIT */
/*
 * MAC learning table of the switch mode: source address -> ingress port.
 * Open addressing with linear probing over a fixed power-of-two table;
 * a station that moves is re-learned on its next frame.  When a probe
 * run is full the home slot is overwritten (the evicted station is
 * flooded until it is learned again).  Only the forwarding lcore uses
 * the table.
 */
#ifndef WIRE_MAC_H
#define WIRE_MAC_H

#include <stdint.h>

#define WIRE_MAC_SLOTS	4096
#define WIRE_MAC_PROBE	16

struct wire_mac_table {
	uint64_t key[WIRE_MAC_SLOTS];	/* mac | WIRE_MAC_USED, 0 = empty */
	uint16_t port[WIRE_MAC_SLOTS];
};

void wire_mac_init(struct wire_mac_table *t);
/* Learn a unicast source address; group addresses are ignored. */
void wire_mac_learn(struct wire_mac_table *t, const uint8_t mac[6],
		    uint16_t port);
/* Port of a learned unicast address, or -1 (flood). */
int wire_mac_lookup(const struct wire_mac_table *t, const uint8_t mac[6]);
static inline int wire_mac_is_group(const uint8_t mac[6])
{
	return mac[0] & 1;
}

#endif /* WIRE_MAC_H */
