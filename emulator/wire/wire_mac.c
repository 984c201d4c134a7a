/* SPDX-License-Identifier: MIT */
/* MAC learning table (see wire_mac.h). */
#include <string.h>

#include "wire_mac.h"

#define WIRE_MAC_USED	(1ULL << 63)

static uint64_t wire_mac_key(const uint8_t mac[6])
{
	uint64_t k = 0;
	int i;

	for (i = 0; i < 6; i++)
		k = (k << 8) | mac[i];
	return k | WIRE_MAC_USED;
}

static uint32_t wire_mac_home(uint64_t key)
{
	return (uint32_t)((key * 0x9e3779b97f4a7c15ULL) >> 52) &
	       (WIRE_MAC_SLOTS - 1);
}

void wire_mac_init(struct wire_mac_table *t)
{
	memset(t, 0, sizeof(*t));
}

void wire_mac_learn(struct wire_mac_table *t, const uint8_t mac[6],
		    uint16_t port)
{
	uint64_t key = wire_mac_key(mac);
	uint32_t home = wire_mac_home(key), i, s;

	if (wire_mac_is_group(mac))
		return;
	for (i = 0; i < WIRE_MAC_PROBE; i++) {
		s = (home + i) & (WIRE_MAC_SLOTS - 1);
		if (t->key[s] == key || !t->key[s]) {
			t->key[s] = key;
			t->port[s] = port;
			return;
		}
	}
	t->key[home] = key;
	t->port[home] = port;
}

int wire_mac_lookup(const struct wire_mac_table *t, const uint8_t mac[6])
{
	uint64_t key = wire_mac_key(mac);
	uint32_t home = wire_mac_home(key), i, s;

	for (i = 0; i < WIRE_MAC_PROBE; i++) {
		s = (home + i) & (WIRE_MAC_SLOTS - 1);
		if (t->key[s] == key)
			return t->port[s];
		if (!t->key[s])
			return -1;
	}
	return -1;
}
