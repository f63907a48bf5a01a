# The HIP backend (AMD GPUs): -DSHAPESCOPE_HIP=ON|OFF|AUTO (AUTO: when hipcc is found).
# Off by default: hipcc takes about a minute per file on the shared CI machines, and a CUDA
# machine has no use for it. kernels/hip/*.hip are compiled by hipcc for every target in
# SHAPESCOPE_HIP_ARCHITECTURES and linked into shapescope_kernels with libamdhip64; the
# ROCm SMI library (clocks, temperature, power) is used when found.
#
# Debian bookworm's HIP 5.2 (clang 15) knows gfx90a and gfx940 but not gfx942/gfx950, and has
# no hip-lang CMake package (so no enable_language(HIP)): hence hipcc through custom commands.
# On an MI300X with a current ROCm: -DSHAPESCOPE_HIP=ON -DSHAPESCOPE_HIP_ARCHITECTURES=gfx942.
# hipBLASLt (kernels/hip/hipblaslt/, the hipblaslt_bf16 baseline) is built when its CMake package
# is found (ROCm ships it; Debian does not), and left out, saying so, when not.
set(SHAPESCOPE_HIP OFF CACHE STRING "Build the HIP backend: ON, OFF or AUTO (when hipcc is found)")
set_property(CACHE SHAPESCOPE_HIP PROPERTY STRINGS ON OFF AUTO)
set(SHAPESCOPE_HIP_ARCHITECTURES "gfx90a;gfx940" CACHE STRING "hipcc --offload-arch targets (gfx942 on MI300X)")

# Sets shapescope_hip_enabled and, when enabled, shapescope_hip_objects (hipcc's), shapescope_hip_host_sources
# (host C++ of the backend: the hipBLASLt wrapper when found), shapescope_hip_include (the HIP headers' root)
# and shapescope_hip_libraries.
function(shapescope_configure_hip)
  string(TOUPPER "${SHAPESCOPE_HIP}" hip_mode)
  set(shapescope_hip_enabled OFF PARENT_SCOPE)
  if(hip_mode STREQUAL "OFF")
    return()
  endif()
  if(NOT hip_mode MATCHES "^(ON|AUTO)$")
    message(FATAL_ERROR "SHAPESCOPE_HIP=${SHAPESCOPE_HIP}: use ON, OFF or AUTO")
  endif()
  find_program(SHAPESCOPE_HIPCC hipcc HINTS /opt/rocm/bin)
  if(NOT SHAPESCOPE_HIPCC)
    if(hip_mode STREQUAL "ON")
      message(FATAL_ERROR "SHAPESCOPE_HIP=ON but no hipcc (install ROCm, or on Debian: scripts/setup.sh --hip)")
    endif()
    message(STATUS "HIP backend: off (AUTO found no hipcc)")
    return()
  endif()
  get_filename_component(hip_bin ${SHAPESCOPE_HIPCC} DIRECTORY)
  find_library(SHAPESCOPE_AMDHIP64 amdhip64 HINTS ${hip_bin}/../lib /opt/rocm/lib REQUIRED)
  find_library(SHAPESCOPE_ROCM_SMI rocm_smi64 HINTS ${hip_bin}/../lib /opt/rocm/lib)
  find_path(SHAPESCOPE_ROCM_SMI_INCLUDE rocm_smi/rocm_smi.h HINTS ${hip_bin}/../include /opt/rocm/include)
  set(libraries ${SHAPESCOPE_AMDHIP64})
  set(have_rocm_smi 0)
  if(SHAPESCOPE_ROCM_SMI AND SHAPESCOPE_ROCM_SMI_INCLUDE)
    set(have_rocm_smi 1)
    list(APPEND libraries ${SHAPESCOPE_ROCM_SMI})
  endif()

  file(GLOB sources CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/kernels/hip/*.hip)
  # GLOBAL: roc::hipblaslt reaches every target that links shapescope_kernels, in any folder.
  find_package(hipblaslt QUIET GLOBAL HINTS ${hip_bin}/.. /opt/rocm)
  set(have_hipblaslt 0)
  set(host_sources)
  if(hipblaslt_FOUND AND TARGET roc::hipblaslt)
    set(have_hipblaslt 1)
    # Host C++ (no device code), compiled by the project's compiler against the HIP headers.
    file(GLOB host_sources CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/kernels/hip/hipblaslt/*.cpp)
    set_source_files_properties(${host_sources} DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR} PROPERTIES
      COMPILE_DEFINITIONS "__HIP_PLATFORM_AMD__=1;SHAPESCOPE_HAVE_HIPBLASLT=1")
    list(APPEND libraries roc::hipblaslt)
    message(STATUS "hipBLASLt: found (${hipblaslt_DIR}); hipblaslt_bf16 is registered")
  else()
    message(STATUS "hipBLASLt: off (find_package(hipblaslt) found none); no hipblaslt_bf16 baseline")
  endif()

  set(flags -std=c++20 -O3 -fPIC -Wall -Wextra -Werror -DSHAPESCOPE_HAVE_ROCM_SMI=${have_rocm_smi}
            -DSHAPESCOPE_HAVE_HIPBLASLT=${have_hipblaslt} -I${PROJECT_SOURCE_DIR})
  if(have_rocm_smi)
    list(APPEND flags -I${SHAPESCOPE_ROCM_SMI_INCLUDE})
  endif()
  foreach(arch ${SHAPESCOPE_HIP_ARCHITECTURES})
    list(APPEND flags --offload-arch=${arch})
  endforeach()
  set(objects)
  foreach(source ${sources})
    get_filename_component(name ${source} NAME_WE)
    set(object ${CMAKE_CURRENT_BINARY_DIR}/hip/${name}.o)
    add_custom_command(
      OUTPUT ${object}
      COMMAND ${CMAKE_COMMAND} -E make_directory ${CMAKE_CURRENT_BINARY_DIR}/hip
      COMMAND ${SHAPESCOPE_HIPCC} ${flags} -MD -MF ${object}.d -c ${source} -o ${object}
      DEPENDS ${source}
      DEPFILE ${object}.d
      COMMENT "hipcc (${SHAPESCOPE_HIP_ARCHITECTURES}) ${name}.hip"
      VERBATIM)
    list(APPEND objects ${object})
  endforeach()
  # Just the HIP code objects (what scripts/hip_ci.sh compiles and inspects).
  add_custom_target(shapescope_hip_objects DEPENDS ${objects})
  message(STATUS "HIP backend: on (${SHAPESCOPE_HIPCC}, --offload-arch ${SHAPESCOPE_HIP_ARCHITECTURES}, "
                 "ROCm SMI ${have_rocm_smi}, hipBLASLt ${have_hipblaslt})")
  set(shapescope_hip_enabled ON PARENT_SCOPE)
  set(shapescope_hip_objects ${objects} PARENT_SCOPE)
  set(shapescope_hip_host_sources ${host_sources} PARENT_SCOPE)
  get_filename_component(hip_root ${hip_bin}/.. ABSOLUTE)  # /usr on Debian: its include folder is implicit
  set(shapescope_hip_include ${hip_root}/include PARENT_SCOPE)
  set(shapescope_hip_libraries ${libraries} PARENT_SCOPE)
endfunction()
