# Runs one command and checks how it ends; a ctest driver for the command-line tools
# (tools/CMakeLists.txt registers one test per case):
#   cmake -DARGS=<exe>|<arg>|... -DEXIT=0|error -DEXPECT=<regex> [-DREJECT=<regex>] [-DLIMIT=<seconds>] -P expect.cmake
# ARGS is '|'-separated (a ';' list does not survive add_test). EXIT=error wants a non-zero exit status;
# EXPECT must match stdout + stderr; REJECT, if given, must not. LIMIT (default 1 s) is the wall time
# the command may take: each case is a reproducer that used to hang or exhaust memory.
if(NOT DEFINED LIMIT)
  set(LIMIT 1)
endif()
string(REPLACE "|" ";" _cmd "${ARGS}")
string(TIMESTAMP _t0 "%s")
execute_process(COMMAND ${_cmd} RESULT_VARIABLE _rc OUTPUT_VARIABLE _out ERROR_VARIABLE _err TIMEOUT 10)
string(TIMESTAMP _t1 "%s")
set(_all "${_out}${_err}")
string(LENGTH "${_all}" _len)
if(_len GREATER 2000)
  string(SUBSTRING "${_all}" 0 2000 _shown)
  set(_shown "${_shown}... (${_len} characters)")
else()
  set(_shown "${_all}")
endif()
set(_what "command: ${_cmd}\nexit: ${_rc}\noutput:\n${_shown}")
if(EXIT STREQUAL "0")
  if(NOT _rc STREQUAL "0")
    message(FATAL_ERROR "expected exit 0\n${_what}")
  endif()
elseif(_rc STREQUAL "0" OR NOT _rc MATCHES "^[0-9]+$")
  # A timeout or a crash gives a text status, not a number.
  message(FATAL_ERROR "expected a non-zero exit status\n${_what}")
endif()
if(NOT _all MATCHES "${EXPECT}")
  message(FATAL_ERROR "output does not match '${EXPECT}'\n${_what}")
endif()
if(DEFINED REJECT AND _all MATCHES "${REJECT}")
  message(FATAL_ERROR "output matches '${REJECT}'\n${_what}")
endif()
# Whole seconds: a case that takes more than LIMIT + 1 s fails.
math(EXPR _took "${_t1} - ${_t0}")
if(_took GREATER LIMIT)
  message(FATAL_ERROR "took ${_took} s, more than ${LIMIT} s\n${_what}")
endif()
