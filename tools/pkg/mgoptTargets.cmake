# mgoptTargets.cmake — the target mgopt::mgopt, as `make install` writes it
# (the CMake build's install(EXPORT mgoptTargets) writes an equivalent file).
if(TARGET mgopt::mgopt)
  return()
endif()
get_filename_component(_mgopt_prefix "${CMAKE_CURRENT_LIST_DIR}/../../.." ABSOLUTE)
add_library(mgopt::mgopt INTERFACE IMPORTED)
set_target_properties(mgopt::mgopt PROPERTIES
  INTERFACE_INCLUDE_DIRECTORIES "${_mgopt_prefix}/include"
  INTERFACE_LINK_LIBRARIES "m")
unset(_mgopt_prefix)
