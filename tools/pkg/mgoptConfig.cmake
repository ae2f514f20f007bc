# mgoptConfig.cmake — find_package(mgopt CONFIG) gives the INTERFACE target
# mgopt::mgopt: the include directory of mgopt.h / mgopt_passes.h, and libm.
# mgopt is header-only: define MGOPT_IMPLEMENTATION in one .c file of yours
# before including both headers.
include("${CMAKE_CURRENT_LIST_DIR}/mgoptTargets.cmake")
