// layout_test.cpp - stripe arithmetic: chunks, object sizes, file ends.
#include "layout.hpp"

#include "error.hpp"

#include <gtest/gtest.h>

#include <cerrno>

using namespace pfs;

namespace {

Layout lay(uint64_t ss, uint32_t count, uint32_t start = 0)
{
	Layout l;
	l.stripe_size = ss;
	l.stripe_count = count;
	l.stripe_start = start;
	return l;
}

} // namespace

TEST(Layout, ChunksCutAtUnitsRoundRobin)
{
	Layout l = lay(4096, 3);
	auto c = layout_chunks(l, 4000, 4096 * 3);
	ASSERT_EQ(c.size(), 4u);
	EXPECT_EQ(c[0].obj, 0u);
	EXPECT_EQ(c[0].obj_off, 4000u);
	EXPECT_EQ(c[0].len, 96u);
	EXPECT_EQ(c[1].obj, 1u);
	EXPECT_EQ(c[1].obj_off, 0u);
	EXPECT_EQ(c[1].buf_off, 96u);
	EXPECT_EQ(c[3].obj, 0u);		/* unit 3 wraps to object 0, row 1 */
	EXPECT_EQ(c[3].obj_off, 4096u);
	EXPECT_EQ(c[3].len, 4000u);
	EXPECT_TRUE(layout_chunks(l, 5, 0).empty());
}

TEST(Layout, ObjectSizesAndFileEndsAgreeForEverySize)
{
	for (uint32_t count : {1u, 2u, 3u, 4u}) {
		Layout l = lay(4096, count, 1);
		for (uint64_t size = 0; size < 4096 * 9 + 10; size += 997) {
			uint64_t total = 0, end = 0;
			for (uint32_t j = 0; j < count; j++) {
				uint64_t z = layout_object_size(l, j, size);
				total += z;
				end = std::max(end, layout_file_end(l, j, z));
			}
			EXPECT_EQ(total, size) << count << " objects, size " << size;
			EXPECT_EQ(end, size) << count << " objects, size " << size;
		}
	}
	EXPECT_EQ(lay(4096, 2, 3).server_of(1, 4), 0u);
}

TEST(Layout, ValidateNamesTheBadValue)
{
	EXPECT_NO_THROW(layout_validate(1 << 20, 4, 4));
	EXPECT_NO_THROW(layout_validate(4096, 0, 4));
	try {
		layout_validate(0, 1, 4);
		FAIL();
	} catch (const Error &e) {
		EXPECT_EQ(e.errnum(), EINVAL);
		EXPECT_STREQ(e.what(), "stripe size 0: expected a positive multiple of 4096 up "
				       "to 67108864 bytes");
	}
	try {
		layout_validate(4096, 5, 4);
		FAIL();
	} catch (const Error &e) {
		EXPECT_STREQ(e.what(), "stripe count 5: expected 1 to 4 (the number of "
				       "servers), or all");
	}
	EXPECT_THROW(layout_validate(5000, 1, 4), Error);
	EXPECT_THROW(layout_validate(kStripeMax + 4096, 1, 4), Error);
}
