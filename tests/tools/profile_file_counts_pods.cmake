# gpusched-sim's --profile-file replays let FillAwareRefill count the pods it sees (observeDemand,
# docs/adr/0017-quality-method.md "Amendment 7"; plugin_context::counts_pods). The profile below
# gives typical pods whose CPU per GPU (d = (4000 + 40000 + 60000) / 2000 = 52 CPUs per GPU) is far
# above the openb cluster's (17.2), so the configured workload takes the by-shape CPU term (GPU
# shapes at 4 and 40 CPUs per GPU, against their mean 22); the default trace's own pods
# (d/c = 0.83) settle the mean term once counted. So the file with the count on
# (its default in the replay) must replay differently from the same file with observeDemand: false,
# and as the same file with observeDemand: true:
#   cmake -DSIM=<gpusched-sim> -DPROFILE=<data/profiles/gpusched.yaml> -DWORK=<dir> -P profile_file_counts_pods.cmake
file(READ ${PROFILE} _base)
set(_pods "      typicalPods:\n      - {cpuMilli: 60000, share: 1}\n      - {cpuMilli: 4000, gpuMilli: 1000, numGpu: 1, share: 1}\n      - {cpuMilli: 40000, gpuMilli: 1000, numGpu: 1, share: 1}\n")
set(_results "")
foreach(_case default false true)
  set(_args "    args:\n${_pods}")
  if(NOT _case STREQUAL "default")
    set(_args "    args:\n      observeDemand: ${_case}\n${_pods}")
  endif()
  set(_file ${WORK}/counts_pods_${_case}.yaml)
  file(WRITE ${_file} "${_base}  pluginConfig:\n  - name: FillAwareRefill\n${_args}")
  set(_json ${WORK}/counts_pods_${_case}.json)
  execute_process(COMMAND ${SIM} --seeds 42 --jobs 1 -q --no-progress --profile-file ${_file} --output-json ${_json}
                  RESULT_VARIABLE _rc ERROR_VARIABLE _err TIMEOUT 60)
  if(NOT _rc STREQUAL "0")
    message(FATAL_ERROR "gpusched-sim --profile-file ${_file} failed (${_rc}): ${_err}")
  endif()
  file(READ ${_json} _j)
  string(JSON _u GET "${_j}" runs 0 unallocated_pct_at_tune)
  set(_result_${_case} "${_u}")
endforeach()
if(_result_default STREQUAL _result_false)
  message(FATAL_ERROR "the replay did not count pods: unallocated ${_result_default} % with the default and with observeDemand: false")
endif()
if(NOT _result_default STREQUAL _result_true)
  message(FATAL_ERROR "the replay's default (${_result_default} %) is not observeDemand: true (${_result_true} %)")
endif()
message(STATUS "unallocated %: counting ${_result_default}, not counting ${_result_false}")
