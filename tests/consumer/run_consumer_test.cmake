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
  # The Python module attnprop when it was built and installed (it is then preferred), else the
  # installed binary.
  set(_module_dir ${_py_dir}/attnprop)
  if(EXISTS ${_module_dir}/__init__.py)
    set(_expected ${_module_dir})
  else()
    set(_expected ${WORK_DIR}/prefix/bin/attnprop)
  endif()
  if(NOT py_out STREQUAL "no torch" AND NOT py_out STREQUAL "${_expected}")
    message(FATAL_ERROR "the installed attnprop_torch found '${py_out}', not ${_expected}")
  endif()
  message(STATUS "installed attnprop_torch finds: ${py_out}")
  # The installed module finds the installed models by itself and evaluates one.
  if(EXISTS ${_module_dir}/__init__.py)
    execute_process(COMMAND ${CMAKE_COMMAND} -E env PYTHONPATH=${_py_dir}
                            ${PYTHON} -c "import attnprop\nm = attnprop.load('cc-parity')\nprint(m.source)\nprint(m.eval('0110', scalar='ball').probabilities[1])"
                    OUTPUT_VARIABLE py_out RESULT_VARIABLE rc WORKING_DIRECTORY ${WORK_DIR})
    string(FIND "${py_out}" "${WORK_DIR}/prefix/share/attnprop/models/cc-parity.json\n" _at)
    if(NOT rc EQUAL 0 OR NOT _at EQUAL 0 OR NOT py_out MATCHES "[+]/-")
      message(FATAL_ERROR "the installed module attnprop failed (${rc}): ${py_out}")
    endif()
    message(STATUS "installed module attnprop: ${py_out}")
  endif()
endif()
