/*
 * layout.cpp: stripe arithmetic (layout.hpp).
 */
#include "layout.hpp"

#include <algorithm>
#include <cerrno>
#include <string>

#include "error.hpp"

namespace pfs {

std::vector<Chunk> layout_chunks(const Layout &l, uint64_t off, uint64_t len)
{
	std::vector<Chunk> out;
	const uint64_t ss = l.stripe_size, count = l.stripe_count;
	for (uint64_t done = 0; done < len;) {
		uint64_t pos = off + done;
		uint64_t unit = pos / ss, in = pos % ss;
		uint64_t n = std::min(len - done, ss - in);
		out.push_back(Chunk{static_cast<uint32_t>(unit % count), (unit / count) * ss + in,
				    done, n});
		done += n;
	}
	return out;
}

uint64_t layout_object_size(const Layout &l, uint32_t obj, uint64_t file_size)
{
	const uint64_t ss = l.stripe_size, count = l.stripe_count;
	uint64_t units = file_size / ss, tail = file_size % ss;
	/* Full units of this object, then its share of the partial unit. */
	uint64_t full = units / count + (obj < units % count ? 1 : 0);
	uint64_t size = full * ss;
	if (tail && units % count == obj)
		size += tail;
	return size;
}

uint64_t layout_file_end(const Layout &l, uint32_t obj, uint64_t obj_size)
{
	if (obj_size == 0)
		return 0;
	const uint64_t ss = l.stripe_size, count = l.stripe_count;
	uint64_t last = obj_size - 1;
	return ((last / ss) * count + obj) * ss + last % ss + 1;
}

void layout_validate(uint64_t stripe_size, uint32_t stripe_count, uint32_t nservers)
{
	if (stripe_size == 0 || stripe_size % kStripeUnit || stripe_size > kStripeMax)
		throw Error(EINVAL, "stripe size " + std::to_string(stripe_size) +
					    ": expected a positive multiple of 4096 up to " +
					    std::to_string(kStripeMax) + " bytes");
	if (stripe_count > nservers)
		throw Error(EINVAL, "stripe count " + std::to_string(stripe_count) +
					    ": expected 1 to " + std::to_string(nservers) +
					    " (the number of servers), or all");
}

} // namespace pfs
