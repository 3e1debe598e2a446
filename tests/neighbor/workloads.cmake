# Workloads of the neighbor tests (H5; included by tests/neighbor/CMakeLists.txt):
#   unit_nb_workloads            Matrix Market reader (malformed files), generators; no launcher
#   neighbor_workloads_k<k>_np<n> every workload x every strategy (ext and plain init, the
#                                blocking call, MPI 4 init where available) bitwise against
#                                the generator's data and PMPI_Neighbor_alltoallv, on virtual
#                                nodes of k ranks
set(_nbw_dir ${CMAKE_CURRENT_SOURCE_DIR})
set_source_files_properties(${_nbw_dir}/workloads.c PROPERTIES
  COMPILE_DEFINITIONS NB_DATA_DIR="${_nbw_dir}/data")

add_executable(nb_workloads_unit workloads_unit.c workloads_mat.c)
target_link_libraries(nb_workloads_unit PRIVATE m)
add_test(NAME unit_nb_workloads COMMAND nb_workloads_unit)
math(EXPR _nbw_t "60 * ${MCOLL_TEST_TIMEOUT_SCALE}")
set_tests_properties(unit_nb_workloads PROPERTIES TIMEOUT ${_nbw_t}
  PASS_REGULAR_EXPRESSION "workloads_unit: ALL PASSED")

set(_nbw_src mcoll-neighbor-workloads.c workloads.c workloads_mat.c)
if(EXISTS ${_nbw_dir}/patterns.c)
  list(APPEND _nbw_src patterns.c) # nb_pattern_free
endif()
add_executable(mcoll-neighbor-workloads ${_nbw_src})
target_link_libraries(mcoll-neighbor-workloads PRIVATE mcoll m)
# MPI_UNWEIGHTED is a small integer cast to a pointer: gcc 12 flags the graph constructor
target_compile_options(mcoll-neighbor-workloads PRIVATE -Wno-stringop-overread)

# k:np pairs, regions of k ranks (k = 1: every rank its own region, all traffic inter-region)
if(MCOLL_MPI STREQUAL "mpich")
  set(_nbw_runs 1:2 2:3)
else()
  set(_nbw_runs 1:2 2:3 2:4 3:5 3:6 2:7 4:8)
endif()
foreach(run ${_nbw_runs})
  mcoll_unpack(${run} k np)
  mcoll_mpi_test(neighbor_workloads_k${k}_np${np} ${np} TIMEOUT 120 ENV MCOLL_VNODE_SIZE=${k}
    PASS "mcoll-neighbor-workloads: ALL PASSED" COMMAND $<TARGET_FILE:mcoll-neighbor-workloads>)
endforeach()
