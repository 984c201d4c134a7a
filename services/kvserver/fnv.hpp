/*
 * fnv.hpp: 64-bit FNV-1a, the per-request CPU work of --hash-rounds.
 */
#pragma once

#include <cstdint>
#include <string_view>

namespace kvsrv {

constexpr uint64_t fnv_basis = 0xcbf29ce484222325ULL;

inline uint64_t fnv1a(std::string_view s, uint64_t h = fnv_basis)
{
	for (unsigned char c : s) {
		h ^= c;
		h *= 0x100000001b3ULL;
	}
	return h;
}

} // namespace kvsrv
