# Test programs of the C++ services: loggp_test_program and loggp_gtests.
find_package(GTest REQUIRED)
include(GoogleTest)

# A test program is compiled without optimisation or debug information: it checks
# logic (or plays a hostile client), and the code it tests is built optimised in
# the libraries it links.  At the build's -O2 -g a unit test's GoogleTest
# expansions took 23 s of CPU, at -O0 -g0 7.5 s (idle 2-core VM), and the test
# programs were a third of the whole build's compile time.
function(loggp_test_program target)
	target_compile_options(${target} PRIVATE -O0 -g0)
endfunction()

# loggp_gtests: the GoogleTest programs of one part of the tree, one program per
# concern (UNITS), each <unit>_test.cpp linked with LIBS and GTest's main, its
# cases registered with ctest as <PREFIX>_<Suite>.<Test>.  ENV: variables every
# case runs with.
function(loggp_gtests)
	cmake_parse_arguments(PARSE_ARGV 0 T "" "PREFIX" "UNITS;LIBS;ENV")
	set(properties)
	if(T_ENV)
		set(properties PROPERTIES ENVIRONMENT "${T_ENV}")
	endif()
	foreach(unit IN LISTS T_UNITS)
		set(target ${T_PREFIX}_${unit}_test)
		add_executable(${target} ${unit}_test.cpp)
		target_link_libraries(${target} PRIVATE ${T_LIBS} GTest::gtest_main)
		loggp_test_program(${target})
		gtest_discover_tests(${target} TEST_PREFIX ${T_PREFIX}_ DISCOVERY_TIMEOUT 60
				     ${properties})
	endforeach()
endfunction()
