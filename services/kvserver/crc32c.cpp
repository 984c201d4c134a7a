/*
 * crc32c.cpp: CRC-32C in hardware or by table (crc32c.hpp).
 */
#include "crc32c.hpp"

#include <array>
#include <cstring>

#if defined(__x86_64__)
#include <nmmintrin.h>
#endif

namespace kvsrv {

namespace {

constexpr uint32_t poly = 0x82f63b78;	/* reflected Castagnoli polynomial */

constexpr std::array<uint32_t, 256> make_table()
{
	std::array<uint32_t, 256> t{};
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;
		for (int k = 0; k < 8; k++)
			c = c & 1 ? (c >> 1) ^ poly : c >> 1;
		t[i] = c;
	}
	return t;
}

constexpr auto table = make_table();

uint32_t by_table(const unsigned char *p, size_t n, uint32_t c)
{
	while (n--)
		c = table[(c ^ *p++) & 0xff] ^ (c >> 8);
	return c;
}

#if defined(__x86_64__)
__attribute__((target("sse4.2"))) uint32_t by_instruction(const unsigned char *p, size_t n,
							   uint32_t c)
{
	uint64_t c64 = c;
	for (; n >= 8; p += 8, n -= 8) {
		uint64_t v;
		std::memcpy(&v, p, 8);
		c64 = _mm_crc32_u64(c64, v);
	}
	c = static_cast<uint32_t>(c64);
	while (n--)
		c = _mm_crc32_u8(c, *p++);
	return c;
}

bool have_instruction()
{
	static const bool have = [] {
		__builtin_cpu_init();
		return __builtin_cpu_supports("sse4.2") != 0;
	}();
	return have;
}
#endif

} // namespace

uint32_t crc32c(std::string_view data, uint32_t crc)
{
	auto p = reinterpret_cast<const unsigned char *>(data.data());
	uint32_t c = ~crc;
#if defined(__x86_64__)
	if (have_instruction())
		return ~by_instruction(p, data.size(), c);
#endif
	return ~by_table(p, data.size(), c);
}

} // namespace kvsrv
