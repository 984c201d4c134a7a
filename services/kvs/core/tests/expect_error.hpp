// expect_error.hpp - test helper: run a statement, expect kvs::Error with a
// given errno and, optionally, a substring of its message.
#pragma once

#include "error.hpp"

#include <gtest/gtest.h>

#include <string>

#define EXPECT_KVS_ERROR(stmt, err, substr)                                                     \
	do {                                                                                    \
		try {                                                                           \
			stmt;                                                                   \
			ADD_FAILURE() << #stmt " did not throw; expected errno " << (err);      \
		} catch (const kvs::Error& e_) {                                                \
			EXPECT_EQ(e_.errnum(), (err)) << e_.what();                             \
			EXPECT_NE(std::string(e_.what()).find(substr), std::string::npos)       \
				<< "message: " << e_.what();                                    \
			EXPECT_EQ(std::string(e_.what()).find('\n'), std::string::npos)         \
				<< "message is not one line: " << e_.what();                    \
		}                                                                               \
	} while (0)
