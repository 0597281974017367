# Installs attnprop into a scratch prefix, then configures, builds and runs a tiny consumer
# that uses find_package(attnprop) and attnprop::attnprop.
file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR})
execute_process(COMMAND ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${WORK_DIR}/prefix
                RESULT_VARIABLE rc OUTPUT_QUIET)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "install failed (${rc})")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} -S ${SOURCE_DIR}/tests/consumer -B ${WORK_DIR}/build
                        -DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix -DCMAKE_BUILD_TYPE=Release
                RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "configuring the consumer failed (${rc})")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} --build ${WORK_DIR}/build -j2 RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "building the consumer failed (${rc})")
endif()
execute_process(COMMAND ${WORK_DIR}/build/consumer OUTPUT_VARIABLE out RESULT_VARIABLE rc)
if(NOT rc EQUAL 0 OR NOT out MATCHES "accept")
  message(FATAL_ERROR "the consumer failed (${rc}): ${out}")
endif()
message(STATUS "consumer output: ${out}")

# The PyTorch exporter is installed next to the models and finds the installed attnprop.
set(_py_dir ${WORK_DIR}/prefix/share/attnprop/python)
foreach(_f attnprop_torch/__init__.py attnprop_torch/export.py examples/parity.py)
  if(NOT EXISTS ${_py_dir}/${_f})
    message(FATAL_ERROR "not installed: share/attnprop/python/${_f}")
  endif()
endforeach()
if(NOT EXISTS ${WORK_DIR}/prefix/share/attnprop/models/cc-parity.json)
  message(FATAL_ERROR "not installed: share/attnprop/models/cc-parity.json")
endif()
if(PYTHON AND EXISTS ${PYTHON})
  execute_process(COMMAND ${CMAKE_COMMAND} -E env --unset=ATTNPROP PYTHONPATH=${_py_dir}
                          ${PYTHON} -c "import sys\ntry:\n import torch\nexcept ImportError:\n print('no torch'); sys.exit(0)\nfrom attnprop_torch.compare import find_attnprop\nprint(find_attnprop())"
                  OUTPUT_VARIABLE py_out RESULT_VARIABLE rc WORKING_DIRECTORY ${WORK_DIR})
  string(STRIP "${py_out}" py_out)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "importing the installed attnprop_torch failed (${rc}): ${py_out}")
  endif()
  if(NOT py_out STREQUAL "no torch" AND NOT py_out STREQUAL "${WORK_DIR}/prefix/bin/attnprop")
    message(FATAL_ERROR "the installed attnprop_torch found '${py_out}', not the installed attnprop")
  endif()
  message(STATUS "installed attnprop_torch finds: ${py_out}")
endif()
