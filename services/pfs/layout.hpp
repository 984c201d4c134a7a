/*
 * layout.hpp: how a file's bytes are striped over the storage servers.
 *
 * A file of layout (stripe_size, stripe_count, stripe_start) has
 * stripe_count objects, object j on server (stripe_start + j) mod N, all
 * named by the file's inode number.  The file is cut into stripe units of
 * stripe_size bytes dealt round-robin: unit k lives in object k mod
 * stripe_count at object offset (k div stripe_count) * stripe_size.  This is
 * RAID-0 over objects, as Lustre, GPFS and BeeGFS stripe files.
 *
 * A file's size is not stored anywhere: it is the largest file offset any
 * object's last byte maps to (file_end()), so a write needs no metadata
 * round trip and stat() asks each object's server for its size (a glimpse).
 * Truncating a file to s truncates object j to object_size(j, s), which
 * keeps that rule true for s, including holes and s = 0.
 *
 * Pure arithmetic; validate() throws pfs::Error(EINVAL) with one line naming
 * the bad value and the accepted range.
 */
#pragma once

#include <cstdint>
#include <vector>

namespace pfs {

constexpr uint64_t kStripeUnit = 4096;		/* stripe sizes are multiples of this */
constexpr uint64_t kStripeMax = 64ULL << 20;	/* and at most this (one message) */
constexpr uint64_t kDefaultStripe = 1ULL << 20;

struct Layout {
	uint64_t stripe_size = kDefaultStripe;
	uint32_t stripe_count = 0;	/* 0: every server (resolved at create) */
	uint32_t stripe_start = 0;	/* the server of object 0 */

	uint32_t server_of(uint32_t obj, uint32_t nservers) const
	{
		return (stripe_start + obj) % nservers;
	}
};

/* One piece of a file range that lies in one stripe unit. */
struct Chunk {
	uint32_t obj;		/* object index 0..stripe_count-1 */
	uint64_t obj_off;	/* offset in the object */
	uint64_t buf_off;	/* offset from the start of the range */
	uint64_t len;
};

/* The range [off, off+len) cut at stripe-unit boundaries, in file order. */
std::vector<Chunk> layout_chunks(const Layout &l, uint64_t off, uint64_t len);
/* Bytes of a file of size file_size that object obj holds. */
uint64_t layout_object_size(const Layout &l, uint32_t obj, uint64_t file_size);
/* The file size implied by object obj having obj_size bytes. */
uint64_t layout_file_end(const Layout &l, uint32_t obj, uint64_t obj_size);
/*
 * Checks a requested layout against nservers; stripe_count 0 means every
 * server.  Throws Error(EINVAL): stripe size not a positive multiple of
 * 4 KiB up to 64 MiB, or a count above nservers.
 */
void layout_validate(uint64_t stripe_size, uint32_t stripe_count, uint32_t nservers);

} // namespace pfs
